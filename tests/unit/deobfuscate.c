/*
 * deobfuscate.c - the mapping parser and resolver (src/transform/deobfuscate.c)
 * on mappings written here, each expected name following from
 * the format spec's rules (docs/formats/DEOBFUSCATION.md in the team's
 * shared notes: §3 grammar, §5 JSON,
 * §7 resolution), not from the code: the index errors with their line
 * numbers, the method table renamed (ART methods and text names), the
 * figures counted.
 */
#include "tc_deobf.h"
#include "tc_diag.h"
#include "tc_options.h"
#include "tc_trace.h"
#include "unit.h"

#include <stdlib.h>

typedef struct fixture {
    tci_trace t;
    tci_diag d;
    tci_options o;
    tci_deobf *m;
} fixture;

static void begin(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->d.input = "trace";
    CHECK_EQ_INT(tci_trace_init(&f->t), TC_OK);
}

static void end(fixture *f)
{
    tci_deobf_free(f->m);
    tci_trace_free(&f->t);
    for (size_t i = 0; i < f->d.n_kept; i++)
        free(f->d.kept[i]);
}

static uint32_t art(fixture *f, uint64_t id, const char *cls, const char *name, const char *sig, const char *file)
{
    CHECK_EQ_INT(tci_trace_define_method(&f->t, id, cls, strlen(cls), name, strlen(name), sig, strlen(sig), file,
                                         strlen(file), -1),
                 TC_OK);
    return tci_trace_method(&f->t, id);
}

/* Index the mapping, rename the table, make the display names. */
static int apply(fixture *f, const char *mapping)
{
    int rc = tci_deobf_open_memory(&f->m, mapping, strlen(mapping), "map.txt", &f->o, &f->d);
    if (rc != TC_OK)
        return rc;
    if ((rc = tci_deobf_apply(f->m, &f->t, &f->d)) != TC_OK)
        return rc;
    return tci_trace_finalize(&f->t, &f->d, &f->o);
}

static const char *full(fixture *f, uint32_t m) { return f->t.methods[m].full_name; }
static const char *file(fixture *f, uint32_t m) { return f->t.methods[m].file; }

static void test_overloads_by_whole_descriptor(void)
{
    fixture f;
    begin(&f);
    /* §11 example 1 plus a renamed type: five methods named 'a' in one class */
    uint32_t m1 = art(&f, 4, "a.a", "a", "(II)Z", "SourceFile");
    uint32_t m2 = art(&f, 8, "a.a", "a", "(II)V", "SourceFile");
    uint32_t m3 = art(&f, 12, "a.a", "a", "(La/b;)La/b;", "SourceFile");
    uint32_t m4 = art(&f, 16, "a.a", "b", "()V", "SourceFile");
    CHECK_EQ_INT(apply(&f, "com.x.Util -> a.a:\n"
                           "    10:10:void foo(int):10:10 -> a\n"
                           "    11:11:void foo(int, int):11:11 -> a\n"
                           "    13:13:boolean foo(int,int):13:13 -> a\n"
                           "    com.x.Item copy(com.x.Item) -> a\n"
                           "com.x.Item -> a.b:\n"),
                 TC_OK);
    CHECK_EQ_STR(full(&f, m1), "com.x.Util.foo: (II)Z");
    CHECK_EQ_STR(full(&f, m2), "com.x.Util.foo: (II)V");
    CHECK_EQ_STR(full(&f, m3), "com.x.Util.copy: (Lcom/x/Item;)Lcom/x/Item;");
    CHECK_EQ_STR(full(&f, m4), "com.x.Util.b: ()V"); /* not renamed: the class only (§7.3) */
    CHECK_EQ_STR(file(&f, m1), "Util.java");
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_METHODS], 4);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_CLASSES], 1);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_AMBIGUOUS], 0);
    end(&f);
}

