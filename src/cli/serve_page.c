/*
 * serve_page.c - the pages and fixed assets of `traceconv serve`.
 *
 * Every page is served under a Content-Security-Policy without 'unsafe-inline':
 * its script and style are the fixed assets /static/serve.js and /static/serve.css
 * (script-src 'self'), so no page carries inline code and nothing written into a
 * page (a file name, a method name from the trace) can run: it is escaped, and
 * would not be allowed to run if it were not. The flame graphs are their own SVG
 * documents (each with its own inline script), shown in sandboxed iframes that
 * give them an opaque origin: their script cannot reach the page.
 *
 * Fully offline: no external script, font or style. The only external address is
 * ui.perfetto.dev, opened on request by the "Open in Perfetto UI" button.
 */
#include "serve.h"
#include "../util/escape.h" /* the library's escaping rules, compiled in (CMakeLists.txt) */
#include "traceconv.h"

#include <stdlib.h>
#include <string.h>

/* The pages' style and script (src/assets/serve.css, serve.js) and icon (src/assets/icon.svg). */
static const char css[] = {
#include "serve.css.h"
    0};

/* The upload form posts (multipart) to /upload: without script the server answers with a
 * redirect to the result or an error page; with script the upload shows its progress and
 * asks for JSON (Accept: application/json). The result page's buttons: flame graph tabs
 * (they change the iframe's address) and "Open in Perfetto UI" (ui.perfetto.dev's
 * documented postMessage protocol: PING until PONG, then the trace's bytes). */
static const char js[] = {
#include "serve.js.h"
    0};

/* a page without an icon link makes the browser ask for /favicon.ico (a 404 in its console) */
static const char icon[] = {
#include "icon.svg.h"
    0};

static const srv_asset assets[] = {
    {"/static/icon.svg", "image/svg+xml", icon},
    {"/static/serve.css", "text/css; charset=utf-8", css},
    {"/static/serve.js", "text/javascript; charset=utf-8", js},
};

const srv_asset *srv_asset_find(const char *path)
{
    for (size_t i = 0; i < sizeof assets / sizeof *assets; i++)
        if (!strcmp(assets[i].name, path))
            return &assets[i];
    return NULL;
}

/* escape.h's writer: the bytes into a page */
static void put_file(void *fp, const char *p, size_t n) { fwrite(p, 1, n, fp); }

void srv_html_escape(FILE *fp, const char *s) { tci_esc_markup(put_file, fp, s, strlen(s), TCI_ESC_REPLACE); }

static void page_head(FILE *fp, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          fp);
    srv_html_escape(fp, title);
    fputs("</title>\n<link rel=\"stylesheet\" href=\"/static/serve.css\">\n"
          "<link rel=\"icon\" href=\"/static/icon.svg\" type=\"image/svg+xml\">\n"
          "<script src=\"/static/serve.js\" defer></script></head>\n<body>\n"
          "<header><h1><a href=\"/\">traceconv</a></h1><span class=\"hint\">Android method traces to flame "
          "graphs, reports and every format</span></header>\n<main>\n",
          fp);
}

static char *finish_memstream(FILE *fp, char **buf)
{
    if (fclose(fp) != 0) {
        free(*buf);
        return NULL;
    }
    return *buf;
}

/* A size in a message: the page says the limits in the words the store and serve.c use too. */
void srv_human_size(uint64_t n, char *out, size_t len)
{
    static const char units[] = "KMG";
    for (int k = 2; k >= 0; k--) {
        uint64_t unit = (uint64_t)1 << (10 * (k + 1));
        if (n >= unit) {
            if (n % unit)
                snprintf(out, len, "%.1f%c", (double)n / (double)unit, units[k]);
            else
                snprintf(out, len, "%llu%c", (unsigned long long)(n / unit), units[k]);
            return;
        }
    }
    snprintf(out, len, "%llu bytes", (unsigned long long)n);
}

