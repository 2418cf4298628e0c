/*
 * flame_engine.c - the flame graph engine (src/analysis/flamesvg.c) against the
 * values FLAMEGRAPH-SVG.md reports from running upstream flamegraph.pl:
 * colours of "main" (§6.1), the differential example (§7), label truncation
 * (§2.1: a 59 px "libc.so`memcpy_[k]" reads "libc.s.."), counts with commas
 * (§3.1); and its own contract: the embeddable modes prefix every id and
 * carry a script (or none), a bad prefix is refused, and the shared script
 * can neither end a CDATA section nor an HTML <script>.
 */
#include "tc_base.h"
#include "tc_flame.h"
#include "tc_writer.h"
#include "unit.h"

#include <ctype.h>
#include <stdlib.h>

/* folded lines ("a;b 3", or "a;b 1 3" when differential) drawn with o */
static char *draw(const char *const *lines, bool diff, const tci_flame_opts *o, int *rc)
{
    tci_flame *f = tci_flame_new(diff);
    for (size_t i = 0; lines[i]; i++) {
        char *copy = strdup(lines[i]), *counts = strchr(copy, ' '), *save = NULL;
        *counts++ = 0;
        long long a = strtoll(counts, &counts, 10), b = diff ? strtoll(counts, NULL, 10) : a;
        uint32_t frame = TCI_FLAME_ROOT;
        for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save))
            frame = tci_flame_child(f, frame, tci_flame_name(f, t, strlen(t)));
        tci_flame_add(f, frame, b, a);
        free(copy);
    }
    unit_buf out = {0};
    tci_sink s;
    CHECK_EQ_INT(tci_sink_open_fn(&s, unit_to_buf, &out, false), TC_OK);
    *rc = tci_flame_render(f, o, &s);
    CHECK_EQ_INT(tci_sink_close(&s), TC_OK);
    tci_flame_free(f);
    return out.p ? out.p : strdup("");
}

/* The <g> of the frame whose tooltip starts with title: its text, or NULL. */
static char *frame_of(const char *svg, const char *title)
{
    char key[256];
    snprintf(key, sizeof key, "<title>%s", title);
    const char *p = strstr(svg, key);
    if (!p)
        return NULL;
    const char *end = strstr(p, "</g>");
    return strndup(p, (size_t)(end - p));
}

static void check_frame(const char *svg, const char *title, const char *has)
{
    char *g = frame_of(svg, title);
    if (!g || !strstr(g, has))
        fprintf(stderr, "frame '%s' lacks '%s': %s\n", title, has, g ? g : "(no such frame)");
    CHECK(g && strstr(g, has));
    free(g);
}

