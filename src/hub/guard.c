/*
 * guard.c - a mapped input that shrinks while it is read.
 *
 * Inputs are read through mmap (source.c; batch's in-place archive members
 * and serve's uploads through tc_guard_mapping). When the file is truncated
 * under the mapping, touching a page past its new end raises SIGBUS, which
 * by default kills the process: no message, a temporary file left behind,
 * and in batch the whole run gone. So every mapping of input bytes is
 * registered here, and one SIGBUS handler (installed once, process-wide: a
 * signal handler cannot be per conversion) answers a fault inside a
 * registered mapping by mapping anonymous zero pages over the rest of it and
 * marking it changed. The faulting instruction then runs again and reads
 * zeros; readers are fuzzed against any bytes, so they finish or fail, and
 * the conversion fails with "input changed while reading" whatever they did,
 * because conv.c checks the mark after the open and the write (normalize
 * also looks now and then, to stop early). Nothing unwinds: no longjmp out
 * of a reader, no lock taken in the handler.
 *
 * The table is the library's one piece of global mutable state, and it is
 * lock-free: a fixed array of slots whose fields are atomics, claimed with a
 * compare-and-swap, so a fault in any thread finds its mapping while other
 * threads register and release theirs. A fault outside every registered
 * mapping is passed to the handler that was installed before ours (or, if
 * there was none, the signal's default action: the process dies of SIGBUS
 * as it would have without us).
 */
#include "tc_compat.h"
#include "tc_diag.h"
#include "tc_reader.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

/* Mappings in use at once: one or two per running conversion (the input,
 * a deobfuscation mapping) plus what batch and serve workers register. */
#define GUARD_SLOTS 1024

enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_ACTIVE };

typedef struct guard_slot {
    atomic_uint state;
    atomic_uintptr_t start;
    atomic_size_t len;
    atomic_uintptr_t fault;      /* 0: intact; else 1 + offset of the first fault in the mapping */
    atomic_bool owned;           /* registered by the library itself (source.c) */
} guard_slot;

static guard_slot slots[GUARD_SLOTS];
static atomic_uint slots_used; /* every slot ever claimed is below this */
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static struct sigaction previous; /* written once, before our handler can run */
static bool installed;
static uintptr_t page_size;

#if !defined(ATOMIC_POINTER_LOCK_FREE) || ATOMIC_POINTER_LOCK_FREE != 2 || ATOMIC_INT_LOCK_FREE != 2 || \
    ATOMIC_BOOL_LOCK_FREE != 2
#error "guard.c needs lock-free atomics: the signal handler reads the table"
#endif

/* The fault was not ours: whoever handled SIGBUS before us, or the default action. */
static void chain(int sig, siginfo_t *info, void *uctx)
{
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) {
            previous.sa_sigaction(sig, info, uctx);
            return;
        }
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    /* the default action (a fault cannot be ignored: it would repeat forever) */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (info->si_code <= 0) /* sent by kill(), not a fault: it does not repeat by itself */
        raise(sig);
    /* a fault: returning runs the instruction again, which now dies of the signal */
}

/* Zero pages over [the faulting page, the end of the mapping) of slot s. */
static bool repair(guard_slot *s, uintptr_t addr)
{
    uintptr_t start = atomic_load(&s->start), len = atomic_load(&s->len);
    if (addr - start >= len)
        return false;
    uintptr_t from = addr & ~(page_size - 1), to = (start + len + page_size - 1) & ~(page_size - 1);
    void *p = tci_map_anon((void *)from, to - from, PROT_READ);
    if (p == MAP_FAILED)
        return false;
    uintptr_t intact = 0;
    atomic_compare_exchange_strong(&s->fault, &intact, addr - start + 1);
    return true;
}

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
    int saved_errno = errno;
    if (info && info->si_code > 0) { /* a fault of this thread, at si_addr */
        uintptr_t addr = (uintptr_t)info->si_addr;
        unsigned n = atomic_load(&slots_used);
        for (unsigned i = 0; i < n && i < GUARD_SLOTS; i++) {
            if (atomic_load(&slots[i].state) == SLOT_ACTIVE && repair(&slots[i], addr)) {
                errno = saved_errno;
                return;
            }
        }
    }
    chain(sig, info, uctx);
    errno = saved_errno;
}

