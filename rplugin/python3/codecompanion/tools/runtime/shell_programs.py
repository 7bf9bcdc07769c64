"""What common read-only programs do through their options: run other programs or write files.

`rg --pre`, `sed 'e cmd'`, `sort -o`, `tar -I`, `git grep -O`, `find -delete` and their kin turn
a program people allow as read-only into one that runs commands or writes files. This table
reads the arguments of those programs the way the program does (GNU option permutation and
long-option abbreviations included). A line using an option that runs something, or an option
the table does not know for a program whose options it lists in full, has no known program for
the rules; an option that writes makes the line one an allow rule does not cover.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .shell_parse import ShellWord

Kind = Literal["runs", "writes", "unknown"]


@dataclass(frozen=True)
class Effect:
    """One thing an option makes a program do beyond reading, and why the rules think so."""

    kind: Kind
    why: str


@dataclass(frozen=True)
class Spec:
    """A program's options: safe ones, those taking a value, and those that run or write.

    `complete` says the lists cover every option: anything else is unknown. Long names match
    their abbreviations as GNU getopt and git accept them.
    """

    flags: str = ""
    values: str = ""
    long_flags: frozenset[str] = frozenset()
    long_values: frozenset[str] = frozenset()
    runs: frozenset[str] = frozenset()  # letters and long names
    writes: frozenset[str] = frozenset()
    complete: bool = True
    optional: str = ""  # letters whose value, if any, is attached (`sed -i.bak`)


def _spec(flags: str, values: str, lf: str, lv: str, runs: str = "", writes: str = "", *,
          complete: bool = True, optional: str = "") -> Spec:  # fmt: skip
    return Spec(
        flags, values, frozenset(lf.split()), frozenset(lv.split()),
        frozenset(runs.split()), frozenset(writes.split()), complete, optional,
    )  # fmt: skip


@dataclass
class Scan:
    """What scanning the arguments found: effects, operands, and the values given to options."""

    effects: list[Effect] = field(default_factory=list)
    operands: list[ShellWord] = field(default_factory=list)
    values: list[tuple[str, str]] = field(default_factory=list)  # (option, value)
    flags: list[str] = field(default_factory=list)

    def add(self, kind: Kind, why: str) -> None:
        """Record one effect."""
        self.effects.append(Effect(kind, why))


def _long(name: str, spec: Spec, program: str, scan: Scan) -> bool | None:
    """Classify `--name`: True if it takes a value, False if not, None if it ends the scan."""
    everything = spec.long_flags | spec.long_values | spec.runs | spec.writes
    matches = {known for known in everything if known.startswith(name) and len(known) > 1}
    exact = {name} & everything
    chosen = exact or matches
    for kind, names in (("runs", spec.runs), ("writes", spec.writes)):
        hit = chosen & names
        if hit:
            scan.add(kind, f"`{program} --{sorted(hit)[0]}` {_VERB[kind]}")  # type: ignore[arg-type]
    if not chosen:
        if spec.complete:
            scan.add("unknown", f"`{program} --{name}` is an option the rules do not know")
        return False
    return bool(chosen & spec.long_values)


_VERB = {"runs": "runs other programs", "writes": "writes files", "unknown": "is not known"}


def _short(text: str, spec: Spec, program: str, scan: Scan) -> bool:
    """Classify a cluster `-abc`; True if its last letter takes the next word as its value."""
    for position, letter in enumerate(text[1:], start=1):
        for kind, names in (("runs", spec.runs), ("writes", spec.writes)):
            if letter in names:
                scan.add(kind, f"`{program} -{letter}` {_VERB[kind]}")  # type: ignore[arg-type]
        if letter in spec.optional:
            return False  # its value, if any, is the rest of the word
        if letter in spec.values:
            value = text[position + 1 :]
            if value:
                scan.values.append((letter, value))
            return not value
        if letter in spec.flags or letter in spec.runs or letter in spec.writes:
            scan.flags.append(letter)
        elif spec.complete:
            scan.add("unknown", f"`{program} -{letter}` is an option the rules do not know")
            return False
    return False


def scan(program: str, args: Sequence[ShellWord], spec: Spec) -> Scan:
    """Read `args` as GNU getopt does: options anywhere before `--`, values attached or next."""
    out = Scan()
    index, options = 0, True
    while index < len(args):
        word = args[index]
        index += 1
        if not word.known or word.glob:
            out.add("unknown", f"an argument of `{program}` the shell computes")
            continue
        text = word.text
        if not options or not text.startswith("-") or text == "-":
            out.operands.append(word)
            continue
        if text == "--":
            options = False
            continue
        if text.startswith("--"):
            name, equals, value = text[2:].partition("=")
            takes = _long(name, spec, program, out)
            if equals:
                out.values.append((name, value))
            elif not takes:
                out.flags.append(name)
            if equals or not takes:
                continue
        elif _short(text, spec, program, out):
            name = text[-1]
        else:
            continue
        if index < len(args):
            out.values.append((name, args[index].text))
            _shadow(args[index].text, spec, program, out)
            index += 1
    return out


def _shadow(value: str, spec: Spec, program: str, out: Scan) -> None:
    """A value that looks like an option also counts as one for what it runs or writes: the
    table may think an option takes a value where the program reads none."""
    if value.startswith("-") and len(value) > 1:
        seen = Scan()
        if value.startswith("--"):
            _long(value[2:].partition("=")[0], spec, program, seen)
        else:
            _short(value, spec, program, seen)
        out.effects += [effect for effect in seen.effects if effect.kind != "unknown"]


# --- the programs -------------------------------------------------------------------------

_SORT = _spec(
    "bdfgiMhnRrVcCmsuz", "ktTSo",
    "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting "
    "month-sort human-numeric-sort numeric-sort random-sort reverse version-sort merge stable "
    "unique zero-terminated debug help version check",
    "sort key field-separator temporary-directory buffer-size parallel random-source "
    "batch-size files0-from output compress-program",
    runs="compress-program", writes="o output",
)  # fmt: skip
_UNIQ = _spec(
    "cdDiuz", "fsw",
    "count repeated ignore-case unique zero-terminated help version",
    "all-repeated group skip-fields skip-chars check-chars",
)  # fmt: skip
_SED = _spec(
    "nrEsuz", "lef",
    "quiet silent regexp-extended separate unbuffered null-data posix sandbox debug "
    "follow-symlinks help version in-place",
    "line-length expression file",
    writes="i in-place", optional="i",
)  # fmt: skip
# ripgrep 13's options (`rg --help`, hidden negations included); `--pre` runs a program per file.
_RG = _spec(
    ".0HILNPSUVabcFhilnopqsuvwxz", "ABCEMTefgjmrt",
    "auto-hybrid-regex binary block-buffered byte-offset case-sensitive column count "
    "count-matches crlf debug files files-with-matches files-without-match fixed-strings follow "
    "glob-case-insensitive help heading hidden ignore ignore-case ignore-dot ignore-exclude "
    "ignore-file-case-insensitive ignore-files ignore-global ignore-messages ignore-parent "
    "ignore-vcs include-zero invert-match json line-buffered line-number line-regexp "
    "max-columns-preview messages mmap multiline multiline-dotall no-auto-hybrid-regex "
    "no-binary no-block-buffered no-column no-config no-context-separator no-crlf no-encoding "
    "no-filename no-fixed-strings no-follow no-glob-case-insensitive no-heading no-hidden "
    "no-ignore no-ignore-dot no-ignore-exclude no-ignore-file-case-insensitive no-ignore-files "
    "no-ignore-global no-ignore-messages no-ignore-parent no-ignore-vcs no-json "
    "no-line-buffered no-line-number no-max-columns-preview no-messages no-mmap no-multiline "
    "no-multiline-dotall no-one-file-system no-pcre2 no-pcre2-unicode no-pre no-require-git "
    "no-search-zip no-stats no-text no-trim no-unicode null null-data one-file-system "
    "only-matching passthru pcre2 pcre2-unicode pcre2-version pretty print0 quiet require-git "
    "search-zip smart-case stats text trace trim type-list unicode unrestricted version vimgrep "
    "with-filename word-regexp",
    "after-context before-context color colors context context-separator dfa-size-limit "
    "encoding engine field-context-separator field-match-separator file glob iglob ignore-file "
    "max-columns max-count max-depth max-filesize path-separator pre-glob regex-size-limit "
    "regexp replace sort sortr threads type type-add type-clear type-not",
    runs="pre hostname-bin",
)  # fmt: skip
# git grep's, and git log's, show's and diff's options (their man pages, git 2.39).
_GIT_GREP = _spec(
    "0123456789EFGHILPWachilnopqrvwz", "ABCefm",
    "all-match and basic-regexp break cached color column count exclude-standard "
    "extended-regexp files-with-matches files-without-match fixed-strings full-name "
    "function-context heading ignore-case invert-match line-number name-only no-color "
    "no-exclude-standard no-index no-recursive no-textconv not null only-matching "
    "open-files-in-pager or perl-regexp quiet recurse-submodules recursive show-function text "
    "textconv untracked word-regexp",
    "after-context before-context context max-count max-depth threads",
    runs="O open-files-in-pager", optional="O",
)  # fmt: skip
_GIT_LOG = _spec(
    "0123456789DEFPRWabcgimpstuwz", "GILOSUln",
    "cached staged merge-base no-index "
    "abbrev abbrev-commit all all-match alternate-refs ancestry-path author-date-order "
    "basic-regexp binary bisect boundary branches break-rewrites cc check cherry cherry-mark "
    "cherry-pick children clear-decorations color color-moved color-words combined-all-paths "
    "compact-summary cumulative date-order decorate dense diff-filter dirstat dirstat-by-file "
    "do-walk exclude-first-parent-only exclude-hidden exit-code expand-tabs ext-diff "
    "extended-regexp find-copies find-copies-harder find-renames first-parent fixed-strings "
    "follow full-diff full-history full-index function-context graph histogram ignore-all-space "
    "ignore-blank-lines ignore-cr-at-eol ignore-missing ignore-space-at-eol ignore-space-change "
    "ignore-submodules indent-heuristic invert-grep irreversible-delete ita-invisible-in-index "
    "left-only left-right log-size mailmap merge merges minimal name-only name-status "
    "no-abbrev-commit no-color no-color-moved no-color-moved-ws no-decorate no-diff-merges "
    "no-expand-tabs no-ext-diff no-indent-heuristic no-mailmap no-max-parents no-merges "
    "no-min-parents no-notes no-patch no-prefix no-relative no-rename-empty no-renames "
    "no-standard-notes no-textconv no-use-mailmap no-walk not notes numstat oneline parents "
    "patch patch-with-raw patch-with-stat patience perl-regexp pickaxe-all pickaxe-regex pretty "
    "quiet raw reflog regexp-ignore-case relative relative-date remerge-diff remotes "
    "remove-empty rename-empty reverse right-only shortstat show-linear-break show-notes "
    "show-pulls show-signature simplify-by-decoration simplify-merges single-worktree source "
    "sparse standard-notes stat stdin submodule summary tags text textconv topo-order "
    "use-mailmap walk-reflogs word-diff",
    "after anchored author before color-moved-ws committer date decorate-refs "
    "decorate-refs-exclude diff-algorithm diff-merges dst-prefix encoding exclude find-object "
    "format glob grep grep-reflog ignore-matching-lines inter-hunk-context line-prefix "
    "max-count max-parents min-parents output output-indicator-context output-indicator-new "
    "output-indicator-old rotate-to since since-as-filter skip skip-to src-prefix unified until "
    "word-diff-regex ws-error-highlight",
    writes="output", optional="BCMX",
)  # fmt: skip
_GIT_OTHER = _spec("o", "", "", "output output-directory", writes="output output-directory",
                   complete=False)  # fmt: skip
# git's own options before the subcommand: these name configuration or programs to run.
_GIT_STEERING = ("-c", "--config-env", "--exec-path")
# ...and those taking a value (the next word unless attached), then those taking none.
_GIT_VALUES = ("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix")
_GIT_FLAGS = ("-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects",
              "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
              "--icase-pathspecs", "--no-optional-locks", "--no-advice", "--list-cmds",
              "--version", "--help", "-h", "--html-path", "--man-path", "--info-path")  # fmt: skip


def _sed(args: Sequence[ShellWord]) -> list[Effect]:
    found = scan("sed", args, _SED)
    scripts = [value for option, value in found.values if option in ("e", "expression")]
    if any(option in ("f", "file") for option, _ in found.values):
        found.add("unknown", "`sed -f` runs a script the rules cannot see")
    if not scripts and not any(o in ("f", "file") for o, _ in found.values) and found.operands:
        scripts = [found.operands[0].text]
    for script in scripts:
        problem = sed_script_effect(script)
        if problem is not None:
            found.add(problem[0], f"a sed script that {problem[1]}")
    return found.effects


def sed_script_effect(script: str) -> tuple[Kind, str] | None:
    """("runs"|"writes"|"unknown", why) if a sed script can run commands or write files."""
    reader = _SedScript(script)
    try:
        return reader.read()
    except IndexError:
        return None  # ran off the end: sed itself rejects the script


class _SedScript:
    """GNU sed's script grammar, just enough to find the `e`, `w`, `W` commands and flags."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0

    def _skip(self, chars: str) -> None:
        while self.i < len(self.text) and self.text[self.i] in chars:
            self.i += 1

    def _delimited(self, delimiter: str) -> None:
        """Skip to past the next unescaped `delimiter` (in a regex or replacement)."""
        while self.text[self.i] != delimiter:
            self.i += 2 if self.text[self.i] == "\\" else 1
        self.i += 1

    def _rest_of_line(self) -> None:
        while self.i < len(self.text) and self.text[self.i] != "\n":
            self.i += 1

    def _address(self) -> None:
        self._skip(" \t")
        if self.i >= len(self.text):
            return
        char = self.text[self.i]
        if char == "/" or char == "\\":
            if char == "\\":
                self.i += 1
            delimiter = self.text[self.i]
            self.i += 1
            self._delimited(delimiter)
            self._skip("IM")
        else:
            self._skip("0123456789$~+")

    def read(self) -> tuple[Kind, str] | None:
        while True:
            self._skip(" \t\n;}")
            if self.i >= len(self.text):
                return None
            self._address()
            if self.i < len(self.text) and self.text[self.i] == ",":
                self.i += 1
                self._address()
            self._skip(" \t!")
            command = self.text[self.i] if self.i < len(self.text) else ""
            self.i += 1
            problem = self._command(command)
            if problem is not None:
                return problem

    def _command(self, command: str) -> tuple[Kind, str] | None:
        if command in ("e",):
            return ("runs", "runs commands (`e`)")
        if command in ("w", "W"):
            return ("writes", f"writes files (`{command}`)")
        if command in ("s", "y"):
            delimiter = self.text[self.i]
            self.i += 1
            self._delimited(delimiter)
            self._delimited(delimiter)
            if command == "s":
                start = self.i
                self._skip("gpiImMe0123456789w")
                flags = self.text[start : self.i]
                if "e" in flags:
                    return ("runs", "runs commands (`s///e`)")
                if "w" in flags:
                    return ("writes", "writes files (`s///w`)")
            return None
        if command in "aicrRbtTv:#":
            self._rest_of_line() if command in "aicrR:#" else self._skip_label()
            return None
        if command in "{=dDgGhHlnNpPqQxzF" or command == "":
            self._skip("0123456789 \t")
            return None
        return ("unknown", f"uses a command the rules do not know (`{command}`)")

    def _skip_label(self) -> None:
        while self.i < len(self.text) and self.text[self.i] not in ";\n}":
            self.i += 1