static void test_main_colours(void)
{
    static const char *const lines[] = {"main 1", NULL};
    struct { enum tci_flame_palette p; bool hash; const char *rgb; } cases[] = {
        {TCI_PAL_HOT, false, "rgb(243,179,42)"}, {TCI_PAL_JAVA, false, "rgb(242,112,112)"},
        {TCI_PAL_JAVA, true, "rgb(219,79,79)"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tci_flame_opts o = {.palette = cases[i].p, .hash = cases[i].hash, .minwidth = 0.1};
        int rc;
        char *svg = draw(lines, false, &o, &rc);
        CHECK_EQ_INT(rc, TC_OK);
        check_frame(svg, "main (1 samples, 100.00%)", cases[i].rgb);
        free(svg);
    }
}

static void test_differential_example(void)
{
    static const char *const lines[] = {"main;A;B 60 30", "main;A 20 20", "main;C 20 50", "main;D 0 10", NULL};
    tci_flame_opts o = {.palette = TCI_PAL_HOT, .minwidth = 0.1};
    int rc;
    char *svg = draw(lines, true, &o, &rc);
    CHECK_EQ_INT(rc, TC_OK);
    check_frame(svg, "B (30 samples, 27.27%; -27.27%)", "fill=\"rgb(0,0,255)\"");
    check_frame(svg, "C (50 samples, 45.45%; +27.27%)", "fill=\"rgb(255,0,0)\"");
    check_frame(svg, "D (10 samples, 9.09%; +9.09%)", "fill=\"rgb(255,140,140)\"");
    check_frame(svg, "A (50 samples, 45.45%; 0.00%)", "fill=\"rgb(255,255,255)\"");
    check_frame(svg, "main (110 samples, 100.00%; 0.00%)", "fill=\"rgb(255,255,255)\"");
    check_frame(svg, "all (110 samples, 100%)", "fill=\"rgb(255,255,255)\"");
    free(svg);
    o.negate = true; /* the hues and the sign swap */
    svg = draw(lines, true, &o, &rc);
    check_frame(svg, "B (30 samples, 27.27%; +27.27%)", "fill=\"rgb(255,0,0)\"");
    check_frame(svg, "C (50 samples, 45.45%; -27.27%)", "fill=\"rgb(0,0,255)\"");
    free(svg);
}

static void test_label_and_counts(void)
{
    static const char *const lines[] = {"libc.so`memcpy_[k] 5", "other 95", NULL};
    tci_flame_opts o = {.palette = TCI_PAL_HOT, .minwidth = 0.1, .countname = "us"};
    int rc;
    char *svg = draw(lines, false, &o, &rc);
    check_frame(svg, "libc.so`memcpy (5 us, 5.00%)", ">libc.s..</text>");
    check_frame(svg, "libc.so`memcpy (5 us, 5.00%)", "width=\"59.0\"");
    free(svg);
    static const char *const big[] = {"a 1234567", "b 1000", NULL};
    svg = draw(big, false, &o, &rc);
    check_frame(svg, "all (1,235,567 us, 100%)", "x=\"10.0\"");
    check_frame(svg, "a (1,234,567 us, 99.92%)", "<rect");
    check_frame(svg, "b (1,000 us, 0.08%)", "<rect");
    free(svg);
}

static void test_embedded_modes(void)
{
    static const char *const lines[] = {"main;work 3", "main 1", NULL};
    tci_flame_opts o = {.mode = TCI_FLAME_EMBED, .id_prefix = "g1", .minwidth = 0.1};
    int rc;
    char *svg = draw(lines, false, &o, &rc);
    CHECK_EQ_INT(rc, TC_OK);
    CHECK(!strncmp(svg, "<svg id=\"g1\" ", 13)); /* no prolog: an element for a page */
    static const char *const ids[] = {"frames", "details", "unzoom", "search", "ignorecase", "matched", "title",
                                      "background"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        char want[64], bare[64];
        snprintf(want, sizeof want, "id=\"g1-%s\"", ids[i]);
        snprintf(bare, sizeof bare, "id=\"%s\"", ids[i]);
        CHECK(strstr(svg, want) != NULL);
        CHECK(strstr(svg, bare) == NULL);
    }
    CHECK(strstr(svg, "#g1 #g1-frames > *:hover") != NULL); /* its CSS is its own */
    CHECK(strstr(svg, "<script") != NULL && strstr(svg, "tcFlame(document.getElementById(\"g1\"), \"g1-\")"));
    free(svg);
    o.mode = TCI_FLAME_EMBED_NOSCRIPT;
    svg = draw(lines, false, &o, &rc);
    CHECK(strstr(svg, "<script") == NULL && strstr(svg, "data-tc-flame=\"g1-\"") != NULL);
    free(svg);
    static const char *const bad[] = {NULL, "", "1a", "a b", "a\"", "a<", "x]]>"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o.id_prefix = bad[i];
        svg = draw(lines, false, &o, &rc);
        CHECK_EQ_INT(rc, TC_ERR_USAGE);
        free(svg);
    }
}

static void test_script_cannot_end_its_element(void)
{
    const char *s = tci_flame_script();
    CHECK(strstr(s, "]]>") == NULL);
    char *lower = strdup(s);
    for (char *p = lower; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    CHECK(strstr(lower, "</script") == NULL);
    CHECK(strstr(lower, "<!--") == NULL);
    CHECK(strstr(s, "function tcFlame(svg, pfx)") != NULL);
    free(lower);
}

/* Frames appended without lookup (a fresh thread) are found by a later lookup (a second
 * tree under the same frame, as diff and same-named threads do): never made twice. */
static void test_fresh_frames_found_by_lookup(void)
{
    tci_flame *f = tci_flame_new(false);
    uint32_t a = tci_flame_name(f, "a", 1), b = tci_flame_name(f, "b", 1), c = tci_flame_name(f, "c", 1);
    uint32_t top = tci_flame_child(f, TCI_FLAME_ROOT, a);
    CHECK(!tci_flame_has_children(f, top));
    uint32_t fb = tci_flame_new_child(f, top, b), fc = tci_flame_new_child(f, top, c);
    uint32_t fbc = tci_flame_new_child(f, fb, c);
    CHECK(tci_flame_has_children(f, top) && tci_flame_has_children(f, fb) && !tci_flame_has_children(f, fc));
    CHECK_EQ_INT(tci_flame_child(f, top, b), fb);
    CHECK_EQ_INT(tci_flame_child(f, top, c), fc);
    CHECK_EQ_INT(tci_flame_child(f, fb, c), fbc);
    uint32_t fbb = tci_flame_child(f, fb, b); /* new under an indexed parent, then found */
    CHECK(fbb != fbc && fbb != TCI_NONE);
    CHECK_EQ_INT(tci_flame_child(f, fb, b), fbb);
    CHECK_EQ_INT(tci_flame_child(f, TCI_FLAME_ROOT, a), top);
    tci_flame_free(f);
}

int main(void)
{
    UNIT_RUN(test_fresh_frames_found_by_lookup);
    UNIT_RUN(test_main_colours);
    UNIT_RUN(test_differential_example);
    UNIT_RUN(test_label_and_counts);
    UNIT_RUN(test_embedded_modes);
    UNIT_RUN(test_script_cannot_end_its_element);
    return UNIT_DONE();
}
