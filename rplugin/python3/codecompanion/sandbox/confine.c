/*
 * codecompanion-confine: a launcher started ahead of its command, which then confines itself
 * and executes it.
 *
 * The slow steps of starting a confined command are this program's exec, joining the chat's
 * cgroup (a migration waits for an RCU grace period) and entering a mount namespace; the host
 * starts one launcher per chat in advance, so they are done before the model asks for a command:
 *
 *   codecompanion-confine CTL PROCS NAMESPACE UID GID [RETIRED...]
 *
 * CTL is a Unix stream socket to the host, PROCS the chat's cgroup.procs open for writing (-1:
 * none), NAMESPACE 0 (none), 1 (a mount namespace) or 2 (one inside a user namespace, mapping
 * UID and GID to themselves). Then it says "ready ABI MOUNTS\n" on CTL (Landlock's ABI, and
 * whether the namespace was entered), closes the RETIRED descriptors (the host holds each
 * command's mount namespace until then: dropping the last hold on one waits for an RCU grace
 * period, which would otherwise delay the command's exit) and reads messages, each a 4-byte
 * length (host order) and that many bytes of NUL-terminated strings, the first naming it:
 *
 *   confine FLAGS FILTER FS NET SCOPED SIZE  N (PATH RIGHTS)*N  N (PATH KEEP)*N  N DIR*N
 *   N FILE*N
 *   run CWD FLAGS  N ENV*N  ARGV...
 *
 * "confine" comes first, usually long before the command: the launcher confines itself at once
 * (mounts, capabilities, Landlock, seccomp), so that only "run" is left when the command comes.
 * Its FLAGS: 2 drop root's dangerous capabilities. FILTER: the seccomp program in hex ("" none).
 * FS NET SCOPED SIZE: the Landlock ruleset's attribute and its size; then the paths granted
 * with their rights, the paths bound read-only (with the mount flags to keep), the folders
 * hidden under an empty tmpfs and the files hidden under /dev/null. "run" executes the command
 * in CWD with that environment (FLAGS 1: stdin from /dev/null); it is refused before "confine".
 * End of file on CTL (the host dropped it, or went away): it exits. Any failure before exec
 * exits 126 and says why on stderr; an exec failure's errno goes to CTL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LANDLOCK_CREATE_RULESET 444
#define LANDLOCK_ADD_RULE 445
#define LANDLOCK_RESTRICT_SELF 446
/* The rights that make sense on a file in a path-beneath rule. */
#define FILE_RIGHTS (1ULL | 2ULL | 4ULL | (1ULL << 14) | (1ULL << 15))

extern char **environ;

static const int dropped_caps[] = {9,  12, 13, 16, 17, 19, 21, 22, 23,
                                   25, 27, 31, 32, 33, 34, 38, 39, 40};

struct ruleset_attr {
  uint64_t fs, net, scoped;
};

struct path_beneath {
  uint64_t allowed;
  int32_t parent_fd;
} __attribute__((packed));

static int namespace_error;

static void fail(const char *what) {
  fprintf(stderr, "codecompanion sandbox: %s: %s\n", what, strerror(errno));
  _exit(126);
}

static void bad(const char *what) {
  fprintf(stderr, "codecompanion sandbox: %s\n", what);
  _exit(126);
}

static long number(const char *text) { return strtol(text, NULL, 10); }

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, strlen(text)) < 0)
    fail(path);
  close(fd);
}

/* Enter the namespace ahead of the command; 1 if it was entered. */
static int enter_namespace(int kind, int uid, int gid) {
  if (kind == 0)
    return 0;
  if (unshare(CLONE_NEWNS | (kind == 2 ? CLONE_NEWUSER : 0)) != 0) {
    namespace_error = errno;
    return 0;
  }
  if (kind == 2) {
    char text[64];
    write_file("/proc/self/setgroups", "deny");
    snprintf(text, sizeof text, "%d %d 1", uid, uid);
    write_file("/proc/self/uid_map", text);
    snprintf(text, sizeof text, "%d %d 1", gid, gid);
    write_file("/proc/self/gid_map", text);
  }
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    fail("private /");
  return 1;
}

static void read_all(int fd, char *buffer, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buffer + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      _exit(0); /* the host dropped this launcher */
    got += (size_t)n;
  }
}

/* The command's strings, read one after the other. */
struct fields {
  char **items;
  int count, at;
};

static char *next(struct fields *f) {
  if (f->at >= f->count)
    bad("the command's description is cut short");
  return f->items[f->at++];
}

static struct fields receive(int ctl) {
  uint32_t size;
  read_all(ctl, (char *)&size, sizeof size);
  char *data = malloc((size_t)size + 1);
  if (data == NULL)
    fail("memory");
  read_all(ctl, data, size);
  data[size] = '\0';
  struct fields f = {NULL, 0, 0};
  for (uint32_t i = 0; i < size; i++)
    f.count += data[i] == '\0';
  f.items = calloc((size_t)f.count + 1, sizeof *f.items);
  if (f.items == NULL)
    fail("memory");
  char *item = data;
  for (int i = 0; i < f.count; i++) {
    f.items[i] = item;
    item += strlen(item) + 1;
  }
  return f;
}

static void mounts(struct fields *f, int entered) {
  int binds = (int)number(next(f));
  if (binds > 0 && !entered)
    errno = namespace_error, fail("unshare");
  for (int i = 0; i < binds; i++) {
    const char *path = next(f);
    unsigned long kept = strtoul(next(f), NULL, 10);
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0)
      fail("bind");
    if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, NULL) != 0)
      fail("read-only");
  }
  unsigned long hidden = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  for (int group = 0; group < 2; group++) {
    int count = (int)number(next(f));
    if (count > 0 && !entered)
      errno = namespace_error, fail("unshare");
    for (int i = 0; i < count; i++) {
      const char *path = next(f);
      int done = group == 0 ? mount("none", path, "tmpfs", hidden, "size=4k,mode=0500")
                            : mount("/dev/null", path, NULL, MS_BIND, NULL);
      if (done != 0)
        fail("hide");
    }
  }
}

