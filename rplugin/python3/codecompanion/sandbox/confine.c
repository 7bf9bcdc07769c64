/*
 * codecompanion-confine: confine this process, then execute a command in it.
 *
 * The host prepares everything (a Landlock ruleset, the seccomp program, the cgroup, the list of
 * mounts) and starts this small program with vfork + exec, which costs far less than forking the
 * host and running Python before exec. It only makes prepared system calls:
 *
 *   codecompanion-confine RULESET PROCS FILTER ERR USERNS UID GID DROPCAPS
 *                         N (PATH FLAGS)*N  N DIR*N  N FILE*N  -- COMMAND ARGS...
 *
 * RULESET, PROCS (cgroup.procs, -1: none), FILTER (a pipe holding the BPF program, -1: none) and
 * ERR (where an exec failure's errno goes) are inherited file descriptors. Then the paths to bind
 * read-only (with the mount flags to keep), the folders to hide under an empty tmpfs and the
 * files to hide under /dev/null. Any failure before exec exits 126 and says why on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

static const int dropped_caps[] = {9,  12, 13, 16, 17, 19, 21, 22, 23,
                                   25, 27, 31, 32, 33, 34, 38, 39, 40};

static void fail(const char *what) {
  fprintf(stderr, "codecompanion sandbox: %s: %s\n", what, strerror(errno));
  _exit(126);
}

static int number(const char *text) { return (int)strtol(text, NULL, 10); }

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, strlen(text)) < 0)
    fail(path);
  close(fd);
}

static void map_ids(int uid, int gid) {
  char text[64];
  write_file("/proc/self/setgroups", "deny");
  snprintf(text, sizeof text, "%d %d 1", uid, uid);
  write_file("/proc/self/uid_map", text);
  snprintf(text, sizeof text, "%d %d 1", gid, gid);
  write_file("/proc/self/gid_map", text);
}

/* Enter a mount namespace and change the view; returns the index after the mount lists. */
static int mounts(char **argv, int at, int userns, int uid, int gid) {
  int binds = number(argv[at]);
  int dirs = number(argv[at + 1 + 2 * binds]);
  int files = number(argv[at + 2 + 2 * binds + dirs]);
  int end = at + 3 + 2 * binds + dirs + files;
  if (binds + dirs + files == 0)
    return end;
  if (unshare(CLONE_NEWNS | (userns ? CLONE_NEWUSER : 0)) != 0)
    fail("unshare");
  if (userns)
    map_ids(uid, gid);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    fail("private /");
  for (int i = 0; i < binds; i++) {
    const char *path = argv[at + 1 + 2 * i];
    unsigned long kept = (unsigned long)strtoul(argv[at + 2 + 2 * i], NULL, 10);
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0)
      fail("bind");
    if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, NULL) != 0)
      fail("read-only");
  }
  unsigned long hidden = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  for (int i = 0; i < dirs; i++)
    if (mount("none", argv[at + 2 + 2 * binds + i], "tmpfs", hidden, "size=4k,mode=0500") != 0)
      fail("hide");
  for (int i = 0; i < files; i++)
    if (mount("/dev/null", argv[at + 3 + 2 * binds + dirs + i], NULL, MS_BIND, NULL) != 0)
      fail("hide");
  return end;
}

static void load_filter(int fd) {
  static struct sock_filter program[512];
  ssize_t size = read(fd, program, sizeof program);
  if (size <= 0 || size % sizeof(struct sock_filter) != 0)
    fail("seccomp program");
  close(fd);
  struct sock_fprog fprog = {(unsigned short)(size / sizeof(struct sock_filter)), program};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0)
    fail("seccomp");
}

int main(int argc, char **argv) {
  if (argc < 14)
    return fprintf(stderr, "usage: see the top of confine.c\n"), 126;
  int ruleset = number(argv[1]), procs = number(argv[2]), filter = number(argv[3]);
  int err = number(argv[4]);
  int at = mounts(argv, 9, number(argv[5]), number(argv[6]), number(argv[7]));
  if (at >= argc || strcmp(argv[at], "--") != 0 || at + 1 >= argc)
    return fprintf(stderr, "codecompanion sandbox: no command\n"), 126;
  if (procs >= 0 && write(procs, "0", 1) != 1)
    fail("cgroup");
  if (procs >= 0)
    close(procs);
  if (number(argv[8]) && geteuid() == 0)
    for (size_t i = 0; i < sizeof dropped_caps / sizeof *dropped_caps; i++)
      prctl(PR_CAPBSET_DROP, dropped_caps[i], 0, 0, 0);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    fail("no_new_privs");
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
    fail("landlock");
  close(ruleset);
  if (filter >= 0)
    load_filter(filter);
  fcntl(err, F_SETFD, FD_CLOEXEC);
  execvp(argv[at + 1], argv + at + 1);
  int code = errno;
  if (write(err, &code, sizeof code) < 0)
    _exit(127);
  _exit(127);
}