def _uniq(args: Sequence[ShellWord]) -> list[Effect]:
    found = scan("uniq", args, _UNIQ)
    if len(found.operands) >= 2:
        found.add("writes", "`uniq INPUT OUTPUT` writes its second file")
    return found.effects


def _sort(args: Sequence[ShellWord]) -> list[Effect]:
    return scan("sort", args, _SORT).effects


def _rg(args: Sequence[ShellWord]) -> list[Effect]:
    return scan("rg", args, _RG).effects


_XXD_FLAGS = "abCEeihpruduv"
_XXD_VALUES = "cglnosR"


def _xxd(args: Sequence[ShellWord]) -> list[Effect]:
    """xxd reads its options by their first letter (`-c`, `-cols`); a second file is output."""
    out, index, operands = Scan(), 0, 0
    while index < len(args):
        word = args[index]
        index += 1
        if not word.known or word.glob:
            out.add("unknown", "an argument of `xxd` the shell computes")
        elif word.text.startswith("-") and len(word.text) > 1 and operands == 0:
            letter = word.text[1]
            if letter in _XXD_VALUES:
                attached = word.text[2:]
                if not attached or attached.isalpha():
                    index += 1
            elif letter not in _XXD_FLAGS:
                out.add("unknown", f"`xxd {word.text}` is an option the rules do not know")
        else:
            operands += 1
    if operands >= 2:
        out.add("writes", "`xxd IN OUT` writes its second file")
    return out.effects


