/*
 * The system-specific calls behind tc_compat.h: the system's own where it has one, a
 * portable fallback elsewhere. The only file of src/ that asks for more than POSIX + XSI
 * (tests/cli/test_portability.py): _GNU_SOURCE (glibc, musl: memmem, memrchr, madvise,
 * MAP_ANONYMOUS, renameat2, O_TMPFILE, O_PATH, POLLRDHUP, sigabbrev_np) and, on macOS,
 * _DARWIN_C_SOURCE (madvise, MAP_ANON, memmem; CMakeLists.txt defines it for every file there).
 */
#undef _XOPEN_SOURCE
#undef _POSIX_C_SOURCE
#define _GNU_SOURCE
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE
#endif
#include "tc_compat.h"

/* The systems whose own calls are used. TCI_PORTABLE (tests/unit/compat.c's second build)
 * takes every portable fallback instead, so that they run and are checked on Linux too. */
#if defined(__linux__) && !defined(TCI_PORTABLE)
#define TCI_LINUX 1
#else
#define TCI_LINUX 0
#endif
#if defined(__APPLE__) && !defined(TCI_PORTABLE)
#define TCI_APPLE 1
#else
#define TCI_APPLE 0
#endif
#if (defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)) && !defined(TCI_PORTABLE)
#define TCI_BSD 1
#else
#define TCI_BSD 0
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#if TCI_LINUX
#include <sys/random.h> /* getrandom: glibc 2.25, musl 1.1.20, bionic 28 */
#include <sys/xattr.h>
#elif TCI_APPLE
#include <mach-o/dyld.h> /* _NSGetExecutablePath */
#include <sys/random.h> /* getentropy */
#include <sys/xattr.h>
#endif

void *tci_memmem(const void *hay, size_t n, const void *needle, size_t m)
{
#if TCI_LINUX || TCI_APPLE || TCI_BSD
    return memmem(hay, n, needle, m); /* glibc's is two-way, linear in n */
#else
    /* the first byte found by memchr, the rest compared: quadratic only on inputs made to be */
    const unsigned char *h = hay, *end = h + n;
    if (m == 0)
        return (void *)h;
    for (const unsigned char *p = h; m <= (size_t)(end - p); p++) {
        p = memchr(p, *(const unsigned char *)needle, (size_t)(end - p) - m + 1);
        if (!p)
            return NULL;
        if (!memcmp(p, needle, m))
            return (void *)p;
    }
    return NULL;
#endif
}

void *tci_memrchr(const void *s, int c, size_t n)
{
#if TCI_LINUX || TCI_BSD
    return memrchr(s, c, n);
#else /* macOS has none */
    const unsigned char *p = (const unsigned char *)s + n;
    while (p > (const unsigned char *)s)
        if (*--p == (unsigned char)c)
            return (void *)p;
    return NULL;
#endif
}

void tci_advise(void *p, size_t len, tci_advice advice)
{
#if defined(MADV_DONTNEED) && !defined(TCI_PORTABLE)
    static const int how[] = {[TCI_ADVISE_SEQUENTIAL] = MADV_SEQUENTIAL, [TCI_ADVISE_RANDOM] = MADV_RANDOM,
                              [TCI_ADVISE_DONTNEED] = MADV_DONTNEED};
    (void)madvise(p, len, how[advice]);
#else
    static const int how[] = {[TCI_ADVISE_SEQUENTIAL] = POSIX_MADV_SEQUENTIAL, [TCI_ADVISE_RANDOM] = POSIX_MADV_RANDOM,
                              [TCI_ADVISE_DONTNEED] = POSIX_MADV_DONTNEED};
    (void)posix_madvise(p, len, how[advice]);
#endif
}

void *tci_map_anon(void *at, size_t len, int prot)
{
#if defined(MAP_ANONYMOUS) && !defined(TCI_PORTABLE)
    int anon = MAP_ANONYMOUS;
#else
    int anon = MAP_ANON; /* older macOS and BSD headers */
#endif
    return mmap(at, len, prot, MAP_PRIVATE | anon | (at ? MAP_FIXED : 0), -1, 0);
}

int tci_asprintf(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *out = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!*out)
        return -1;
    va_start(ap, fmt);
    vsnprintf(*out, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return n;
}

int tci_random_bytes(void *buf, size_t n, bool wait)
{
    unsigned char *b = buf;
#if TCI_LINUX
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(b + got, n - got, wait ? 0 : GRND_NONBLOCK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == n)
        return 0;
    if (!wait)
        return -1; /* the pool is not ready yet: the caller has its own fallback */
#elif TCI_APPLE || TCI_BSD
    (void)wait; /* getentropy never blocks once the system is up */
    size_t done = 0;
    while (done < n) {
        size_t chunk = n - done > 256 ? 256 : n - done; /* getentropy's limit */
        if (getentropy(b + done, chunk) != 0)
            break;
        done += chunk;
    }
    if (done == n)
        return 0;
#else
    (void)wait;
#endif
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got2 = 0;
    while (got2 < n) {
        ssize_t r = read(fd, b + got2, n - got2);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got2 += (size_t)r;
    }
    close(fd);
    return got2 == n ? 0 : -1;
}

int tci_rename_noreplace(int dirfd, const char *from, const char *to)
{
#if TCI_LINUX && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 28)) && \
    defined(RENAME_NOREPLACE)
    return renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE);
#elif TCI_APPLE && defined(RENAME_EXCL)
    return renameatx_np(dirfd, from, dirfd, to, RENAME_EXCL); /* macOS 10.12 */
#else
    (void)dirfd, (void)from, (void)to;
    errno = EINVAL;
    return -1;
