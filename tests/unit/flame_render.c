#define _POSIX_C_SOURCE 200809L
/*
 * flame_render.c - the flame graph engine (src/analysis/flamesvg.c) on a folded
 * file, in any of its modes, for the tests: test_flamegraph.py compares its
 * differential graphs with flamegraph.pl's, test_flamegraph_browser.py puts
 * its embeddable graphs in an HTML page. Not installed.
 *
 *   flame_render [options] FOLDED > out.svg
 *     --mode document|embed|noscript   (default document)
 *     --prefix ID        id prefix of an embedded graph
 *     --diff             lines are "stack before after" (difffolded.pl)
 *     --negate --inverted --hash
 *     --minwidth PX      (default 0.1)
 *     --title T --subtitle T --countname T --colors PALETTE --width PX
 *   flame_render --script   the page-level script (tci_flame_script)
 *
 * A folded line "a;b;c 12" adds 12 to the self count of frame c under b
 * under a; frames are interned by (parent, name), as flamegraph.pl merges.
 */
#include "tc_base.h"
#include "tc_flame.h"
#include "tc_writer.h"

#include <stdio.h>
#include <stdlib.h>

static int usage(void)
{
    fputs("usage: flame_render [--mode document|embed|noscript] [--prefix ID] [--diff] [--negate] [--inverted]\n"
          "       [--hash] [--minwidth PX] [--title T] [--subtitle T] [--countname T] [--colors P] [--width PX]\n"
          "       FOLDED | --script\n", stderr);
    return 2;
}

/* The last space-separated number of line[0, *n), removed; -1 when there is none. */
static long long take_count(const char *line, size_t *n)
{
    size_t end = *n, start = end;
    while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9')
        start--;
    if (start == end || start == 0 || line[start - 1] != ' ')
        return -1;
    *n = start - 1;
    return strtoll(line + start, NULL, 10);
}

static int add_line(tci_flame *f, const char *line, size_t n, int diff)
{
    long long after = take_count(line, &n), before = 0;
    if (after < 0)
        return 0;
    if (diff && (before = take_count(line, &n)) < 0)
        return 0;
    uint32_t frame = TCI_FLAME_ROOT;
    for (size_t i = 0; i <= n;) {
        const char *semi = memchr(line + i, ';', n - i);
        size_t len = semi ? (size_t)(semi - line - i) : n - i;
        uint32_t name = tci_flame_name(f, line + i, len);
        if (name == TCI_NONE || (frame = tci_flame_child(f, frame, name)) == TCI_NONE)
            return -1;
        i += len + 1;
    }
    tci_flame_add(f, frame, after, before);
    return 0;
}

int main(int argc, char **argv)
{
    tci_flame_opts o = {.mode = TCI_FLAME_DOCUMENT, .minwidth = 0.1};
    int diff = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--script")) {
            fputs(tci_flame_script(), stdout);
            return 0;
        } else if (!strcmp(a, "--diff")) diff = 1;
        else if (!strcmp(a, "--negate")) o.negate = true;
        else if (!strcmp(a, "--inverted")) o.inverted = true;
        else if (!strcmp(a, "--hash")) o.hash = true;
        else if (!v) { if (a[0] == '-') return usage(); path = a; }
        else if (!strcmp(a, "--mode")) {
            o.mode = !strcmp(v, "embed") ? TCI_FLAME_EMBED : !strcmp(v, "noscript") ? TCI_FLAME_EMBED_NOSCRIPT
                                                                                     : TCI_FLAME_DOCUMENT;
            i++;
        } else if (!strcmp(a, "--prefix")) o.id_prefix = argv[++i];
        else if (!strcmp(a, "--minwidth")) o.minwidth = atof(argv[++i]);
        else if (!strcmp(a, "--title")) o.title = argv[++i];
        else if (!strcmp(a, "--subtitle")) o.subtitle = argv[++i];
        else if (!strcmp(a, "--countname")) o.countname = argv[++i];
        else if (!strcmp(a, "--width")) o.width = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--colors")) {
            int p = tci_flame_palette(argv[++i]);
            if (p < 0)
                return usage();
            o.palette = (enum tci_flame_palette)p;
        } else if (a[0] != '-') path = a;
        else return usage();
    }
    if (!path)
        return usage();
    FILE *in = fopen(path, "rb");
    tci_flame *f = tci_flame_new(diff);
    if (!in || !f) {
        perror(path);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, in)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        rc = add_line(f, line, (size_t)n, diff);
    }
    free(line);
    fclose(in);
    tci_sink sink;
    if (rc != 0 || tci_sink_open(&sink, stdout, false) != TC_OK) {
        tci_flame_free(f);
        return 1;
    }
    rc = tci_flame_render(f, &o, &sink);
    int closed = tci_sink_close(&sink);
    tci_flame_free(f);
    if (rc != TC_OK || closed != TC_OK) {
        fprintf(stderr, "flame_render: %s\n", tc_status_string(rc != TC_OK ? rc : closed));
        return 1;
    }
    return 0;
}