_FIND_WRITES = frozenset("-fprint -fprint0 -fprintf -fls -delete".split())
# Primaries and options taking one value; those taking none are listed after.
_FIND_VALUES = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime "
    "-mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -user -group -uid -gid -perm -links "
    "-inum -samefile -maxdepth -mindepth -printf -regextype -lname -ilname -fstype -used "
    "-context -files0-from -D -O".split()
)
_FIND_FLAGS = frozenset(
    "-nouser -nogroup -empty -executable -readable -writable -true -false -depth -prune -quit "
    "-print -print0 -ls -mount -xdev -follow -noleaf -ignore_readdir_race "
    "-noignore_readdir_race -daystart -warn -nowarn -not -and -or -a -o -H -L -P ( ) ! , "
    "-help --help -version --version".split()
)


def _find(args: Sequence[ShellWord]) -> list[Effect]:
    """find's primaries: writing ones, and unknown ones (`-exec` is read by the caller)."""
    out, index = Scan(), 0
    while index < len(args):
        word = args[index]
        index += 1
        text = word.text
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            while index < len(args) and args[index].text not in (";", "+"):
                index += 1
            index += 1
        elif not word.known:
            out.add("unknown", "an argument of `find` the shell computes")
        elif text in _FIND_WRITES:
            out.add("writes", f"`find {text}` writes or deletes files")
        elif text in _FIND_VALUES or text.startswith("-newer") and len(text) == 8:
            index += 1
        elif text.startswith("-") and text not in _FIND_FLAGS and len(text) > 1:
            out.add("unknown", f"`find {text}` is a primary the rules do not know")
    return out.effects