static void install(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    page_size = ps > 0 ? (uintptr_t)ps : 4096;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    installed = sigaction(SIGBUS, &sa, &previous) == 0;
}

int tci_guard_add(const void *addr, size_t len, bool owned)
{
    if (!addr || !len)
        return -1;
    pthread_once(&install_once, install);
    if (!installed)
        return -1;
    for (unsigned i = 0; i < GUARD_SLOTS; i++) {
        unsigned free_slot = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &free_slot, SLOT_CLAIMED))
            continue;
        atomic_store(&slots[i].start, (uintptr_t)addr);
        atomic_store(&slots[i].len, len);
        atomic_store(&slots[i].fault, 0);
        atomic_store(&slots[i].owned, owned);
        unsigned used = atomic_load(&slots_used);
        while (used < i + 1 && !atomic_compare_exchange_weak(&slots_used, &used, i + 1))
            ;
        atomic_store(&slots[i].state, SLOT_ACTIVE); /* last: the handler sees a whole entry */
        return (int)i;
    }
    return -1; /* full: the mapping is read unguarded (a shrinking file then kills, as before) */
}

void tci_guard_remove(int slot)
{
    if (slot >= 0 && slot < GUARD_SLOTS)
        atomic_store(&slots[slot].state, SLOT_FREE);
}

uint64_t tci_guard_fault(int slot, const void *data)
{
    if (slot < 0 || slot >= GUARD_SLOTS || atomic_load(&slots[slot].state) != SLOT_ACTIVE)
        return 0;
    uintptr_t fault = atomic_load(&slots[slot].fault), base = (uintptr_t)data - atomic_load(&slots[slot].start);
    if (!fault)
        return 0;
    return fault - 1 >= base ? fault - base : 1; /* 1 + the offset in data (a fault before it: 0) */
}

int tci_guard_find(const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr;
    unsigned n = atomic_load(&slots_used);
    for (unsigned i = 0; i < n && i < GUARD_SLOTS; i++) {
        if (atomic_load(&slots[i].state) != SLOT_ACTIVE)
            continue;
        uintptr_t start = atomic_load(&slots[i].start), l = atomic_load(&slots[i].len);
        if (a - start < l && len <= l - (a - start))
            return (int)i;
    }
    return -1;
}

int tci_guard_error(tci_diag *d, uint64_t offset)
{
    d->error[0] = 0; /* whatever the reader made of the zeros, this is why it failed */
    return tci_error(d, TC_ERR_IO, "input", offset,
                     "input changed while reading (the file shrank or was rewritten during the conversion: "
                     "its bytes from here on were gone)");
}

/* ---- the public calls, for a caller that maps input itself (batch, serve) ---- */

int tc_guard_mapping(const void *addr, size_t len)
{
    if (!addr || !len)
        return TC_ERR_USAGE;
    return tci_guard_add(addr, len, false) >= 0 ? TC_OK : TC_ERR_LIMIT;
}

/* The caller's slot holding addr (the start it registered). */
static int caller_slot(const void *addr)
{
    unsigned n = atomic_load(&slots_used);
    for (unsigned i = 0; i < n && i < GUARD_SLOTS; i++)
        if (atomic_load(&slots[i].state) == SLOT_ACTIVE && !atomic_load(&slots[i].owned) &&
            atomic_load(&slots[i].start) == (uintptr_t)addr)
            return (int)i;
    return -1;
}

int tc_mapping_changed(const void *addr)
{
    int slot = caller_slot(addr);
    return slot < 0 ? TC_ERR_USAGE : tci_guard_fault(slot, addr) != 0;
}

int tc_unguard_mapping(const void *addr)
{
    int slot = caller_slot(addr);
    if (slot < 0)
        return TC_ERR_USAGE;
    int changed = tci_guard_fault(slot, addr) != 0;
    tci_guard_remove(slot);
    return changed;
}