#endif
}

int tci_open_tmpfile(int dirfd)
{
#if defined(O_TMPFILE) && !defined(TCI_PORTABLE)
    return openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#else
    (void)dirfd;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int tci_open_dir(int at, const char *path)
{
#if defined(O_PATH) && !defined(TCI_PORTABLE)
    return openat(at, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
    return openat(at, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
}

struct timespec tci_stat_mtime(const struct stat *st)
{
#if defined(__APPLE__) /* a field's name: no fallback to choose */
    return st->st_mtimespec;
#else
    return st->st_mtim;
#endif
}

int tci_sigwait_for(const sigset_t *set, const struct timespec *timeout)
{
#if !(TCI_LINUX || TCI_BSD)
    /* no sigtimedwait (macOS): look at the pending signals every 10 ms until the time is up; sigwait
     * takes one that is pending at once */
    long long left = (long long)timeout->tv_sec * 1000000000 + timeout->tv_nsec;
    for (;;) {
        sigset_t pending;
        if (sigpending(&pending) == 0)
            for (int s = 1; s < NSIG; s++)
                if (sigismember(set, s) == 1 && sigismember(&pending, s) == 1) {
                    int sig = 0;
                    return sigwait(set, &sig) == 0 ? sig : 0;
                }
        if (left <= 0)
            return 0;
        long long step = left < 10000000 ? left : 10000000;
        struct timespec ts = {0, (long)step};
        nanosleep(&ts, NULL);
        left -= step;
    }
#else
    int sig = sigtimedwait(set, NULL, timeout);
    return sig > 0 ? sig : 0;
#endif
}

int tci_socket(int family, int type)
{
#if defined(SOCK_CLOEXEC) && defined(SOCK_NONBLOCK) && !defined(TCI_PORTABLE)
    return socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
#else
    int fd = socket(family, type, 0);
    if (fd >= 0 && (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
#endif
}

short tci_poll_rdhup(void)
{
#if defined(POLLRDHUP) && !defined(TCI_PORTABLE)
    return POLLRDHUP;
#else
    return 0;
#endif
}

size_t tci_socket_unsent(int fd)
{
#if TCI_LINUX && defined(TIOCOUTQ)
    int n = 0; /* SIOCOUTQ (linux/sockios.h, not included by glibc's sys/ioctl.h) is TIOCOUTQ */
    return ioctl(fd, TIOCOUTQ, &n) == 0 && n > 0 ? (size_t)n : 0; /* write_seq - snd_una for TCP */
#elif TCI_APPLE && defined(SO_NWRITE)
    int n = 0;
    socklen_t len = sizeof n;
    return getsockopt(fd, SOL_SOCKET, SO_NWRITE, &n, &len) == 0 && n > 0 ? (size_t)n : 0;
#elif TCI_BSD && defined(FIONWRITE)
    int n = 0;
    return ioctl(fd, FIONWRITE, &n) == 0 && n > 0 ? (size_t)n : 0;
#else
    (void)fd;
    return 0;
#endif
}

const char *tci_signal_abbrev(int sig)
{
    switch (sig) { /* the ones the commands stop on or report */
    case SIGINT: return "INT";
    case SIGTERM: return "TERM";
    case SIGHUP: return "HUP";
    case SIGPIPE: return "PIPE";
    case SIGQUIT: return "QUIT";
    case SIGKILL: return "KILL";
    case SIGUSR1: return "USR1";
    case SIGUSR2: return "USR2";
    case SIGALRM: return "ALRM";
    case SIGXFSZ: return "XFSZ";
    case SIGXCPU: return "XCPU";
    case SIGSEGV: return "SEGV";
    case SIGBUS: return "BUS";
    case SIGABRT: return "ABRT";
    default: return NULL;
    }
}

ssize_t tci_fgetxattr(int fd, const char *name, void *value, size_t size)
{
#if TCI_LINUX
    return fgetxattr(fd, name, value, size);
#elif TCI_APPLE
    return fgetxattr(fd, name, value, size, 0, 0);
#else
    (void)fd, (void)name, (void)value, (void)size;
    errno = ENOTSUP;
    return -1;
#endif
}

int tci_fsetxattr(int fd, const char *name, const void *value, size_t size)
{
#if TCI_LINUX
    return fsetxattr(fd, name, value, size, 0);
#elif TCI_APPLE
    return fsetxattr(fd, name, value, size, 0, 0);
#else
    (void)fd, (void)name, (void)value, (void)size;
    errno = ENOTSUP;
    return -1;
#endif
}

void tci_fd_path(int fd, char *buf, size_t len)
{
#if TCI_LINUX
    snprintf(buf, len, "/proc/self/fd/%d", fd); /* opens the file itself, at its start */
#else
    snprintf(buf, len, "/dev/fd/%d", fd); /* macOS and the BSDs (a dup there: the same offset) */
#endif
}

ssize_t tci_self_exe(char *buf, size_t len)
{
#if TCI_LINUX
    return readlink("/proc/self/exe", buf, len);
#elif TCI_APPLE
    uint32_t size = (uint32_t)len;
    char *tmp = malloc(len + 1);
    if (!tmp || _NSGetExecutablePath(tmp, &size) != 0) {
        free(tmp);
        return -1;
    }
    char *real = realpath(tmp, NULL); /* resolves a symbolic link, as /proc/self/exe does */
    free(tmp);
    size_t n = real ? strlen(real) : 0;
    if (!real || n > len) {
        free(real);
        return -1;
    }
    memcpy(buf, real, n);
    free(real);
    return (ssize_t)n;
#else
    (void)buf, (void)len;
    return -1;
#endif
}
