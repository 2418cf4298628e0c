/* outfile.c - the output files of every command (see outfile.h for the rules). */
#include "outfile.h"
#include "traceconv.h"
#include "../util/tc_compat.h" /* compiled in (CMakeLists.txt) */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- the process ---- */

static mode_t output_mode = 0666;

void of_init(void)
{
    mode_t mask = umask(0); /* the umask can only be read by setting it */
    umask(mask);
    output_mode = 0666 & ~mask;
    signal(SIGXFSZ, SIG_IGN);
}

void of_private_outputs(void)
{
    umask(077);
    output_mode = 0600;
}

const char *of_strerror(int err)
{
    return err == EFBIG ? "file size limit exceeded" : strerror(err);
}

/* ---- temporary files: registered, so that a signal can remove them ----
 *
 * A slot is filled (dirfd, name) before it is marked used, with the cleanup signals
 * blocked in the thread that fills it and under the lock: a handler that runs in that
 * thread cannot see it half made, and batch's signal thread takes the lock. */

enum { MAX_TEMPS = 256 * 16 + 64, TEMP_NAME = 11 }; /* batch: 256 workers x 16 formats, + the summary's */

typedef struct temp_slot {
    volatile sig_atomic_t used;
    int dirfd;
    char name[TEMP_NAME];
} temp_slot;

static temp_slot temps[MAX_TEMPS];
static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER;
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

static void block_cleanup_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaddset(&set, cleanup_signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static void remove_every_temp(void)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (temps[i].used)
            unlinkat(temps[i].dirfd, temps[i].name, 0);
}

static void on_cleanup_signal(int sig)
{
    remove_every_temp(); /* unlinkat is async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void of_remove_temps_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_cleanup_signal;
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaction(cleanup_signals[i], &sa, NULL);
}

void of_remove_temps_and_hold(void)
{
    pthread_mutex_lock(&temps_lock);
    remove_every_temp();
}

/* ".tc-" and six random letters or digits: a fixed, short name whatever the target's. */
static void temp_name(char name[TEMP_NAME])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char r[6];
    if (tci_random_bytes(r, sizeof r, false) != 0) {
        static unsigned long counter; /* under temps_lock */
        unsigned long x = (unsigned long)getpid() * 2654435761u ^ (unsigned long)time(NULL) ^ ++counter * 40503u;
        for (size_t i = 0; i < sizeof r; i++, x >>= 5)
            r[i] = (unsigned char)x;
    }
    memcpy(name, ".tc-", 4);
    for (size_t i = 0; i < sizeof r; i++)
        name[4 + i] = alphabet[r[i] % (sizeof alphabet - 1)];
    name[10] = 0;
}

