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
#define _GNU_SOURCE
#include "serve.h"
#include "../core/escape.h" /* the library's escaping rules, compiled in (CMakeLists.txt) */
#include "traceconv.h"

#include <stdlib.h>
#include <string.h>

static const char css[] =
    ":root{--fg:#1d2330;--muted:#5b6478;--line:#d9dde6;--accent:#0b5fff;--bad:#b00020;--bg:#f6f7fa}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);"
    "background:var(--bg)}\n"
    "header{background:#fff;border-bottom:1px solid var(--line);padding:12px 24px;display:flex;gap:16px;"
    "align-items:baseline}\n"
    "header h1{font-size:18px;margin:0}header a{color:var(--muted);text-decoration:none}\n"
    "main{max-width:1320px;margin:0 auto;padding:20px 24px}\n"
    "section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:0 0 18px}\n"
    "h2{font-size:16px;margin:0 0 10px}\n"
    "label{display:block;margin:10px 0 4px;font-weight:600}\n"
    ".hint{color:var(--muted);font-size:13px}\n"
    "#drop{border:2px dashed var(--line);border-radius:8px;padding:28px;text-align:center;color:var(--muted)}\n"
    "#drop.over{border-color:var(--accent);color:var(--accent)}\n"
    "button,.button{font:inherit;padding:7px 14px;border-radius:6px;border:1px solid var(--accent);"
    "background:var(--accent);color:#fff;cursor:pointer;text-decoration:none;display:inline-block}\n"
    "button.tab{background:#fff;color:var(--accent)}button.tab[aria-selected=true]{background:var(--accent);"
    "color:#fff}\n"
    "button:disabled{opacity:.45;cursor:default}\n"
    "progress{width:100%;height:14px;margin-top:12px}\n"
    ".error{color:var(--bad);font-family:ui-monospace,monospace;white-space:pre-wrap;margin-top:12px}\n"
    "iframe{width:100%;border:1px solid var(--line);border-radius:6px;background:#fff}\n"
    "#flame{height:640px}#report-html{height:720px}\n"
    "pre{overflow:auto;max-height:480px;background:var(--bg);padding:10px;border-radius:6px;font-size:12px}\n"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid var(--line);"
    "text-align:left}\n"
    "ul.downloads{columns:2;padding-left:18px}dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;"
    "margin:0}dt{color:var(--muted)}dd{margin:0}\n"
    ".tabs{display:flex;gap:6px;flex-wrap:wrap;margin-bottom:10px}.why{color:var(--muted);font-size:13px}\n";

/* The upload form posts (multipart) to /upload: without script the server answers with a
 * redirect to the result or an error page; with script the upload shows its progress and
 * asks for JSON (Accept: application/json). The result page's buttons: flame graph tabs
 * (they change the iframe's address) and "Open in Perfetto UI" (ui.perfetto.dev's
 * documented postMessage protocol: PING until PONG, then the trace's bytes). */