# GNU tar 1.34's options (`tar --help`): modes other than listing and comparing write, and
# these run programs: a compressor, a command per member or checkpoint, volume scripts, rsh.
_TAR = _spec(
    "?ABGJMOPRSUWZacdhijklmnoprstuvwxz", "CFHIKLNTVXbfg",
    "absolute-names acls anchored append auto-compress block-number bzip2 catenate "
    "check-device check-links clamp-mtime compare compress concatenate confirmation create "
    "delay-directory-restore delete dereference diff exclude-backups exclude-caches "
    "exclude-caches-all exclude-caches-under exclude-vcs exclude-vcs-ignores extract "
    "force-local full-time get gunzip gzip hard-dereference help ignore-case "
    "ignore-command-error ignore-failed-read ignore-zeros incremental interactive "
    "keep-directory-symlink keep-newer-files keep-old-files list lzip lzma lzop multi-volume "
    "no-acls no-anchored no-auto-compress no-check-device no-delay-directory-restore "
    "no-ignore-case no-ignore-command-error no-null no-overwrite-dir no-recursion "
    "no-same-owner no-same-permissions no-seek no-selinux no-unquote no-verbatim-files-from "
    "no-wildcards no-wildcards-match-slash no-xattrs null numeric-owner old-archive overwrite "
    "overwrite-dir portability posix preserve-order preserve-permissions read-full-records "
    "recursion recursive-unlink remove-files restrict same-order same-owner same-permissions "
    "seek selinux show-defaults show-omitted-dirs show-snapshot-field-ranges show-stored-names "
    "show-transformed-names skip-old-files sparse test-label to-stdout touch uncompress "
    "ungzip unlink-first unquote update usage utc verbatim-files-from verbose verify version "
    "wildcards wildcards-match-slash xattrs xz zstd occurrence one-top-level atime-preserve "
    "backup checkpoint totals",
    "add-file after-date blocking-factor checkpoint-action directory exclude exclude-from "
    "exclude-ignore exclude-ignore-recursive exclude-tag exclude-tag-all exclude-tag-under file "
    "files-from format group group-map hole-detection index-file info-script label level "
    "listed-incremental mode mtime new-volume-script newer newer-mtime no-quote-chars "
    "owner owner-map pax-option quote-chars quoting-style record-size rmt-command rsh-command "
    "sort sparse-version starting-file strip-components suffix tape-length to-command "
    "transform use-compress-program volno-file warning xattrs-exclude xattrs-include xform",
    runs="I F use-compress-program checkpoint-action to-command info-script new-volume-script "
    "rsh-command rmt-command",
    writes="x c r u A g extract get create append update catenate concatenate delete "
    "index-file listed-incremental volno-file backup remove-files",
)  # fmt: skip