static void test_inline_group_outermost_and_residual(void)
{
    fixture f;
    begin(&f);
    uint32_t r = art(&f, 4, "c.f", "b", "(La/a;)V", "SourceFile");
    uint32_t l = art(&f, 8, "c.g", "run", "()V", "SourceFile");
    CHECK_EQ_INT(apply(&f, "# {'id':'com.android.tools.r8.mapping','version':'2.2'}\n"
                           "com.example.feed.FeedPresenter -> c.f:\n"
                           "# {id:'sourceFile',fileName:'FeedPresenter.kt'}\n"
                           "\t1:1:void com.example.util.Checks.notNull(java.lang.Object):8:8 -> b\r\n"
                           "\t1:1:void refresh(com.example.model.User,boolean):30 -> b\r\n"
                           "      # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"(La/a;)V\"}\n"
                           "com.example.feed.FeedPresenter$$ExternalSyntheticLambda0 -> c.g:\n"
                           "# {\"id\":\"com.android.tools.r8.synthesized\"}\n"
                           "    1:1:void com.example.feed.FeedPresenter.start$lambda$0(com.example.feed.FeedPresenter):22:22 -> run\n"
                           "      # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"()V\"}\n"
                           "com.example.model.User -> a.a:\n"),
                 TC_OK);
    CHECK_EQ_STR(full(&f, r), "com.example.feed.FeedPresenter.refresh: (Lcom/example/model/User;Z)V");
    CHECK_EQ_STR(file(&f, r), "FeedPresenter.kt");
    CHECK_EQ_STR(full(&f, l), "com.example.feed.FeedPresenter.start$lambda$0: (Lcom/example/feed/FeedPresenter;)V");
    CHECK_EQ_STR(file(&f, l), "FeedPresenter.kt");
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_FALLBACK], 0);
    end(&f);
}

static void test_ambiguous_and_unmapped(void)
{
    fixture f;
    begin(&f);
    uint32_t a = art(&f, 4, "a.a", "a", "(I)V", "SourceFile");
    uint32_t u = art(&f, 8, "android.view.View", "post", "(La/b;)Z", "View.java");
    CHECK_EQ_INT(apply(&f, "com.x.Util -> a.a:\n    void stop(int) -> a\n    void start(int) -> a\n"
                           "com.x.Item -> a.b:\n"),
                 TC_OK);
    CHECK_EQ_STR(full(&f, a), "com.x.Util.start | com.x.Util.stop: (I)V"); /* sorted */
    CHECK_EQ_STR(full(&f, u), "android.view.View.post: (Lcom/x/Item;)Z");
    CHECK_EQ_STR(file(&f, u), "View.java");
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_AMBIGUOUS], 1);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_UNMAPPED], 1);
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_METHODS], 0);
    end(&f);
}

static void test_text_names(void)
{
    fixture f;
    begin(&f);
    const char *dex = "a.a.a: (La/b;)V", *bare = "a.a.b", *java = "a.a.a: (a.b)void", *other = "hello world";
    uint32_t d = tci_trace_timeline_name(&f.t, dex, strlen(dex));
    uint32_t b = tci_trace_name(&f.t, bare, strlen(bare));
    uint32_t j = tci_trace_name_split(&f.t, java, strlen(java), 5);
    uint32_t o = tci_trace_name(&f.t, other, strlen(other));
    CHECK_EQ_INT(apply(&f, "com.x.Util -> a.a:\n    void use(com.x.Item) -> a\n    void use(int) -> a\n"
                           "    void go() -> b\ncom.x.Item -> a.b:\n"),
                 TC_OK);
    CHECK_EQ_STR(full(&f, d), "com.x.Util.use: (Lcom/x/Item;)V");
    CHECK_EQ_STR(f.t.methods[d].short_name, "com.x.Util.use");
    CHECK_EQ_STR(full(&f, b), "com.x.Util.go");
    CHECK_EQ_STR(full(&f, j), "com.x.Util.use: (com.x.Item)void");
    CHECK_EQ_STR(full(&f, o), "hello world");
    /* the table's keys keep the text a reader finds them by in pass 2 */
    CHECK_EQ_INT(tci_trace_timeline_name(&f.t, dex, strlen(dex)), d);
    end(&f);
}