/* Create a temporary file in dirfd and register it; its fd, or -1 (errno). */
static int temp_create(int dirfd, int *slot_out)
{
    sigset_t old;
    block_cleanup_signals(&old);
    pthread_mutex_lock(&temps_lock);
    int slot = -1, fd = -1, err = EMFILE;
    for (int i = 0; i < MAX_TEMPS && slot < 0; i++)
        if (!temps[i].used)
            slot = i;
    for (int attempt = 0; slot >= 0 && fd < 0 && attempt < 100; attempt++) {
        temp_name(temps[slot].name);
        fd = openat(dirfd, temps[slot].name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        err = errno;
        if (fd < 0 && err != EEXIST)
            break;
    }
    if (fd >= 0) {
        temps[slot].dirfd = dirfd;
        temps[slot].used = 1;
    }
    pthread_mutex_unlock(&temps_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        errno = err;
        return -1;
    }
    /* mkstemp's 0600 until now; a file system that refuses fchmod leaves it so, the safe side */
    (void)fchmod(fd, output_mode);
    *slot_out = slot;
    return fd;
}

/* Rename the slot's file onto leaf (keep) or remove it; then the slot is free. 0, or -1 (errno). */
static int temp_finish(int slot, const char *leaf, int keep, int replace)
{
    sigset_t old;
    block_cleanup_signals(&old);
    pthread_mutex_lock(&temps_lock);
    temp_slot *t = &temps[slot];
    int rc = 0, err = 0;
    if (keep && replace) {
        rc = renameat(t->dirfd, t->name, t->dirfd, leaf);
    } else if (keep) { /* only if nothing appeared at leaf since it was checked */
        rc = tci_rename_noreplace(t->dirfd, t->name, leaf);
        if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) { /* a file system without it */
            rc = linkat(t->dirfd, t->name, t->dirfd, leaf, 0);
            if (rc != 0 && errno != EEXIST)
                rc = renameat(t->dirfd, t->name, t->dirfd, leaf); /* nor hard links (vfat) */
        }
    }
    err = errno;
    if (!keep || rc != 0 || faccessat(t->dirfd, t->name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        unlinkat(t->dirfd, t->name, 0); /* refused, failed, or linked: the temporary name goes */
    t->used = 0;
    pthread_mutex_unlock(&temps_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return rc;
}

int of_scratch_at(int dirfd)
{
    int fd = tci_open_tmpfile(dirfd);
    if (fd >= 0)
        return fd;
    sigset_t old;
    block_cleanup_signals(&old);
    pthread_mutex_lock(&temps_lock);
    char name[TEMP_NAME];
    int attempt = 0, err;
    do {
        temp_name(name);
        fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        err = errno;
    } while (fd < 0 && err == EEXIST && ++attempt < 100);
    if (fd >= 0)
        unlinkat(dirfd, name, 0);
    pthread_mutex_unlock(&temps_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return fd;
}

int of_scratch(const char *dir)
{
    int dirfd = tci_open_dir(AT_FDCWD, dir);
    if (dirfd < 0)
        return -1;
    int fd = of_scratch_at(dirfd), err = errno;
    close(dirfd);
    errno = err;
    return fd;
}

/* ---- names ---- */

size_t of_stem_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot && dot != base && !strcasecmp(dot, ".gz")) { /* in.trace.gz -> in */
        const char *d2 = dot;
        while (d2 > base && *--d2 != '.')
            ;
        if (*d2 == '.' && d2 != base)
            dot = d2;
    }
    return dot && dot != base ? (size_t)(dot - path) : strlen(path);
}

static const char *last_component(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *of_output_name(const char *stem, size_t stem_len, const char *input, const char *writer, const char *ext)
{
    size_t need = stem_len + strlen(writer) + strlen(ext) + 3;
    char *out = malloc(need);
    if (!out)
        return NULL;
    snprintf(out, need, "%.*s.%s", (int)stem_len, stem, ext);
    if (input && !strcasecmp(last_component(out), last_component(input)))
        snprintf(out, need, "%.*s.%s.%s", (int)stem_len, stem, writer, ext);
    return out;
}

static uint64_t name_hash(const of_names *set, const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a 64, ASCII case folded unless exact */
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        h = (h ^ (c >= 'A' && c <= 'Z' && !set->exact ? c + 32u : c)) * 1099511628211ULL;
    }
    return h ? h : 1; /* 0 marks an empty slot */
}

static int hash_has(const of_names *s, uint64_t h)
{
    for (size_t i = s->cap ? h & (s->cap - 1) : 0; s->cap; i = (i + 1) & (s->cap - 1)) {
        if (!s->slots[i])
            return 0;
        if (s->slots[i] == h)
            return 1;
    }
    return 0;
}

static void hash_put(uint64_t *slots, size_t cap, uint64_t h)
{
    size_t i = h & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = h;
}

static int hash_take(of_names *s, uint64_t h)
{
    if (hash_has(s, h))
        return 0;
    if ((s->count + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        uint64_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i])
                hash_put(slots, cap, s->slots[i]);
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    hash_put(s->slots, s->cap, h);
    s->count++;
    return 1;
}

int of_names_take(of_names *s, const char *name) { return hash_take(s, name_hash(s, name)); }
int of_names_has(const of_names *s, const char *name) { return hash_has(s, name_hash(s, name)); }

/* A directory is kept as its name and a slash: "x/a.json/" never equals a file's name. */
static uint64_t dir_hash(const of_names *s, const char *name)
{
    size_t n = strlen(name);
    char small[512], *key = n + 2 <= sizeof small ? small : malloc(n + 2);
    if (!key)
        return 0;
    memcpy(key, name, n);
    memcpy(key + n, "/", 2);
    uint64_t h = name_hash(s, key);
    if (key != small)
        free(key);
    return h;
}

int of_names_take_dir(of_names *s, const char *dir)
{
    uint64_t h = dir_hash(s, dir);
    return h && hash_take(s, h) >= 0 ? 0 : -1;
}

void of_names_free(of_names *s)
{
    free(s->slots);
    s->slots = NULL;
    s->cap = s->count = 0;
}

enum { MAX_PLANNED = 32 };

/* The n output names of the stem: all free and all different? Their hashes in h. */
static int names_free(const of_names *s, const char *stem, const char *input, const char *const *writers,
                      const char *const *exts, size_t n, uint64_t *h)
{
    for (size_t i = 0; i < n; i++) {
        char *name = of_output_name(stem, strlen(stem), input, writers[i], exts[i]);
        if (!name)
            return -1;
        h[i] = name_hash(s, name);
        uint64_t as_dir = dir_hash(s, name);
        free(name);
        if (!as_dir)
            return -1;
        if (hash_has(s, h[i]) || hash_has(s, as_dir))
            return 0;
        for (size_t k = 0; k < i; k++)
            if (h[k] == h[i])
                return 0;
    }
    return 1;
}

char *of_plan_stem(of_names *s, const char *want, const char *input, const char *const *writers,
                   const char *const *exts, size_t n)
{
    size_t len = strlen(want);
    char *stem = malloc(len + 24);
    uint64_t h[MAX_PLANNED];
    if (!stem || n > MAX_PLANNED) {
        free(stem);
        return NULL;
    }
    strcpy(stem, want);
    int ok;
    for (unsigned long k = 1; (ok = names_free(s, stem, input, writers, exts, n, h)) == 0; k++)
        snprintf(stem + len, 24, "-%lu", k);
    for (size_t i = 0; ok > 0 && i < n; i++)
        if (hash_take(s, h[i]) < 0)
            ok = -1;
    if (ok < 0) {
        free(stem);
        return NULL;
    }
    return stem;
}

/* ---- the overwrite rules ---- */

/* Whether s holds the mark of an output variant of format f (the library's tables). */
static int has_mark(const char *s, const tc_format_info *f)
{
    const tc_variant_info *v;
    for (size_t i = 0; (v = tc_variant_at(f, i)); i++)
        if (v->mark && strstr(s, v->mark))
            return 1;
    return 0;
}

/* Whether s holds the mark of any output of a writer or of the diff (own: only that mark). */
static int has_any_mark(const char *s, const char *own)
{
    if (own)
        return strstr(s, own) != NULL;
    const tc_format_info *f;
    for (size_t i = 0; (f = tc_format_at(i)); i++)
        if (!f->is_reader && has_mark(s, f))
            return 1;
    for (size_t i = 0; (f = tc_diff_format_at(i)); i++)
        if (has_mark(s, f))
            return 1;
    return 0;
}

#define OWN_XATTR "user.traceconv.output"

/* The attribute's value for the open file as it is now: "variant size mtime". */
static int own_xattr_value(int fd, const char *variant, char *out, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    struct timespec mtime = tci_stat_mtime(&st);
    int n = snprintf(out, len, "%s %lld %lld.%09ld", variant, (long long)st.st_size, (long long)mtime.tv_sec,
                     (long)mtime.tv_nsec);
    return n > 0 && (size_t)n < len ? n : -1;
}

/* Whether the open file is marked as traceconv's output of variant (NULL: of any), unchanged
 * since it was written: the same size and mtime (a file written into in place, `echo notes >
 * a.txt`, keeps its attributes, not its mtime). 1 yes, 0 no, -1 it has no such mark (a copy,
 * a file system without user attributes: its bytes may still say it). */
static int has_own_xattr(int fd, const char *variant)
{
    char value[160], now[160];
    ssize_t n = tci_fgetxattr(fd, OWN_XATTR, value, sizeof value - 1);
    if (n <= 0)
        return -1;
    value[n] = 0;
    const char *space = strchr(value, ' ');
    if (!space)
        return 0;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(space - value), value);
    if (variant && strcmp(name, variant))
        return 0;
    return own_xattr_value(fd, name, now, sizeof now) > 0 && !strcmp(value, now);
}

/* Did traceconv write this file (as variant, with its mark own; both NULL: as any output)?
 * Each of its text outputs that a reader may take for a trace carries a mark
 * (tc_variant_info.mark) near the start (ir, systrace, the reports, speedscope's exporter,
 * the CSV headers, the flame graph's) or in the trailing otherData object (json); every
 * output it writes into a file carries the extended attribute too, where the file system
 * keeps one (of_begin_output). */
static int written_by_traceconv(int dirfd, const char *leaf, const char *variant, const char *own)
{
    char buf[2][8192 + 1];
    size_t got[2] = {0, 0};
    int fd = openat(dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    /* As this variant, without -f: its attribute says whether it is unchanged since; as any
     * output (-f may replace it), a mark in its bytes is enough, changed or not */
    int attr = has_own_xattr(fd, variant);
    if (attr > 0 || (variant && (attr == 0 || !own))) {
        close(fd);
        return attr > 0;
    }
    ssize_t k = pread(fd, buf[0], sizeof buf[0] - 1, 0);
    got[0] = k > 0 ? (size_t)k : 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > (off_t)(sizeof buf[1] - 1)) {
        k = pread(fd, buf[1], sizeof buf[1] - 1, st.st_size - (off_t)(sizeof buf[1] - 1));
        got[1] = k > 0 ? (size_t)k : 0;
    }
    close(fd);
    for (int part = 0; part < 2; part++) {
        for (size_t i = 0; i < got[part]; i++)
            if (!buf[part][i])
                buf[part][i] = ' '; /* a binary byte must not end the search */
        buf[part][got[part]] = 0;
        if (has_any_mark(buf[part], own))
            return 1;
    }
    return 0;
}

int of_own_output(int dirfd, const char *leaf, const char *variant, const char *mark)
{
    return written_by_traceconv(dirfd, leaf, variant, mark);
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int refuse(char *why, size_t len, const char *fmt, const char *arg)
{
    snprintf(why, len, fmt, arg);
    return OF_REFUSED;
}

/* A regular file there: the input itself, an original trace, or (without -f) any file, is kept. */
static int check_regular(int dirfd, const char *leaf, const char *shown, const struct stat *st, const of_rules *r,
                         char *why, size_t whylen)
{
    for (size_t i = 0; i < r->n_inputs; i++)
        if (same_file(st, &r->inputs[i]))
            return refuse(why, whylen, "output would overwrite the input%s", "");
    tc_probe_score scores[64];
    char err[1024] = "";
    int n = tc_probe_file(shown, scores, 64, err, sizeof err);
    if (n < 0)
        return refuse(why, whylen, "exists and cannot be checked for a trace, so it is kept (%s)", err);
    int best = 0;
    for (int i = 1; i < n; i++)
        if (scores[i].score > scores[best].score)
            best = i;
    /* An earlier output of this very variant is made again: re-running a conversion is the
     * common case, and needs no -f. */
    if (r->variant && written_by_traceconv(dirfd, leaf, r->variant, r->mark))
        return OF_OWN;
    /* What detection would accept as input is a trace: an original one is never replaced;
     * one that traceconv wrote (as another output) may be replaced with -f. */
    if (n > 0 && scores[best].score > 0 && !written_by_traceconv(dirfd, leaf, NULL, NULL))
        return refuse(why, whylen, "is a trace (the %s reader recognizes it); not overwriting it, even with -f",
                      scores[best].reader);
    if (!r->force)
        return refuse(why, whylen, "exists; use -f to overwrite it (traceconv did not write it as this "
                      "output%s)", r->variant ? "" : ", or it cannot tell");
    return OF_REPLACE;
}

int of_check(int dirfd, const char *leaf, const char *shown, const of_rules *r, char *why, size_t whylen)
{
    struct stat st;
    if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? OF_ABSENT : refuse(why, whylen, "cannot be checked: %s", strerror(errno));
    if (S_ISLNK(st.st_mode)) {
        struct stat target;
        int resolves = fstatat(dirfd, leaf, &target, 0) == 0;
        if (resolves && r->allow_special && (S_ISFIFO(target.st_mode) || S_ISCHR(target.st_mode)))
            return OF_INTO; /* /dev/stdout, a link to a FIFO: written into, as the thing itself */
        if (!r->force)
            return refuse(why, whylen, "is a symbolic link%s; not replacing it without -f (which replaces the "
                          "link, never what it points to)", resolves ? "" : " (dangling)");
        return OF_REPLACE;
    }
    if (S_ISDIR(st.st_mode))
        return refuse(why, whylen, "is a directory%s", "");
    if (!S_ISREG(st.st_mode)) {
        if (r->allow_special && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
            return OF_INTO; /* written into, never replaced; reading it to probe would consume it */
        return refuse(why, whylen, "is not a regular file; not replacing it%s", "");
    }
    return check_regular(dirfd, leaf, shown, &st, r, why, whylen);
}

/* ---- an output file ---- */

int of_open_dir(const char *path, const char **leaf)
{
    const char *slash = strrchr(path, '/');
    *leaf = slash ? slash + 1 : path;
    if (!slash)
        return tci_open_dir(AT_FDCWD, ".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = strndup(path, n);
    if (!dir)
        return -1;
    int fd = tci_open_dir(AT_FDCWD, dir);
    free(dir);
    return fd;
}

int of_begin(of_file *f, int dirfd, const char *leaf, int how) { return of_begin_output(f, dirfd, leaf, how, NULL); }

int of_begin_output(of_file *f, int dirfd, const char *leaf, int how, const char *variant)
{
    if (how == OF_OWN)
        how = OF_REPLACE;
    *f = (of_file){.dirfd = dirfd, .leaf = leaf, .how = how, .slot = -1};
    int fd = how == OF_INTO ? openat(dirfd, leaf, O_WRONLY | O_CLOEXEC) : temp_create(dirfd, &f->slot);
    if (fd < 0)
        return -1;
    f->variant = f->slot >= 0 ? variant : NULL; /* marked when complete (of_commit) */
    if (!(f->fp = fdopen(fd, "wb"))) {
        int err = errno;
        close(fd);
        of_abandon(f);
        errno = err;
        return -1;
    }
    return 0;
}

/* The complete output marked as traceconv's own output of its variant, with its size and
 * mtime (writing an attribute changes neither). A file system without user attributes: the
 * next run needs -f for it (a variant with a mark in its bytes excepted). */
static void mark_own(of_file *f)
{
    char value[160];
    int fd = fileno(f->fp);
    if (f->variant && fflush(f->fp) == 0 && own_xattr_value(fd, f->variant, value, sizeof value) > 0)
        (void)tci_fsetxattr(fd, OWN_XATTR, value, strlen(value));
}

int of_commit(of_file *f)
{
    mark_own(f);
    int rc = fclose(f->fp) == 0 ? 0 : -1;
    int err = errno;
    f->fp = NULL;
    if (f->slot >= 0) {
        if (rc == 0)
            rc = temp_finish(f->slot, f->leaf, 1, f->how == OF_REPLACE);
        else
            temp_finish(f->slot, f->leaf, 0, 0);
        err = rc == 0 ? 0 : errno;
        f->slot = -1;
    }
    errno = err;
    return rc;
}

void of_withdraw(of_file *f)
{
    if (f->how == OF_ABSENT)
        unlinkat(f->dirfd, f->leaf, 0);
}

void of_abandon(of_file *f)
{
    if (f->fp)
        fclose(f->fp);
    f->fp = NULL;
    if (f->slot >= 0)
        temp_finish(f->slot, f->leaf, 0, 0);
    f->slot = -1;
}