def _tar(args: Sequence[ShellWord]) -> list[Effect]:
    """tar: its mode (only listing and comparing read), options that run programs, and an
    archive on another host (`-f host:file` runs a remote shell)."""
    found = scan("tar", _tar_words(args), _TAR)
    archives = [value for option, value in found.values if option == "f" or _is(option, "file")]
    local = any(_is(name, "force-local") for name in found.flags)
    if not local and any(":" in name for name in archives):
        found.add("runs", "`tar -f host:file` runs a remote shell")
    return found.effects


def _is(name: str, option: str) -> bool:
    """Whether `--name` is `--option` or an abbreviation of it as long as GNU getopt takes."""
    return len(name) > 2 and option.startswith(name)


def _tar_words(args: Sequence[ShellWord]) -> list[ShellWord]:
    """The arguments in getopt's form: the old bundled first word (`tar tfI x.tar prog`) gives
    each letter its own option, and each letter taking a value the next word in turn."""
    if not args or not args[0].known or args[0].text.startswith("-"):
        return list(args)
    words, rest = [], list(args[1:])
    for letter in args[0].text:
        words.append(ShellWord("-" + letter, True))
        if letter in _TAR.values and rest:
            words.append(rest.pop(0))
    return words + rest


def _git(args: Sequence[ShellWord]) -> list[Effect]:
    """git: options pointing it at other configuration, then the subcommand's own options."""
    out = Scan()
    index = _git_options(args, out)
    if index >= len(args):
        return out.effects
    subcommand, rest = args[index].text, args[index + 1 :]
    if subcommand in _GIT_SPECS:
        out.effects += scan(f"git {subcommand}", rest, _GIT_SPECS[subcommand]).effects
        if subcommand == "format-patch" and not any(w.text == "--stdout" for w in rest):
            out.add("writes", "`git format-patch` writes patch files")
    return out.effects