struct rules {
  struct ruleset_attr attr;
  size_t size;
  int count;
  char **items; /* PATH RIGHTS pairs */
};

static struct rules read_rules(struct fields *f) {
  struct rules r;
  r.attr.fs = strtoull(next(f), NULL, 10);
  r.attr.net = strtoull(next(f), NULL, 10);
  r.attr.scoped = strtoull(next(f), NULL, 10);
  r.size = (size_t)number(next(f));
  if (r.size > sizeof r.attr)
    bad("ruleset attribute too large");
  r.count = (int)number(next(f));
  if (r.count < 0 || r.count > (f->count - f->at) / 2)
    bad("the command's description is cut short");
  r.items = f->items + f->at;
  f->at += 2 * r.count;
  return r;
}

static int ruleset(const struct rules *r) {
  int fd = (int)syscall(LANDLOCK_CREATE_RULESET, &r->attr, r->size, 0);
  if (fd < 0)
    fail("landlock_create_ruleset");
  for (int i = 0; i < r->count; i++) {
    const char *path = r->items[2 * i];
    uint64_t rights = strtoull(r->items[2 * i + 1], NULL, 10);
    struct stat st;
    int parent = open(path, O_PATH | O_CLOEXEC);
    if (parent < 0)
      continue; /* gone since the host listed it */
    if (fstat(parent, &st) == 0 && !S_ISDIR(st.st_mode))
      rights &= FILE_RIGHTS;
    struct path_beneath rule = {rights, parent};
    if (syscall(LANDLOCK_ADD_RULE, fd, 1, &rule, 0) != 0)
      fail(path);
    close(parent);
  }
  return fd;
}

static int hex(char c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

static void load_filter(const char *text) {
  static struct sock_filter program[512];
  size_t size = strlen(text) / 2;
  if (size == 0 || size > sizeof program || size % sizeof(struct sock_filter) != 0)
    bad("seccomp program");
  unsigned char *bytes = (unsigned char *)program;
  for (size_t i = 0; i < size; i++)
    bytes[i] = (unsigned char)(hex(text[2 * i]) << 4 | hex(text[2 * i + 1]));
  struct sock_fprog fprog = {(unsigned short)(size / sizeof(struct sock_filter)), program};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0)
    fail("seccomp");
}

static void expect(struct fields *f, const char *kind) {
  if (strcmp(next(f), kind) != 0)
    bad("unexpected message");
}

/* Confine this process for whatever command comes next. */
static void confine(int ctl, int entered) {
  struct fields f = receive(ctl);
  expect(&f, "confine");
  long flags = number(next(&f));
  const char *filter = next(&f);
  struct rules granted = read_rules(&f);
  mounts(&f, entered);
  if ((flags & 2) && geteuid() == 0)
    for (size_t i = 0; i < sizeof dropped_caps / sizeof *dropped_caps; i++)
      prctl(PR_CAPBSET_DROP, dropped_caps[i], 0, 0, 0);
  int rules = ruleset(&granted);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    fail("no_new_privs");
  if (syscall(LANDLOCK_RESTRICT_SELF, rules, 0) != 0)
    fail("landlock");
  close(rules);
  if (filter[0] != '\0')
    load_filter(filter);
  free(f.items[0]); /* the message's data */
  free(f.items);
}

static void run(int ctl) {
  struct fields f = receive(ctl);
  expect(&f, "run");
  const char *cwd = next(&f);
  long flags = number(next(&f));
  if (flags & 1) {
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0)
      fail("/dev/null");
    close(null);
  }
  if (chdir(cwd) != 0)
    fail(cwd);
  int envs = (int)number(next(&f));
  if (envs < 0 || envs > f.count - f.at)
    bad("the command's description is cut short");
  char **env = calloc((size_t)envs + 1, sizeof *env);
  if (env == NULL)
    fail("memory");
  for (int i = 0; i < envs; i++)
    env[i] = next(&f);
  if (f.at >= f.count)
    bad("no command");
  char **argv = f.items + f.at; /* the rest, ended by the NULL after the last item */
  environ = env;
  execvp(argv[0], argv);
  int code = errno;
  if (write(ctl, &code, sizeof code) < 0)
    _exit(127);
  _exit(127);
}

int main(int argc, char **argv) {
  if (argc < 6)
    return fprintf(stderr, "usage: see the top of confine.c\n"), 126;
  int ctl = (int)number(argv[1]), procs = (int)number(argv[2]);
  fcntl(ctl, F_SETFD, FD_CLOEXEC);
  if (procs >= 0 && write(procs, "0", 1) != 1)
    fail("cgroup");
  if (procs >= 0)
    close(procs);
  int entered = enter_namespace((int)number(argv[3]), (int)number(argv[4]), (int)number(argv[5]));
  long abi = syscall(LANDLOCK_CREATE_RULESET, NULL, 0, 1);
  char ready[64];
  int length = snprintf(ready, sizeof ready, "ready %ld %d\n", abi > 0 ? abi : 0, entered);
  if (write(ctl, ready, (size_t)length) != length)
    _exit(0);
  for (int i = 6; i < argc; i++)
    close((int)number(argv[i]));
  confine(ctl, entered);
  run(ctl);
  return 127;
}