char *srv_index_page(const srv_caps *caps)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp)
        return NULL;
    page_head(fp, "traceconv");
    char upload[32], keep[32];
    srv_human_size(caps->max_upload, upload, sizeof upload);
    srv_human_size(caps->keep_bytes, keep, sizeof keep);
    fputs("<section><h2>Convert a trace</h2>\n", fp);
    /* the limits, so that the script says "too large" before sending a file the server would refuse */
    fprintf(fp,
            "<form id=\"upload\" action=\"/upload\" method=\"post\" enctype=\"multipart/form-data\" "
            "data-max-upload=\"%llu\" data-max-upload-text=\"%s\" data-keep-size=\"%llu\" "
            "data-keep-size-text=\"%s\">\n",
            (unsigned long long)caps->max_upload, upload, (unsigned long long)caps->keep_bytes, keep);
    fputs("<div id=\"drop\"><label for=\"trace\">Choose or drop a trace</label>\n"
          "<input type=\"file\" id=\"trace\" name=\"trace\" required>\n<div id=\"chosen\" class=\"hint\"></div>\n"
          "<div class=\"hint\">ART/Dalvik .trace, legacy key/data, RheaTrace/btrace, systrace/atrace, Chrome "
          "JSON, traceconv IR; gzip too</div></div>\n",
          fp);
    fprintf(fp,
            "<label for=\"deobfuscate\">ProGuard/R8 mapping (optional)</label>\n"
            "<input type=\"file\" id=\"deobfuscate\" name=\"deobfuscate\"%s>\n%s",
            caps->deobfuscate ? "" : " disabled",
            caps->deobfuscate ? "" : "<div class=\"hint\">This traceconv cannot deobfuscate yet.</div>\n");
    fputs("<label for=\"mapping\">Rhea method mapping (optional: methodMapping.txt, sampling-mapping)</label>\n"
          "<input type=\"file\" id=\"mapping\" name=\"mapping\">\n"
          "<p><button type=\"submit\" id=\"go\">Convert</button> <span id=\"state\" class=\"hint\"></span></p>\n"
          "<progress id=\"progress\" max=\"1\" value=\"0\" hidden></progress>\n"
          "<div id=\"error\" class=\"error\" role=\"alert\" hidden></div>\n"
          "</form></section>\n"
          "<section><h2>For scripts</h2><pre>curl --data-binary @app.trace -o app.pb.gz "
          "'http://HOST/api/convert?to=pprof'\ncurl -F trace=@app.trace -o app.svg "
          "'http://HOST/api/convert?to=flamegraph&amp;weight=cpu'\ncurl http://HOST/api/formats</pre></section>\n"
          "</main></body></html>\n",
          fp);
    return finish_memstream(fp, &buf);
}

char *srv_error_page(int status, const char *line)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp)
        return NULL;
    char title[64];
    snprintf(title, sizeof title, "traceconv: error %d", status);
    page_head(fp, title);
    fputs("<section><h2>The trace could not be converted</h2>\n<div id=\"error\" class=\"error\" role=\"alert\">", fp);
    srv_html_escape(fp, line);
    fputs("</div>\n<p><a class=\"button\" href=\"/\">Try another trace</a></p></section>\n</main></body></html>\n", fp);
    return finish_memstream(fp, &buf);
}

/* ---- the result page ---- */

/* The text report, in lines (the first 4 MiB of it: the excerpts are at its start
 * and in its thread sections; a larger report is a download). */
typedef struct lines {
    char *text;
    char **line;
    size_t n;
} lines;

static int read_lines(const char *path, lines *l)
{
    memset(l, 0, sizeof *l);
    FILE *fp = path ? fopen(path, "rb") : NULL;
    if (!fp)
        return -1;
    size_t cap = 4u << 20;
    l->text = malloc(cap + 1);
    size_t got = l->text ? fread(l->text, 1, cap, fp) : 0;
    fclose(fp);
    if (!l->text)
        return -1;
    l->text[got] = 0;
    size_t n = 1;
    for (size_t i = 0; i < got; i++)
        n += l->text[i] == '\n';
    l->line = malloc(n * sizeof *l->line);
    if (!l->line) {
        free(l->text);
        return -1;
    }
    for (char *p = l->text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        l->line[l->n++] = p;
    }
    return 0;
}

