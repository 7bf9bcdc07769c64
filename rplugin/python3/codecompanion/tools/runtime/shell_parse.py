"""A conservative reader of POSIX shell lines: simple commands as words, and what it cannot see.

It splits a line the way `sh` does (quotes, backslashes, operators, redirections, `$(...)`,
backticks, `${...}`) into simple commands, each a list of words with quotes removed. A word
that the shell would expand (parameters, substitutions, arithmetic, `$'...'`) is marked
`known=False`; unquoted glob or brace characters mark it `glob`. Everything the reader cannot
be sure about (substitutions, line continuations, here-documents and here-strings, function
definitions, `case`, unbalanced quotes) is listed in `ParsedLine.doubts`. Commands inside `$(...)`,
backticks and `<(...)` are read too and returned with the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BLANK = " \t"
_META = " \t\n;&|()<>"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL_PARAMETERS = "@*#?$!-0123456789"
EXPANDED = "\x00"  # in Word.pattern: text the shell substitutes (a variable, a substitution)
# A `${...}` whose value is a variable's, or the variable's with a pattern or default that
# expands nothing: anything else (`${!x}`, `${x@P}`, `${a[i]}`, `${x:1}`, `${x:-$(cmd)}`) can
# make bash run commands or evaluate arithmetic on a variable's text.
_PLAIN_PARAMETER = re.compile(
    r"#?(?:[A-Za-z_][A-Za-z0-9_]*|[@*#?$!0-9-])"
    r"|[A-Za-z_][A-Za-z0-9_]*(?::?[-=+?]|##?|%%?|//?|/#|/%|\^\^?|,,?)[^$`\[\]]*"
)
# Redirection operators at a word start, longest first; an fd number may come before them.
_REDIRECT = re.compile(r"(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(<<<|<<-|<<|<>|<&|>>|>&|>\||&>>|&>|<|>)")
MAX_DEPTH = 6
MAX_LINE = 100_000  # characters; a longer line is not read at all (it is uncertain)


@dataclass(frozen=True)
class ShellWord:
    """One word with quotes removed; `known` False if the shell would expand part of it."""

    text: str
    known: bool = True
    glob: bool = False
    # The names the word could stand for, as an fnmatch pattern: quoted characters escaped,
    # unquoted glob and brace characters kept, and EXPANDED where the shell substitutes text.
    pattern: str = ""


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: its words (redirections left out), and whether stdin is a pipe."""

    words: tuple[ShellWord, ...]
    piped: bool = False


@dataclass
class ParsedLine:
    """Every simple command of a line (nested ones too), and the doubts about the line."""

    commands: list[SimpleCommand] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    redirects: bool = False
    targets: list[ShellWord] = field(default_factory=list)  # the files redirections name
    writes: list[str] = field(default_factory=list)  # options that make a program write files

    def doubt(self, reason: str) -> None:
        """Note something the reader cannot see through (once per reason)."""
        if reason not in self.doubts:
            self.doubts.append(reason)