static void test_index_errors_name_their_line(void)
{
    static const struct {
        const char *map, *words;
    } bad[] = {
        {"", "the mapping is empty"},
        {"# only a comment\n", "no class line"},
        {"com.x.A -> a.a:\ncom.x.B a.b:\n", "line 2: a class line must be"},
        {"com.x.A -> a.a:\n\ncom.x.B -> a.b\n", "line 3: a class line must end in ':'"},
        {"    void f() -> a\n", "line 1: a member line before the first class line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fixture f;
        begin(&f);
        CHECK_EQ_INT(tci_deobf_open_memory(&f.m, bad[i].map, strlen(bad[i].map), "map.txt", &f.o, &f.d),
                     TC_ERR_FORMAT);
        CHECK(f.m == NULL);
        CHECK(strstr(f.d.error, bad[i].words) != NULL);
        CHECK(strstr(f.d.error, "map.txt") != NULL);
        if (!strstr(f.d.error, bad[i].words))
            fprintf(stderr, "  case %zu: %s\n", i, f.d.error);
        end(&f);
    }
    /* a line longer than max-string */
    fixture f;
    begin(&f);
    f.o.max_string = 32;
    const char *longline = "com.example.a.very.long.package.name.Klass -> a.a:\n";
    CHECK_EQ_INT(tci_deobf_open_memory(&f.m, longline, strlen(longline), "map.txt", &f.o, &f.d), TC_ERR_FORMAT);
    CHECK(strstr(f.d.error, "longer than 32 bytes") != NULL);
    end(&f);
}

static void test_member_errors_only_for_used_classes(void)
{
    const char *map = "com.x.A -> a.a:\n    void f(int -> a\ncom.x.B -> a.b:\n    void g() -> a\n";
    fixture f;
    begin(&f);
    uint32_t m = art(&f, 4, "a.b", "a", "()V", "SourceFile"); /* a.a's bad line is never parsed */
    CHECK_EQ_INT(apply(&f, map), TC_OK);
    CHECK_EQ_STR(full(&f, m), "com.x.B.g: ()V");
    end(&f);
    begin(&f);
    art(&f, 4, "a.a", "a", "(I)V", "SourceFile");
    CHECK_EQ_INT(apply(&f, map), TC_ERR_FORMAT);
    CHECK(strstr(f.d.error, "line 2: the parameter list is not closed") != NULL);
    end(&f);
}

static void test_lenient_lines_are_warnings(void)
{
    fixture f;
    begin(&f);
    uint32_t m = art(&f, 4, "a.a", "a", "()V", "SourceFile");
    uint32_t n = art(&f, 8, "a.a", "b", "()V", "SourceFile");
    CHECK_EQ_INT(apply(&f, "\xEF\xBB\xBF"
                           "com.x.A -> a.a:\n    5:3:void f():10:8 -> a junk\n    7:0:void g():4:0 -> b\n"
                           "com.x.C -> a.a:\n"),
                 TC_OK);
    CHECK_EQ_STR(full(&f, m), "com.x.A.f: ()V");
    CHECK_EQ_STR(full(&f, n), "com.x.A.g: ()V");
    CHECK_EQ_INT(f.d.fig[TCI_FIG_DEOBF_BAD_LINE], 2); /* junk after 'a'; a.a mapped twice */
    end(&f);
}

int main(void)
{
    UNIT_RUN(test_overloads_by_whole_descriptor);
    UNIT_RUN(test_inline_group_outermost_and_residual);
    UNIT_RUN(test_ambiguous_and_unmapped);
    UNIT_RUN(test_text_names);
    UNIT_RUN(test_index_errors_name_their_line);
    UNIT_RUN(test_member_errors_only_for_used_classes);
    UNIT_RUN(test_lenient_lines_are_warnings);
    return UNIT_DONE();
}