static size_t find_line(const lines *l, size_t from, const char *prefix)
{
    for (size_t i = from; i < l->n; i++)
        if (!strncmp(l->line[i], prefix, strlen(prefix)))
            return i;
    return l->n;
}

static void pre_lines(FILE *fp, const lines *l, size_t from, size_t to, const char *id)
{
    fprintf(fp, "<pre id=\"%s\">", id);
    for (size_t i = from; i < to && i < l->n; i++) {
        srv_html_escape(fp, l->line[i]);
        fputc('\n', fp);
    }
    fputs("</pre>\n", fp);
}

static const char *after_label(const char *line, const char *label)
{
    const char *p = strstr(line, label);
    if (!p)
        return "";
    p += strlen(label);
    while (*p == ' ')
        p++;
    return p;
}

/* The report's top methods (all threads), the parents and children of the first of
 * them, and a table of the threads' figures. The script takes the same excerpts, by the
 * same rules, from the report of the selection when one is applied (serve.js, excerpts). */
static void report_excerpts(FILE *fp, const lines *l)
{
    size_t all = find_line(l, 0, "All threads");
    size_t head = find_line(l, all, "index ");
    size_t end = head;
    while (end < l->n && l->line[end][0] && end < head + 31)
        end++;
    fputs("<h3 id=\"top-methods-title\">Top methods (all threads)</h3>\n", fp);
    if (head < l->n)
        pre_lines(fp, l, all, end, "top-methods");
    size_t pc = find_line(l, head, "Parents and children");
    size_t pch = find_line(l, pc, "index ");
    size_t pce = pch, seps = 0;
    while (pce < l->n && l->line[pce][0] && seps < 13)
        seps += !strncmp(l->line[pce++], "-----", 5);
    fputs("<h3 id=\"parents-children-title\">Parents and children (the first methods)</h3>\n", fp);
    if (pch < l->n)
        pre_lines(fp, l, pch, pce, "parents-children");
    fputs("<h3>Threads</h3>\n<table id=\"threads\"><thead><tr><th>thread</th><th>span</th><th>in methods</th>"
          "<th>calls</th><th>methods</th></tr></thead><tbody>\n",
          fp);
    for (size_t i = find_line(l, 0, "Thread "); i + 4 < l->n; i = find_line(l, i + 1, "Thread ")) {
        fputs("<tr><td>", fp);
        srv_html_escape(fp, l->line[i] + 7);
        const char *labels[] = {"span", "in methods", "calls", "methods"};
        for (size_t k = 0; k < 4; k++) {
            fputs("</td><td>", fp);
            srv_html_escape(fp, after_label(l->line[i + 1 + k], labels[k]));
        }
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

static const char *const flame_tab[4] = {"Wall, per thread", "CPU, per thread", "Wall, merged", "CPU, merged"};

/* The selection's controls: the same as the command's options (thread, since/until, weight,
 * reverse, ignore-idle; focus, ignore and callers, methods named as the command takes them). Only fixed markup here: the script fills the thread picker from the
 * result's SRV_INFO_FILE (names as text nodes, never markup) and adds the selection to the
 * address of every view and download (data-writer: which options each takes, from
 * /api/formats), so the server converts the kept upload with it when one is looked at. The
 * time bar draws the ticked threads' activity (data-activity: the activity writer's output,
 * the calls and samples per bin of the whole trace), so one sees where a thread is busy
 * before choosing since/until; data-report is the text report the excerpts come from. */
static void selection_section(FILE *fp, const srv_result_facts *f)
{
    fprintf(fp, "<section id=\"view\"><h2>Selection</h2>\n"
                "<form id=\"select\" data-info=\"/r/%s/%s\" data-report=\"/r/%s/report.txt\"", f->id,
            SRV_INFO_FILE, f->id);
    if (f->activity)
        fprintf(fp, " data-activity=\"/r/%s/%s\"", f->id, f->activity);
    fputs(">\n", fp);
    fputs("<div class=\"controls\">\n"
          "<fieldset id=\"threads-pick\"><legend>Threads</legend>\n"
          "<div id=\"thread-list\" class=\"thread-list\"></div>\n"
          "<p class=\"hint\">None ticked: every thread.</p></fieldset>\n"
          "<fieldset><legend>Time range</legend>\n"
          "<div id=\"timeline\" class=\"timeline\" title=\"drag to choose a time range\">"
          "<div id=\"brush\" class=\"brush\" hidden></div></div>\n"
          "<p class=\"hint\" id=\"activity-what\"></p>\n"
          "<label class=\"inline\">since <input id=\"since\" name=\"since\" size=\"10\" placeholder=\"0s\" "
          "autocomplete=\"off\"></label>\n"
          "<label class=\"inline\">until <input id=\"until\" name=\"until\" size=\"10\" placeholder=\"end\" "
          "autocomplete=\"off\"></label>\n"
          "<p class=\"hint\" id=\"duration\"></p></fieldset>\n"
          "<fieldset><legend>View</legend>\n"
          "<label class=\"inline\">weight <select id=\"weight\" name=\"weight\"><option value=\"wall\">wall time"
          "</option><option value=\"cpu\">CPU time</option></select></label>\n"
          "<label class=\"inline\"><input type=\"checkbox\" id=\"reverse\" name=\"reverse\"> bottom-up</label>\n"
          "<label class=\"inline\"><input type=\"checkbox\" id=\"ignore-idle\" name=\"ignore-idle\"> ignore idle "
          "waits</label></fieldset>\n"
          "<fieldset id=\"methods\"><legend>Methods</legend>\n"
          "<label class=\"inline\">focus <input id=\"focus\" name=\"focus\" size=\"18\" "
          "placeholder=\"onCreate\" autocomplete=\"off\"></label>\n"
          "<label class=\"inline\">ignore <input id=\"ignore\" name=\"ignore\" size=\"18\" "
          "placeholder=\"Object.wait\" autocomplete=\"off\"></label>\n"
          "<label class=\"inline\">callers of <input id=\"callers\" name=\"callers\" size=\"18\" "
          "placeholder=\"LayoutInflater.inflate\" autocomplete=\"off\"></label>\n"
          "<p class=\"hint\">A method's name, Class.method or a glob on pkg.Class.method; callers of: the flame "
          "graph and the report rooted at it, each call's time by its callers.</p></fieldset>\n</div>\n"
          "<p><button type=\"submit\" id=\"apply\">Apply</button> "
          "<button type=\"button\" id=\"show-all\" class=\"plain\">Whole trace</button> "
          "<span id=\"select-state\" class=\"hint\"></span></p>\n"
          "<div id=\"select-error\" class=\"error\" role=\"alert\" hidden></div>\n"
          "<p class=\"hint\">The flame graph, the report, its excerpts and every download below show the "
          "selection, converted when looked at.</p>\n"
          "</form></section>\n",
          fp);
}

static void flame_section(FILE *fp, const srv_result_facts *f)
{
    int first = -1;
    /* narrow padding: a 1200-px graph fits its frame in a 1280-px window */
    fputs("<section class=\"wide\"><h2>Flame graph</h2>\n<div class=\"tabs\" role=\"tablist\">\n", fp);
    for (int i = 0; i < 4; i++) {
        if (f->flames[i] && first < 0)
            first = i;
        if (f->flames[i])
            fprintf(fp, "<button type=\"button\" class=\"tab\" role=\"tab\" aria-selected=\"%s\" "
                        "data-src=\"/r/%s/%s\" data-writer=\"flamegraph\" data-weight=\"%s\" "
                        "data-merged=\"%d\">%s</button>\n",
                    i == first ? "true" : "false", f->id, f->flames[i], i & 1 ? "cpu" : "wall", i >= 2,
                    flame_tab[i]);
        else {
            fprintf(fp, "<button type=\"button\" class=\"tab\" disabled data-weight=\"%s\" data-merged=\"%d\" title=\"",
                    i & 1 ? "cpu" : "wall", i >= 2);
            srv_html_escape(fp, f->flame_why[i] && *f->flame_why[i] ? f->flame_why[i] : "not available");
            fprintf(fp, "\">%s</button>\n", flame_tab[i]);
        }
    }
    fputs("</div>\n", fp);
    if (first >= 0)
        fprintf(fp,
                "<iframe id=\"flame\" title=\"flame graph\" sandbox=\"allow-scripts\" src=\"/r/%s/%s\" "
                "data-writer=\"flamegraph\"></iframe>\n"
                "<p class=\"hint\">Click a frame to zoom, Ctrl-F or Search to find methods.</p>\n",
                f->id, f->flames[first]);
    else {
        fputs("<p class=\"why\">No flame graph: ", fp);
        srv_html_escape(fp, f->flame_why[0] ? f->flame_why[0] : "");
        fputs("</p>\n", fp);
    }
    fputs("</section>\n", fp);
}

int srv_result_page(FILE *fp, const srv_result_facts *f)
{
    char title[SRV_NAME_MAX + 32];
    snprintf(title, sizeof title, "%s - traceconv", f->display);
    page_head(fp, title);
    fputs("<section id=\"facts\"><h2>", fp);
    srv_html_escape(fp, f->display);
    fputs("</h2>\n<dl><dt>input</dt><dd id=\"summary\">", fp);
    srv_html_escape(fp, f->summary ? f->summary : "");
    fputs("</dd><dt>figures</dt><dd id=\"figures\">", fp);
    srv_html_escape(fp, f->figures);
    fputs("</dd></dl>\n", fp);
    if (f->warnings && f->warnings[0]) {
        fputs("<h3>Warnings</h3><ul id=\"warnings\">\n", fp);
        for (size_t i = 0; f->warnings[i]; i++) {
            fputs("<li>", fp);
            srv_html_escape(fp, f->warnings[i]);
            fputs("</li>\n", fp);
        }
        fputs("</ul>\n", fp);
    }
    for (size_t i = 0; f->hints && f->hints[i]; i++) { /* advice such as the minified names' --deobfuscate */
        fputs("<p class=\"hint\">", fp);
        srv_html_escape(fp, f->hints[i]);
        fputs("</p>\n", fp);
    }
    fprintf(fp, "<p><button type=\"button\" id=\"perfetto\" data-src=\"/r/%s/trace.pftrace\" data-writer=\"perfetto\" "
                "data-file=\"", f->id);
    srv_html_escape(fp, f->display);
    fputs(".pftrace\" data-title=\"", fp);
    srv_html_escape(fp, f->display);
    fputs("\">Open in Perfetto UI</button></p>\n<div id=\"error\" class=\"error\" role=\"alert\" hidden></div>\n"
          "</section>\n",
          fp);
    selection_section(fp, f);
    flame_section(fp, f);
    fputs("<section id=\"report\"><h2>Report</h2>\n", fp);
    if (f->have_report_html)
        fprintf(fp,
                "<iframe id=\"report-html\" title=\"report\" sandbox=\"allow-scripts\" "
                "src=\"/r/%s/report.html\" data-writer=\"report\"></iframe>\n",
                f->id);
    lines l;
    if (read_lines(f->report_text_path, &l) == 0) {
        report_excerpts(fp, &l);
        free(l.line);
        free(l.text);
    } else if (!f->have_report_html) {
        fputs("<p class=\"why\">No report.</p>\n", fp);
    }
    fputs("</section>\n<section><h2>Downloads</h2>\n<ul class=\"downloads\" id=\"downloads\">\n", fp);
    for (size_t i = 0; f->downloads[i]; i++) {
        const srv_output *o = f->downloads[i];
        fprintf(fp, "<li><a href=\"/r/%s/%s?download=1\" data-writer=\"%s\">%s</a> <span class=\"hint\">.%s</span></li>\n",
                f->id, o->file, tc_output_variant(NULL, o->output)->format, o->label, o->ext);
    }
    fputs("</ul></section>\n</main></body></html>\n", fp);
    return ferror(fp) ? -1 : 0;
}