class _Reader:
    """A recursive-descent reader over one string; results go into a shared `ParsedLine`."""

    def __init__(self, text: str, out: ParsedLine, depth: int) -> None:
        self.text, self.out, self.depth, self.i = text, out, depth, 0
        self.ansi: str | None = None  # the text of the last $'...' read

    def peek(self, offset: int = 0) -> str:
        index = self.i + offset
        return self.text[index] if index < len(self.text) else ""

    def read_list(self, closer: str = "") -> None:
        """Read commands until `closer` (consumed) or the end of the text."""
        words: list[ShellWord] = []
        piped = False
        while self.i < len(self.text):
            char = self.peek()
            if char in _BLANK:
                self.i += 1
            elif char == "\\" and self.peek(1) == "\n":
                self.out.doubt("a line continuation")
                self.i += 2
            elif char == "#" and not words:
                while self.i < len(self.text) and self.peek() != "\n":
                    self.i += 1
            elif closer and char == closer:
                self.i += 1
                break
            elif self._redirect():
                continue
            elif char in ";&|\n()":
                piped = self._operator(words, piped)
                words = []
            else:
                words.append(self.read_word())
        else:
            if closer:
                self.out.doubt(f"an unclosed {closer!r}")
        self._finish(words, piped)

    def _finish(self, words: list[ShellWord], piped: bool) -> None:
        if words:
            self.out.commands.append(SimpleCommand(tuple(words), piped))

    def _operator(self, words: list[ShellWord], piped: bool) -> bool:
        """Handle one control operator after `words`; True if the next command reads a pipe."""
        char, following = self.peek(), self.peek(1)
        if char == "(" and following == ")" or (char == "(" and words):
            self.out.doubt("a function definition")
        elif char == "(" and following == "(":
            self.out.doubt("an arithmetic command (bash evaluates names and subscripts in it)")
        self._finish(words, piped)
        if char in "&|" and following == char:  # && and ||
            self.i += 2
            return False
        if char == ";" and following == ";":
            self.i += 2
            return False
        self.i += 2 if (char == "|" and following == "&") else 1
        return char == "|"

    def _redirect(self) -> bool:
        """Consume a redirection and its target word, if one starts here."""
        match = _REDIRECT.match(self.text, self.i)
        if match is None:
            return False
        operator = match.group(2)
        if operator.startswith("&") and match.group(1):
            return False
        self.out.redirects = True
        if operator in ("<", ">") and self.peek(match.end() - self.i) == "(":
            self.out.doubt("a process substitution")
            self.i = match.end() + 1
            _Reader.nested(self, ")")
            return True
        self.i = match.end()
        if operator == "<<<":
            self.out.doubt("a here-string")
        elif operator.startswith("<<"):
            self.out.doubt("a here-document")
        while self.peek() in _BLANK and self.peek():
            self.i += 1
        if self.peek() and self.peek() not in _META:
            self.out.targets.append(self.read_word())
        return True

    def nested(self, closer: str) -> None:
        """Read a nested command list (`$(...)`, `<(...)`) into the same result.

        Past MAX_DEPTH the text is skipped to its closing parenthesis, not read: it stands for
        a command nobody can know.
        """
        if self.depth >= MAX_DEPTH:
            self.out.doubt("nesting too deep")
            self.out.commands.append(SimpleCommand((ShellWord("$(...)", known=False),)))
            level = 1
            while self.i < len(self.text) and level:
                level += {"(": 1, ")": -1}.get(self.peek(), 0)
                self.i += 1
            return
        inner = _Reader(self.text, self.out, self.depth + 1)
        inner.i = self.i
        inner.read_list(closer)
        self.i = inner.i

    def read_word(self) -> ShellWord:
        """One word up to an unquoted blank or operator."""
        parts: list[str] = []
        bare: list[str] = []  # the unquoted characters, where globs and braces take effect
        pattern: list[str] = []
        known = True
        while self.i < len(self.text):
            char = self.peek()
            if char in _META:
                break
            before = len(parts)
            if char == "\\" or char == "'":
                self._escaped(parts) if char == "\\" else self._single_quoted(parts)
                pattern.append(literal_pattern("".join(parts[before:])))
            elif char == '"' or (char == "$" and self.peek(1) == '"'):
                known = self._double_quoted(parts, pattern) and known
            elif char == "$" or char == "`":
                known = self._dollar(parts, pattern) and known
            else:
                bare.append(char)
                parts.append(char)
                pattern.append(char)
                self.i += 1
        return ShellWord("".join(parts), known, expands(bare), "".join(pattern))

    def _escaped(self, parts: list[str]) -> None:
        """A backslash and the character it quotes (a line continuation is doubted)."""
        if self.peek(1) == "\n":
            self.out.doubt("a line continuation")
        else:
            parts.append(self.peek(1))
        self.i += 2

    def _single_quoted(self, parts: list[str]) -> None:
        end = self.text.find("'", self.i + 1)
        if end < 0:
            self.out.doubt("an unbalanced quote")
            end = len(self.text)
        parts.append(self.text[self.i + 1 : end])
        self.i = end + 1

    def _double_quoted(self, parts: list[str], pattern: list[str]) -> bool:
        """`"..."`, or bash's `$"..."` (a translation, unknown until it runs); False if it
        expands."""
        before = len(parts)
        translated = self.peek() == "$"
        self.i += 2 if translated else 1
        expanded = not self._doubleliteral_pattern(parts) or translated
        pattern.append(EXPANDED if expanded else literal_pattern("".join(parts[before:])))
        return not expanded

    def _dollar(self, parts: list[str], pattern: list[str]) -> bool:
        """A `$...` or backtick expansion; False unless it was a literal `$`."""
        before = len(parts)
        self.ansi = None
        known = self._expansion(parts)
        literal = parts[before:] == ["$"]
        ansi = None if self.ansi is None else literal_pattern(self.ansi)
        pattern.append("$" if literal else ansi or EXPANDED)
        return known

    def _doubleliteral_pattern(self, parts: list[str]) -> bool:
        """Read up to the closing `"`; False if something inside expands."""
        known = True
        while self.i < len(self.text):
            char = self.peek()
            if char == '"':
                self.i += 1
                return known
            if char == "\\" and self.peek(1) in '$`"\\\n':
                if self.peek(1) == "\n":
                    self.out.doubt("a line continuation")
                else:
                    parts.append(self.peek(1))
                self.i += 2
            elif char in "$`":
                known = self._expansion(parts) and known
            else:
                parts.append(char)
                self.i += 1
        self.out.doubt("an unbalanced quote")
        return known

    def _expansion(self, parts: list[str]) -> bool:
        """Read one `$...` or backtick expansion; False unless it was a literal `$`."""
        char, following = self.peek(), self.peek(1)
        if char == "`":
            self.out.doubt("a command substitution")
            end = self.i + 1
            while end < len(self.text) and self.text[end] != "`":
                end += 2 if self.text[end] == "\\" else 1
            inner = re.sub(r"\\([`$\\])", r"\1", self.text[self.i + 1 : end])
            if self.depth >= MAX_DEPTH:
                self.out.doubt("nesting too deep")
                self.out.commands.append(SimpleCommand((ShellWord("`...`", known=False),)))
            else:
                _Reader(inner, self.out, self.depth + 1).read_list()
            self.i = end + 1
            parts.append("`...`")
            return False
        if following == "(":
            self.i += 2
            if self.peek() == "(":
                self.out.doubt("an arithmetic expansion")
            else:
                self.out.doubt("a command substitution")
            self.nested(")")
            parts.append("$(...)")
            return False
        if following in "{[" and following:
            self._parameter(parts) if following == "{" else self._old_arithmetic(parts)
            return False
        if following == "'":
            self.i += 1
            self.ansi = ansi_c(self.read_word_quote_ansi())
            parts.append("$'...'")
            return False
        name = _NAME.match(self.text, self.i + 1)
        if name is not None:
            self.i = name.end()
        elif following and following in _SPECIAL_PARAMETERS:
            self.i += 2
        else:
            parts.append("$")
            self.i += 1
            return True
        parts.append("$...")
        return False

    def _parameter(self, parts: list[str]) -> None:
        """`${...}`: a plain one is a variable's value; others are commands nobody can know."""
        depth, start = 1, self.i + 2
        self.i = start
        while self.i < len(self.text) and depth:
            depth += {"{": 1, "}": -1}.get(self.peek(), 0)
            self.i += 1
        if not _PLAIN_PARAMETER.fullmatch(self.text[start : self.i - 1]):
            self.out.doubt("a parameter expansion the rules cannot follow")
            self.out.commands.append(SimpleCommand((ShellWord("${...}", known=False),)))
        parts.append("${...}")

    def _old_arithmetic(self, parts: list[str]) -> None:
        """bash's `$[...]`: arithmetic, which evaluates names and subscripts."""
        self.out.doubt("an arithmetic expansion")
        self.out.commands.append(SimpleCommand((ShellWord("$[...]", known=False),)))
        end = self.text.find("]", self.i)
        self.i = len(self.text) if end < 0 else end + 1
        parts.append("$[...]")

    def read_word_quote_ansi(self) -> str:
        """Skip a `'...'` whose backslashes escape (the part after `$` of `$'...'`); its body."""
        self.i += 1
        start = self.i
        while self.i < len(self.text) and self.peek() != "'":
            self.i += 2 if self.peek() == "\\" else 1
        self.i += 1
        return self.text[start : self.i - 1]