def _git_options(args: Sequence[ShellWord], out: Scan) -> int:
    """Read git's own options (before the subcommand) into `out`; the subcommand's index."""
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        word = args[index]
        name = word.text.partition("=")[0]
        attached = "=" in word.text or (name[:2] in ("-c", "-C") and len(name) > 2)
        if not word.known:
            out.add("unknown", "an argument of `git` the shell computes")
        elif name in _GIT_STEERING or name.startswith("-c"):
            out.add("runs", f"`git {name[:2] if name.startswith('-c') else name}` names "
                    "configuration or programs git runs")  # fmt: skip
        elif name in _GIT_VALUES or name.startswith("-C"):
            index += 0 if attached else 1
        elif name not in _GIT_FLAGS:
            out.add("unknown", f"`git {name}` is an option the rules do not know")
        index += 1
    return index


_GIT_SPECS = {
    "grep": _GIT_GREP, "diff": _GIT_LOG, "show": _GIT_LOG, "log": _GIT_LOG,
    "whatchanged": _GIT_LOG, "format-patch": _GIT_OTHER, "range-diff": _GIT_OTHER,
}  # fmt: skip

PROGRAMS: dict[str, Callable[[Sequence[ShellWord]], list[Effect]]] = {
    "sed": _sed,
    "sort": _sort,
    "uniq": _uniq,
    "rg": _rg,
    "xxd": _xxd,
    "find": _find,
    "tar": _tar,
    "git": _git,
}


def effects(program: str, args: Sequence[ShellWord]) -> list[Effect]:
    """What `program args` does beyond reading (empty: nothing the table knows of)."""
    check = PROGRAMS.get(program)
    return check(args) if check is not None else []
