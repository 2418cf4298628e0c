/* compat: src/util/compat.c's calls do what tc_compat.h says, built twice (compat.cmake): with
 * this system's own calls (compat) and with every portable fallback (compat_portable,
 * TCI_PORTABLE), the code macOS and the BSDs run where Linux has its own call. */
#include "tc_compat.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned long long seed = 88172645463325252ull;

static unsigned next_random(void)
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (unsigned)seed;
}

static const char *naive_memmem(const char *h, size_t n, const char *s, size_t m)
{
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp(h + i, s, m))
            return h + i;
    return NULL;
}

static const char *naive_memrchr(const char *p, int c, size_t n)
{
    for (size_t i = n; i-- > 0;)
        if (p[i] == (char)c)
            return p + i;
    return NULL;
}

/* Against the obvious loops, on small strings of two letters (many near matches). */
static void test_memmem_memrchr(void)
{
    char hay[64], needle[6];
    for (int round = 0; round < 20000; round++) {
        size_t n = next_random() % sizeof hay, m = next_random() % sizeof needle;
        for (size_t i = 0; i < n; i++)
            hay[i] = "ab"[next_random() % 2];
        for (size_t i = 0; i < m; i++)
            needle[i] = "ab"[next_random() % 2];
        CHECK(tci_memmem(hay, n, needle, m) == naive_memmem(hay, n, needle, m));
        CHECK(tci_memrchr(hay, 'a', n) == naive_memrchr(hay, 'a', n));
    }
    const char abc[] = "abc";
    CHECK(tci_memmem(abc, 3, "", 0) == abc);
    CHECK(tci_memrchr("", 'a', 0) == NULL);
}

static void test_asprintf(void)
{
    char *s = NULL;
    CHECK_EQ_INT(tci_asprintf(&s, "x%dy%s", 42, "z"), 5);
    CHECK_EQ_STR(s, "x42yz");
    free(s);
}

static void test_random_bytes(void)
{
    unsigned char a[64] = {0}, b[64] = {0};
    CHECK_EQ_INT(tci_random_bytes(a, sizeof a, true), 0);
    CHECK_EQ_INT(tci_random_bytes(b, sizeof b, false), 0);
    CHECK(memcmp(a, b, sizeof a) != 0);
}

static char dir[64];

static void test_files(void)
{
    int dfd = tci_open_dir(AT_FDCWD, dir);
    CHECK(dfd >= 0);
    if (dfd < 0)
        return;
    int fd = openat(dfd, "a", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && tci_stat_mtime(&st).tv_sec == st.st_mtime);
    close(fd);
    /* renamed when nothing is there; refused (EEXIST) when something is, or not offered */
    int rc = tci_rename_noreplace(dfd, "a", "b");
    CHECK(rc == 0 || errno == EINVAL);
    if (rc == 0) {
        close(openat(dfd, "c", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        CHECK(tci_rename_noreplace(dfd, "c", "b") == -1 && errno == EEXIST);
        CHECK(faccessat(dfd, "c", F_OK, 0) == 0);
    }
#if defined(TCI_PORTABLE)
    CHECK(rc == -1 && errno == EINVAL);
#endif
    /* an unnamed file, or EOPNOTSUPP: the caller makes a name */
    int tmp = tci_open_tmpfile(dfd);
    CHECK(tmp >= 0 || errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL);
#if defined(TCI_PORTABLE)
    CHECK(tmp == -1 && errno == EOPNOTSUPP);
#endif
    if (tmp >= 0)
        close(tmp);
    /* a path that opens the same file */
    fd = openat(dfd, rc == 0 ? "b" : "a", O_RDONLY | O_CLOEXEC);
    char path[64], got[8] = {0};
    tci_fd_path(fd, path, sizeof path);
    int again = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(again >= 0 && read(again, got, sizeof got) == 5 && !memcmp(got, "hello", 5));
    close(again);
    /* an attribute kept, or none offered (tmpfs without user attributes, the fallback) */
    char value[16] = {0};
    if (tci_fsetxattr(fd, "user.traceconv.test", "v1", 2) == 0)
        CHECK(tci_fgetxattr(fd, "user.traceconv.test", value, sizeof value) == 2 && !memcmp(value, "v1", 2));
    else
        CHECK(tci_fgetxattr(fd, "user.traceconv.test", value, sizeof value) == -1);
    close(fd);
    unlinkat(dfd, "a", 0), unlinkat(dfd, "b", 0), unlinkat(dfd, "c", 0);
    close(dfd);
}

static void test_signals(void)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    struct timespec t0, t1, wait = {0, 50 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ_INT(tci_sigwait_for(&set, &wait), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(waited > 0.04);
    pthread_kill(pthread_self(), SIGUSR1);
    CHECK_EQ_INT(tci_sigwait_for(&set, &wait), SIGUSR1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    CHECK_EQ_STR(tci_signal_abbrev(SIGINT), "INT");
    CHECK_EQ_STR(tci_signal_abbrev(SIGTERM), "TERM");
    CHECK(tci_signal_abbrev(0) == NULL);
}

static void test_socket_and_maps(void)
{
    int fd = tci_socket(AF_INET, SOCK_STREAM);
    CHECK(fd >= 0);
    CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) && (fcntl(fd, F_GETFL) & O_NONBLOCK));
    close(fd);
#if defined(TCI_PORTABLE)
    CHECK_EQ_INT(tci_poll_rdhup(), 0);
#endif
    size_t len = 4 * (size_t)sysconf(_SC_PAGESIZE);
    char *p = tci_map_anon(NULL, len, PROT_READ | PROT_WRITE);
    CHECK(p != MAP_FAILED);
    if (p == MAP_FAILED)
        return;
    memset(p, 7, len);
    tci_advise(p, len, TCI_ADVISE_SEQUENTIAL);
    CHECK(tci_map_anon(p + len / 2, len / 2, PROT_READ) == p + len / 2); /* in place: zeros */
    CHECK(p[0] == 7 && p[len / 2] == 0 && p[len - 1] == 0);
    munmap(p, len);
}

static void test_self_exe(void)
{
    char path[4096];
    ssize_t n = tci_self_exe(path, sizeof path - 1);
#if defined(TCI_PORTABLE)
    CHECK_EQ_INT(n, -1);
#else
    CHECK(n > 0);
    if (n > 0) {
        path[n] = 0;
        CHECK(strstr(path, "compat") != NULL);
    }
#endif
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/tc-compat-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    UNIT_RUN(test_memmem_memrchr);
    UNIT_RUN(test_asprintf);
    UNIT_RUN(test_random_bytes);
    UNIT_RUN(test_files);
    UNIT_RUN(test_signals);
    UNIT_RUN(test_socket_and_maps);
    UNIT_RUN(test_self_exe);
    rmdir(dir);
    return UNIT_DONE();
}