_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)"
)
_ANSI_NAMED = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
               "r": "\r", "t": "\t", "v": "\v"}  # fmt: skip


def ansi_c(body: str) -> str:
    """The text bash makes of `$'body'` (escapes decoded), as far as names are concerned."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1].upper()) & 0x1F)
        return _ANSI_NAMED.get(code, code)

    return _ANSI_ESCAPE.sub(one, body)


def literal_pattern(text: str) -> str:
    """`text` as a pattern that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[]{}," else c for c in text)


def expands(bare: list[str]) -> bool:
    """True if these unquoted characters make the shell expand a word (globs, braces).

    Linear on purpose: the model writes these words.
    """
    text = "".join(bare)
    if "*" in text or "?" in text:
        return True
    opening = text.find("[")
    if opening >= 0 and "]" in text[opening + 1 :]:
        return True
    opening = text.find("{")
    closing = text.rfind("}")
    inside = text[opening + 1 : closing] if 0 <= opening < closing else ""
    return "," in inside or ".." in inside


def parse(line: str, depth: int = 0) -> ParsedLine:
    """Read `line`; nested command lists are read at `depth + 1`."""
    out = ParsedLine()
    if len(line) > MAX_LINE:
        out.doubt(f"a line longer than {MAX_LINE} characters")
        out.commands.append(SimpleCommand((ShellWord(line[:80], known=False),)))
        return out
    _Reader(line, out, depth).read_list()
    return out