static const char js[] =
    "'use strict';\n"
    "(function () {\n"
    "  function $(id) { return document.getElementById(id); }\n"
    "  function showError(text) { var e = $('error'); e.textContent = text; e.hidden = false; }\n"
    "  function human(n) {\n"
    "    var u = ['bytes', 'K', 'M', 'G'], k = 0;\n"
    "    while (n >= 1024 && k < 3) { n /= 1024; k++; }\n"
    "    return k ? n.toFixed(1) + u[k] : n + ' bytes';\n"
    "  }\n"
    "  var form = $('upload');\n"
    "  if (form) {\n"
    "    var drop = $('drop'), input = $('trace');\n"
    "    drop.addEventListener('dragover', function (e) { e.preventDefault(); drop.classList.add('over'); });\n"
    "    drop.addEventListener('dragleave', function () { drop.classList.remove('over'); });\n"
    "    drop.addEventListener('drop', function (e) {\n"
    "      e.preventDefault(); drop.classList.remove('over');\n"
    "      if (e.dataTransfer.files.length) { input.files = e.dataTransfer.files; $('chosen').textContent = "
    "input.files[0].name; }\n"
    "    });\n"
    "    input.addEventListener('change', function () {\n"
    "      $('chosen').textContent = input.files.length ? input.files[0].name : '';\n"
    "    });\n"
    "    form.addEventListener('submit', function (e) {\n"
    "      e.preventDefault();\n"
    "      if (!input.files.length) { showError('Choose a trace first.'); return; }\n"
    "      var size = input.files[0].size, ds = form.dataset;\n"
    "      if (size > Number(ds.maxUpload) || size > Number(ds.keepSize)) {\n"
    "        var up = size > Number(ds.maxUpload);\n"
    "        showError(input.files[0].name + ': too large for this server\\u2019s page: the file is ' + human(size) +\n"
    "                  (up ? ' and uploads are at most ' + ds.maxUploadText + ' (--max-upload)'\n"
    "                      : ' and its store keeps ' + ds.keepSizeText + ' in all (--keep-size); the API (POST '\n"
    "                        + '/api/convert) converts it without keeping it'));\n"
    "        return;\n"
    "      }\n"
    "      $('error').hidden = true;\n"
    "      var bar = $('progress'), state = $('state'), go = $('go');\n"
    "      bar.hidden = false; bar.value = 0; go.disabled = true; state.textContent = 'Uploading\\u2026';\n"
    "      var xhr = new XMLHttpRequest();\n"
    "      xhr.open('POST', '/upload');\n"
    "      xhr.setRequestHeader('Accept', 'application/json');\n"
    "      xhr.upload.addEventListener('progress', function (p) {\n"
    "        if (p.lengthComputable) bar.value = p.loaded / p.total;\n"
    "      });\n"
    "      xhr.upload.addEventListener('load', function () { bar.value = 1; state.textContent = "
    "'Converting\\u2026'; });\n"
    "      xhr.addEventListener('load', function () {\n"
    "        var body = null;\n"
    "        try { body = JSON.parse(xhr.responseText); } catch (err) { body = null; }\n"
    "        if (xhr.status === 200 && body && body.result) { state.textContent = 'Done.'; "
    "location.assign(body.result); return; }\n"
    "        go.disabled = false; bar.hidden = true; state.textContent = '';\n"
    "        showError(body && body.error ? body.error : 'HTTP ' + xhr.status + ' ' + xhr.statusText);\n"
    "      });\n"
    "      xhr.addEventListener('error', function () {\n"
    "        go.disabled = false; bar.hidden = true; state.textContent = '';\n"
    "        showError('The upload failed (the connection was closed).');\n"
    "      });\n"
    "      xhr.send(new FormData(form));\n"
    "    });\n"
    "  }\n"
    "  var flame = $('flame');\n"
    "  if (flame) {\n"
    "    var tabs = document.querySelectorAll('button.tab');\n"
    "    Array.prototype.forEach.call(tabs, function (t) {\n"
    "      t.addEventListener('click', function () {\n"
    "        Array.prototype.forEach.call(tabs, function (o) { o.setAttribute('aria-selected', String(o === t)); });\n"
    "        flame.src = t.dataset.src;\n"
    "      });\n"
    "    });\n"
    "  }\n"
    "  var pf = $('perfetto');\n"
    "  if (pf) {\n"
    "    pf.addEventListener('click', function () {\n"
    "      var ORIGIN = 'https://ui.perfetto.dev';\n"
    "      var win = window.open(ORIGIN + '/#!/');\n"
    "      if (!win) { showError('The browser blocked the Perfetto UI window.'); return; }\n"
    "      fetch(pf.dataset.src).then(function (r) {\n"
    "        if (!r.ok) throw new Error('HTTP ' + r.status);\n"
    "        return r.arrayBuffer();\n"
    "      }).then(function (buffer) {\n"
    "        var tries = 0;\n"
    "        var timer = setInterval(function () {\n"
    "          if (++tries > 200) { clearInterval(timer); window.removeEventListener('message', onPong); return; }\n"
    "          win.postMessage('PING', ORIGIN);\n"
    "        }, 50);\n"
    "        function onPong(evt) {\n"
    "          if (evt.origin !== ORIGIN || evt.data !== 'PONG') return;\n"
    "          clearInterval(timer);\n"
    "          window.removeEventListener('message', onPong);\n"
    "          win.postMessage({ perfetto: { buffer: buffer, title: pf.dataset.title, fileName: pf.dataset.file } "
    "}, ORIGIN);\n"
    "        }\n"
    "        window.addEventListener('message', onPong);\n"
    "      }).catch(function (err) { showError('Cannot read the Perfetto trace: ' + err.message); });\n"
    "    });\n"
    "  }\n"
    "})();\n";

