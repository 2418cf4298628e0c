#!/usr/bin/env python3
"""traceconv builds where Android developers work: Linux (glibc or musl) and macOS. The library
and the commands are C11 and POSIX.1-2008 with XSI (-D_XOPEN_SOURCE=700, CMakeLists.txt); the
GNU and Linux extensions they use where they exist, with a fallback elsewhere, are in one file,
src/util/compat.c (tc_compat.h). This test reads every .c and .h of src/ but that one, comments
and string literals left out, and fails on a call, macro or header that is GNU- or Linux-only
(or absent from macOS's libc), naming the file, the line and what to call instead. A glibc
build does not find these: glibc declares most of them, and macOS is not at hand.

The programs the build makes besides (tests/unit, tests/fuzz, tools, bench: `make` builds
them too) are read as well, more leniently: a feature-test macro is harmless there, and a
use is accepted under a platform's #if (__linux__, __APPLE__, __GLIBC__, or the name itself)
or when the file defines the name as its own fallback."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

COMPAT = "src/util/compat.c"
USE = "use tc_compat.h's "

# name -> what to do instead. Words, matched whole outside comments and strings.
FORBIDDEN = {
    # feature-test macros: the build sets _XOPEN_SOURCE=700 (and _DARWIN_C_SOURCE on macOS)
    "_GNU_SOURCE": "the build is POSIX + XSI: " + USE + "tci_* call for the extension",
    "_DEFAULT_SOURCE": "the build is POSIX + XSI", "_BSD_SOURCE": "the build is POSIX + XSI",
    "_SVID_SOURCE": "the build is POSIX + XSI", "_DARWIN_C_SOURCE": "CMakeLists.txt defines it on macOS",
    # memory and strings
    "memrchr": USE + "tci_memrchr", "memmem": USE + "tci_memmem", "strchrnul": "strchr",
    "rawmemchr": "memchr", "strdupa": "strdup", "strndupa": "strndup", "mempcpy": "memcpy",
    "asprintf": USE + "tci_asprintf", "vasprintf": "vsnprintf twice", "qsort_r": "qsort (qsort_r's "
    "arguments differ between glibc and macOS)", "malloc_usable_size": "the size asked for",
    "mallinfo": "nothing portable", "mallinfo2": "nothing portable", "malloc_trim": "nothing portable",
    "reallocarray": "a checked multiplication and realloc", "explicit_bzero": "a volatile loop",
    "fopencookie": "open_memstream or a file",
    # mappings
    "mremap": "munmap and mmap", "MAP_POPULATE": "touching the pages", "MAP_ANONYMOUS": USE + "tci_map_anon",
    "MAP_ANON": USE + "tci_map_anon", "MAP_NORESERVE": "nothing", "madvise": USE + "tci_advise",
    "MADV_DONTNEED": USE + "tci_advise", "MADV_SEQUENTIAL": USE + "tci_advise", "MADV_RANDOM": USE + "tci_advise",
    "MADV_WILLNEED": USE + "tci_advise", "MADV_HUGEPAGE": "nothing", "memfd_create": "a temporary file",
    # files
    "O_TMPFILE": USE + "tci_open_tmpfile", "O_PATH": USE + "tci_open_dir", "O_NOATIME": "nothing",
    "O_DIRECT": "nothing", "renameat2": USE + "tci_rename_noreplace", "RENAME_NOREPLACE": USE + "tci_rename_noreplace",
    "st_mtim": USE + "tci_stat_mtime", "st_atim": "a tci_stat_* beside tci_stat_mtime",
    "st_ctim": "a tci_stat_* beside tci_stat_mtime", "statx": "fstatat", "fallocate": "ftruncate",
    "posix_fallocate": "ftruncate (macOS has no posix_fallocate)", "posix_fadvise": "nothing (not in macOS)",
    "sync_file_range": "fsync", "copy_file_range": "read and write", "sendfile": "read and write",
    "splice": "read and write", "fgetxattr": USE + "tci_fgetxattr", "fsetxattr": USE + "tci_fsetxattr",
    "getxattr": USE + "tci_fgetxattr", "setxattr": USE + "tci_fsetxattr", "get_current_dir_name": "getcwd",
    "canonicalize_file_name": "realpath", "dup3": "dup2 and fcntl", "pipe2": "pipe and fcntl",
    "AT_EMPTY_PATH": "fstat",
    # sockets and events
    "SOCK_CLOEXEC": USE + "tci_socket", "SOCK_NONBLOCK": USE + "tci_socket", "accept4": "accept and fcntl",
    "MSG_NOSIGNAL": "SIGPIPE ignored", "POLLRDHUP": USE + "tci_poll_rdhup", "ppoll": "poll",
    "NI_MAXHOST": USE + "TCI_MAXHOST", "NI_MAXSERV": USE + "TCI_MAXSERV", "epoll_create": "poll",
    "epoll_create1": "poll", "epoll_ctl": "poll", "epoll_wait": "poll", "eventfd": "a pipe",
    "signalfd": "sigwait", "timerfd_create": "poll's timeout", "inotify_init": "nothing portable",
    "inotify_init1": "nothing portable",
    # signals, threads, processes, time
    "sigtimedwait": USE + "tci_sigwait_for", "sigwaitinfo": "sigwait", "sigabbrev_np": USE + "tci_signal_abbrev",
    "sigdescr_np": "strsignal", "program_invocation_name": "argv[0]",
    "program_invocation_short_name": "argv[0]", "pthread_timedjoin_np": "a condition variable",
    "pthread_tryjoin_np": "a flag", "pthread_setaffinity_np": "nothing", "pthread_getaffinity_np": "nothing",
    "pthread_setname_np": "nothing (its arguments differ on macOS)", "pthread_condattr_setclock":
    "CLOCK_REALTIME deadlines (not in macOS)", "pthread_barrier_init": "a mutex and a condition variable "
    "(not in macOS)", "pthread_barrier_wait": "a mutex and a condition variable (not in macOS)",
    "sem_init": "a mutex and a condition variable (unnamed semaphores do not work on macOS)",
    "sem_timedwait": "a condition variable", "clock_nanosleep": "nanosleep (not in macOS)",
    "timer_create": "a thread or poll's timeout (not in macOS)", "CLOCK_BOOTTIME": "CLOCK_MONOTONIC",
    "CLOCK_MONOTONIC_RAW": "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_COARSE": "CLOCK_MONOTONIC",
    "CLOCK_REALTIME_COARSE": "CLOCK_REALTIME", "sched_getaffinity": "sysconf(_SC_NPROCESSORS_ONLN)",
    "sched_getcpu": "nothing", "get_nprocs": "sysconf(_SC_NPROCESSORS_ONLN)", "gettid": "pthread_self",
    "syscall": "the libc call", "prctl": "nothing portable", "getauxval": "sysconf",
    "secure_getenv": "getenv", "clearenv": "nothing", "error": None, "error_at_line": "fprintf",
    "__progname": "argv[0]", "versionsort": "a comparator of its own", "strverscmp": "a comparator of its own",
}
# "error" is a common variable name: only the call error(status, errnum, ...) with a number first
# would be GNU's, and no file calls it; left out of the word check.
del FORBIDDEN["error"]

HEADERS = {
    "sys/random.h": USE + "tci_random_bytes", "sys/xattr.h": USE + "tci_fgetxattr",
    "sys/epoll.h": "poll", "sys/sendfile.h": "read and write", "sys/prctl.h": "nothing portable",
    "sys/syscall.h": "the libc call", "sys/sysinfo.h": "sysconf", "sys/inotify.h": "nothing portable",
    "sys/eventfd.h": "a pipe", "sys/signalfd.h": "sigwait", "sys/timerfd.h": "poll's timeout",
    "sys/vfs.h": "statvfs", "sys/statfs.h": "statvfs", "malloc.h": "stdlib.h", "features.h": "nothing",
    "endian.h": "shifts", "byteswap.h": "shifts", "alloca.h": "malloc", "error.h": "fprintf",
    "argp.h": "getopt_long", "mcheck.h": "nothing", "execinfo.h": "nothing", "gnu/libc-version.h": "nothing",
}
# Linux's own headers (linux/..., asm/...) anywhere: none is on macOS.
LINUX_HEADER = re.compile(r"^\s*#\s*include\s*<(linux|asm|asm-generic)/", re.M)
INCLUDE = re.compile(r"^\s*#\s*include\s*<([^>]+)>", re.M)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Paths of Linux's /proc (the running program, its descriptors): macOS has none; in strings too.
PROC = re.compile(r"/proc/")


def strip(text):
    """The C text with comments and string and character literals blanked (newlines kept, so
    line numbers hold). Returns (code, strings): strings keeps the literals, for /proc/."""
    out, lits, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            lits.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            lits.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else text[i:j])
            lits.append(text[i:j])
            i = j
        else:
            out.append(c)
            lits.append("\n" if c == "\n" else " ")
            i += 1
    return "".join(out), "".join(lits)


FEATURE_MACROS = {"_GNU_SOURCE", "_DEFAULT_SOURCE", "_BSD_SOURCE", "_SVID_SOURCE", "_DARWIN_C_SOURCE"}
# in macOS's and the BSDs' libc too (with _DARWIN_C_SOURCE, which the build defines there)
LENIENT_OK = {"memmem"}
PLATFORM_IF = re.compile(r"__linux__|__APPLE__|__GLIBC__")


def guarded_lines(code):
    """{line number: the texts of the #if conditions enclosing it}."""
    out, stack = {}, []
    for n, line in enumerate(code.split("\n"), 1):
        d = line.strip()
        if re.match(r"#\s*if", d):
            stack.append(d)
        elif re.match(r"#\s*elif", d) and stack:
            stack[-1] += " " + d
        elif re.match(r"#\s*endif", d) and stack:
            stack.pop()
        out[n] = list(stack)
    return out


def lenient(code, found):
    """found less what a program outside src/ may have: feature-test macros, uses under a
    platform's #if or of a name the file defines itself (its fallback)."""
    guards = guarded_lines(code)
    defined = set(re.findall(r"#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)", code))
    kept = []
    for ln, msg in found:
        name = msg.split(": ", 1)[1].split(":", 1)[0].strip("<>")
        if name in FEATURE_MACROS or name in LENIENT_OK or name in defined:
            continue
        if any(PLATFORM_IF.search(g) or name in g for g in guards.get(ln, [])):
            continue
        kept.append((ln, msg))
    return kept


def findings(rel, text, strict=True):
    """(line, message) for each GNU- or Linux-only use in one file's text (strict: src/)."""
    code, lits = strip(text)
    found = []

    def line_of(pos):
        return code.count("\n", 0, pos) + 1

    for m in WORD.finditer(code):
        instead = FORBIDDEN.get(m.group(0))
        if instead and not (m.start() > 0 and code[m.start() - 1] in ".>" and m.group(0) not in
                            ("st_mtim", "st_atim", "st_ctim")):
            found.append((line_of(m.start()), f"{m.group(0)}: {instead}"))
    for m in INCLUDE.finditer(text):
        if m.group(1) in HEADERS:
            found.append((line_of(m.start()), f"<{m.group(1)}>: {HEADERS[m.group(1)]}"))
    for m in LINUX_HEADER.finditer(text):
        found.append((line_of(m.start()), f"<{m.group(1)}/...>: Linux's own header"))
    for m in PROC.finditer(lits):
        found.append((line_of(m.start()), "/proc/: Linux only (a fallback in compat.c)"))
    found = [(ln, f"{rel}:{ln}: {msg}") for ln, msg in found]
    return found if strict else lenient(code, found)


def self_check(ctx):
    """The scanner finds what it is for and not what it is not: a use in code, not in a comment
    or a string (tests/cli/test_portability.py is the only judge of these: it must not pass by
    finding nothing)."""
    bad = ('#define _GNU_SOURCE\n#include <sys/random.h>\n'
           'static const char *f(const char *p, size_t n) { return memrchr(p, 1, n); }\n'
           'int g(void) { return open("/proc/self/exe", O_RDONLY | O_TMPFILE); }\n'
           'long h(struct stat *st) { return st->st_mtim.tv_sec; }\n')
    got = [m.split(": ", 1)[1].split(":")[0] for _, m in findings("x.c", bad)]
    for want in ("_GNU_SOURCE", "<sys/random.h>", "memrchr", "O_TMPFILE", "/proc/", "st_mtim"):
        ctx.check(want in got, f"the scanner finds {want} in a made-up file: found {got}")
    fine = ('/* memrchr, O_TMPFILE, _GNU_SOURCE in a comment */\n'
            'static const char *s = "memmem and sigtimedwait in a string";\n'
            'int n_madvise_calls; struct x { int accept4_count; };\n')
    ctx.eq(findings("y.c", fine), [], "the scanner's findings in comments, strings and longer names")
    guarded = ('#define _GNU_SOURCE\n#if defined(__linux__)\nint f(void) { return memfd_create("m", 0); }\n#else\n'
               'int f(void) { return -1; }\n#endif\n#ifndef MAP_POPULATE\n#define MAP_POPULATE 0\n#endif\n'
               'int g(void) { return MAP_POPULATE; }\nint h(pthread_barrier_t *b) { return pthread_barrier_wait(b); }\n')
    got = [m.split(": ", 1)[1].split(":")[0] for _, m in findings("z.c", guarded, strict=False)]
    ctx.eq(got, ["pthread_barrier_wait"], "outside src/: a use under a platform's #if or with a fallback is accepted")


def main():
    ctx = tclib.Ctx()
    self_check(ctx)
    src = os.path.join(ctx.source, "src")
    scanned = 0
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".c", ".h", ".def")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, ctx.source)
            if rel == COMPAT:
                continue
            scanned += 1
            with open(path, encoding="utf-8", errors="replace") as fh:
                for _, msg in findings(rel, fh.read()):
                    ctx.fail(msg)
    ctx.check(scanned >= 80, f"src/'s C files scanned: {scanned}")
    others = 0
    for sub in ("tests/unit", "tests/fuzz", "tools", "bench"):
        for root, _, files in os.walk(os.path.join(ctx.source, sub)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    path = os.path.join(root, f)
                    others += 1
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        for _, msg in findings(os.path.relpath(path, ctx.source), fh.read(), strict=False):
                            ctx.fail(msg)
    ctx.check(others >= 40, f"the other programs' C files scanned: {others}")
    ctx.check(os.path.exists(os.path.join(ctx.source, COMPAT)), f"{COMPAT}: the one place for the extensions")
    ctx.done()


if __name__ == "__main__":
    main()
