/*
 * The one place where traceconv meets what differs between the systems it builds on
 * (Linux with glibc or musl, macOS, the BSDs): every other file is C11 and POSIX.1-2008
 * with XSI (-D_XOPEN_SOURCE=700, CMakeLists.txt) and calls these instead of a GNU or
 * Linux extension. compat.c uses the system's own call where there is one (faster, or
 * atomic where the fallback is not) and a portable fallback elsewhere, said there.
 * tests/cli/test_portability.py fails on a GNU- or Linux-only call or macro outside it.
 *
 * Compiled into the library (tci_* symbols: hidden in the shared library, made local in the
 * static one) and into each command (CMakeLists.txt, TC_CLI_COMMON), like utf8.c.
 */
#ifndef TC_COMPAT_H
#define TC_COMPAT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* memmem and memrchr: GNU (memmem is in macOS's and the BSDs' libc, memrchr is not). */
void *tci_memmem(const void *hay, size_t n, const void *needle, size_t m);
void *tci_memrchr(const void *s, int c, size_t n);

/* madvise's hints (a hint: nothing is said when it is not taken). DONTNEED gives a
 * private, unwritten file map's pages back now (they are read again on use): the readers
 * bound their memory with it. posix_madvise's POSIX_MADV_DONTNEED does nothing in glibc. */
typedef enum { TCI_ADVISE_SEQUENTIAL, TCI_ADVISE_RANDOM, TCI_ADVISE_DONTNEED } tci_advice;
void tci_advise(void *p, size_t len, tci_advice advice);

/* An anonymous private map of len bytes (MAP_ANONYMOUS, MAP_ANON on macOS), at `at`
 * replacing what is there (MAP_FIXED) when it is not NULL. MAP_FAILED on failure.
 * Async-signal-safe (guard.c calls it from its SIGBUS handler). */
void *tci_map_anon(void *at, size_t len, int prot);

/* asprintf (GNU and BSD, not POSIX): a malloc'd string; its length, or -1 (*out NULL). */
int tci_asprintf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* n random bytes from the system (getrandom, getentropy, else /dev/urandom); `wait`: may
 * block until the system's pool is ready. 0, or -1 when there are none to have. */
int tci_random_bytes(void *buf, size_t n, bool wait);

/* renameat(dirfd, from, dirfd, to) that fails with EEXIST when `to` exists (Linux's
 * renameat2 RENAME_NOREPLACE); -1 with errno EINVAL where the system or the file system has
 * no such rename: the caller links and unlinks instead. */
int tci_rename_noreplace(int dirfd, const char *from, const char *to);

/* An unnamed file in the directory dirfd, read-write, close-on-exec (O_TMPFILE); -1 with
 * errno EOPNOTSUPP where there is none: the caller makes a name and unlinks it. */
int tci_open_tmpfile(int dirfd);

/* The directory path (relative to at, AT_FDCWD or a directory), opened only to name files
 * in it (openat, fstat): O_PATH on Linux, which needs no read permission; O_RDONLY
 * elsewhere. Close-on-exec. */
int tci_open_dir(int at, const char *path);

/* A file's modification time: st_mtim (POSIX 2008), st_mtimespec on macOS. */
struct timespec tci_stat_mtime(const struct stat *st);

/* sigtimedwait(set, NULL, timeout) (not in macOS): a signal of set, pending and blocked,
 * taken; 0 when none came within timeout. */
int tci_sigwait_for(const sigset_t *set, const struct timespec *timeout);

/* A socket of family and type, close-on-exec and non-blocking (SOCK_CLOEXEC and
 * SOCK_NONBLOCK where there are, one call; fcntl elsewhere). -1 and errno on failure. */
int tci_socket(int family, int type);

/* poll's event for a peer that closed its end (Linux's POLLRDHUP), else 0 (POLLHUP and a
 * read of 0 bytes say it there). */
short tci_poll_rdhup(void);

/* The bytes written to a connected TCP socket that its peer has not acknowledged yet (sent
 * or not): Linux's SIOCOUTQ, macOS's SO_NWRITE, the BSDs' FIONWRITE; 0 where the system
 * cannot tell (serve's bound on a slow reader is then looser by its send buffer). */
size_t tci_socket_unsent(int fd);

/* A signal's abbreviation without "SIG" ("INT", "TERM"), NULL for one it does not know
 * (glibc's sigabbrev_np: 2.32 and later only). */
const char *tci_signal_abbrev(int sig);

/* Extended attributes of an open file (Linux's fgetxattr/fsetxattr; macOS's take a
 * position and options). -1 with errno ENOTSUP where there are none. */
ssize_t tci_fgetxattr(int fd, const char *name, void *value, size_t size);
int tci_fsetxattr(int fd, const char *name, const void *value, size_t size);

/* A name by which open() reaches the file open as fd (Linux's /proc/self/fd/N, /dev/fd/N
 * elsewhere), written to buf. */
void tci_fd_path(int fd, char *buf, size_t len);

/* The path of the running program, not NUL-terminated (as readlink): its length, or -1 when
 * the system does not say (Linux's /proc/self/exe; macOS's _NSGetExecutablePath). */
ssize_t tci_self_exe(char *buf, size_t len);

/* getnameinfo's buffer sizes (NI_MAXHOST and NI_MAXSERV are not POSIX). */
#define TCI_MAXHOST 1025
#define TCI_MAXSERV 32

#endif