/* a page without an icon link makes the browser ask for /favicon.ico (a 404 in its console) */
static const char icon[] =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect width=\"16\" height=\"5\" y=\"11\" "
    "fill=\"#e5502a\"/><rect x=\"2\" width=\"10\" height=\"5\" y=\"6\" fill=\"#f08c2a\"/><rect x=\"3\" "
    "width=\"5\" height=\"5\" y=\"1\" fill=\"#f4c430\"/></svg>\n";

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
 * them, and a table of the threads' figures. */
static void report_excerpts(FILE *fp, const lines *l)
{
    size_t all = find_line(l, 0, "All threads");
    size_t head = find_line(l, all, "index ");
    size_t end = head;
    while (end < l->n && l->line[end][0] && end < head + 31)
        end++;
    fputs("<h3>Top methods (all threads)</h3>\n", fp);
    if (head < l->n)
        pre_lines(fp, l, all, end, "top-methods");
    size_t pc = find_line(l, head, "Parents and children");
    size_t pch = find_line(l, pc, "index ");
    size_t pce = pch, seps = 0;
    while (pce < l->n && l->line[pce][0] && seps < 13)
        seps += !strncmp(l->line[pce++], "-----", 5);
    fputs("<h3>Parents and children (the first methods)</h3>\n", fp);
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

static void flame_section(FILE *fp, const srv_result_facts *f)
{
    int first = -1;
    fputs("<section><h2>Flame graph</h2>\n<div class=\"tabs\" role=\"tablist\">\n", fp);
    for (int i = 0; i < 4; i++) {
        if (f->flames[i] && first < 0)
            first = i;
        if (f->flames[i])
            fprintf(fp, "<button type=\"button\" class=\"tab\" role=\"tab\" aria-selected=\"%s\" "
                        "data-src=\"/r/%s/%s\">%s</button>\n",
                    i == first ? "true" : "false", f->id, f->flames[i], flame_tab[i]);
        else {
            fputs("<button type=\"button\" class=\"tab\" disabled title=\"", fp);
            srv_html_escape(fp, f->flame_why[i] && *f->flame_why[i] ? f->flame_why[i] : "not available");
            fprintf(fp, "\">%s</button>\n", flame_tab[i]);
        }
    }
    fputs("</div>\n", fp);
    if (first >= 0)
        fprintf(fp,
                "<iframe id=\"flame\" title=\"flame graph\" sandbox=\"allow-scripts\" src=\"/r/%s/%s\"></iframe>\n"
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
    fprintf(fp, "<p><button type=\"button\" id=\"perfetto\" data-src=\"/r/%s/trace.pftrace\" data-file=\"", f->id);
    srv_html_escape(fp, f->display);
    fputs(".pftrace\" data-title=\"", fp);
    srv_html_escape(fp, f->display);
    fputs("\">Open in Perfetto UI</button></p>\n<div id=\"error\" class=\"error\" role=\"alert\" hidden></div>\n"
          "</section>\n",
          fp);
    flame_section(fp, f);
    fputs("<section id=\"report\"><h2>Report</h2>\n", fp);
    if (f->have_report_html)
        fprintf(fp,
                "<iframe id=\"report-html\" title=\"report\" sandbox=\"allow-scripts\" "
                "src=\"/r/%s/report.html\"></iframe>\n",
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
        const srv_output *o = srv_output_find(f->downloads[i]);
        if (!o)
            continue;
        fprintf(fp, "<li><a href=\"/r/%s/%s?download=1\" data-writer=\"%s\">%s</a> <span class=\"hint\">.%s</span></li>\n",
                f->id, o->file, tc_output_variant(NULL, o->output)->format, o->label, o->ext);
    }
    fputs("</ul></section>\n</main></body></html>\n", fp);
    return ferror(fp) ? -1 : 0;
}
