#!/usr/bin/env python3
"""`traceconv serve` over HTTP (http.client and raw sockets; the server on 127.0.0.1, port 0).

- GET /api/formats lists exactly the readers and writers of `traceconv --list-formats`.
- POST /api/convert: corpus traces to pprof (`go tool pprof -raw` accepts it; its wall
  total is the time in methods of the tracegen facts), perfetto (protoc decodes it with
  the upstream schema; every thread of the facts is named in it), json (json.loads; per
  thread, the top-level B/E time equals the facts' time in methods); gzip input as the
  raw body; the multipart field `trace`; options from the query (weight=cpu gives the
  CPU folded stacks the CLI gives); 400 for an unknown option, format or a bad value.
- 422 and the CLI's own line for random bytes and a truncated trace (the CLI run on the
  same file under the same name), on the API (text/plain) and on the page (HTML, JSON).
- 413: a declared size over --max-upload is answered before the body is sent (the test
  sends a part, then reads the answer); a chunked body passing it is cut off; nothing of
  either is left in the store.
- 404 for ../, %2e%2e, absolute paths, unknown and malformed ids, a result's internal
  files; 405 (with Allow) for PUT, DELETE, PATCH; security headers on every answer (CSP,
  nosniff, no-referrer, attachment for downloads); a hostile upload name is escaped in the
  page and reduced to ASCII in Content-Disposition.
- --keep 2s: a result is 404 once older than that, and leaves the disk; --queue 1 -j 1:
  with a slow conversion (tracegen --bench 64) running and one waiting, a third upload
  (API or page) gets 503 at once with Retry-After and one line; both finish; uploads are
  taken again afterwards.
- A trace uploaded as `my app<&>.trace`: the flame graph, JSON, pprof and report name it
  (XML and JSON parsers, `go tool pprof -comments`) byte for byte as the CLI does for a file
  of that name, as does the 422 line; nothing names the store's temporary file; a gzip
  upload likewise; a Rhea trace with the `mapping` field gives the CLI's folded output.
- The selection (issue 24): /api/formats lists every option of the tables a client may
  choose, the selection's keys among them (thread, since, until, focus, ignore, ignore-idle);
  POST /api/convert with them, `thread` repeated, gives byte for byte what the command gives
  for the same file name and flags (folded, flamegraph, report), and so does a result's
  output asked for with them (/r/<id>/trace.folded?thread=...&download=1, the CPU flame
  graph, whose own weight wins over the query's, shown inline; the HTML report), converted
  from the kept upload; the selection changes the output (two threads are more than one,
  and less than all); a bad value is 400 with the command's own line, an unknown key 400;
  /r/<id>/info.json lists the facts' threads (tid, name, records) and their duration, and a
  hostile thread name comes back exactly, as JSON text without markup.
- The load test: 200 page uploads, 8 at a time (--keep 20, -j 2): every result's folded
  download equals the CLI's folded output of the same file; the store never holds more
  than 20 results nor a leftover upload; the server's peak RSS stays bounded; SIGTERM:
  exit status 0 and no file left under its TMPDIR (the default store is removed).

The server binary is the one given by --traceconv (build-asan's under ASan).
"""
import concurrent.futures
import gzip
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402

SECURITY = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}


def request(srv, method, path, body=None, headers=None, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        c.close()


def check_hint_on_page(ctx, srv):
    """An R8 build's trace (tracegen --obfuscate): the result page says the names look minified and
    suggests --deobfuscate, as the command's summary does; the app start-up's source names: no hint."""
    scn = os.path.join(ctx.source, "corpus", "app-startup.scn")
    trace, mapping = os.path.join(ctx.work, "r8.trace"), os.path.join(ctx.work, "r8-mapping.txt")
    r = ctx.run([scn, trace, "--obfuscate", mapping], exe=ctx.tracegen)
    if not ctx.eq(r.returncode, 0, f"tracegen --obfuscate: {r.stderr[-300:]!r}"):
        return
    for path, want in ((trace, True), (os.path.join(ctx.corpus, "app-startup.trace"), False)):
        with open(path, "rb") as f:
            mp, ctype = multipart([("trace", os.path.basename(path), f.read())])
        st, _, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        if not ctx.eq(st, 200, f"upload {os.path.basename(path)}"):
            continue
        st, _, page = request(srv, "GET", json.loads(out)["result"])
        shown = re.search(rb'<p class="hint">[^<]*--deobfuscate mapping\.txt', page) is not None
        ctx.eq(shown, want, f"{os.path.basename(path)}: the page's minified-names hint")


def multipart(fields):
    """fields: [(name, filename, bytes)] -> (body, content type)."""
    boundary = "tcboundary" + uuid.uuid4().hex
    out = b""
    for name, filename, data in fields:
        out += f"--{boundary}\r\n".encode()
        out += f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'.encode()
        out += b"Content-Type: application/octet-stream\r\n\r\n" + data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


def cli_folded(ctx, src, extra=()):
    out = os.path.join(ctx.work, "cli-" + uuid.uuid4().hex + ".folded")
    r = ctx.run(["-f", "-o", "folded", *extra, src, out], check_rc=0)
    if r.returncode:
        return None
    with open(out, "rb") as f:
        data = f.read()
    os.unlink(out)
    return data


def cli_error_line(ctx, path):
    """The CLI's one line for this file, named as the upload names it (its base name)."""
    r = subprocess.run([ctx.traceconv, "-o", "folded", os.path.basename(path), "out.folded"],
                       cwd=os.path.dirname(path), capture_output=True)
    ctx.check(r.returncode != 0, f"{path}: the CLI must fail on it")
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def check_security_headers(ctx, what, h):
    for k, v in SECURITY.items():
        ctx.eq(h.get(k), v, f"{what}: header {k}")
    ctx.check("default-src 'none'" in h.get("content-security-policy", ""), f"{what}: a CSP with default-src 'none'")


def facts(path):
    with open(path[: -len(".trace")] + ".facts.json") as f:
        return json.load(f)


# ---- the API -------------------------------------------------------------------------


def check_formats(ctx, srv):
    st, h, body = request(srv, "GET", "/api/formats")
    ctx.eq(st, 200, "GET /api/formats")
    check_security_headers(ctx, "/api/formats", h)
    doc = json.loads(body)
    listed = ctx.run(["--list-formats"], check_rc=0).stdout.decode()
    readers = re.findall(r"^  (\S+) ", listed.split("writers")[0], re.M)
    writers = re.findall(r"^  (\S+) ", listed.split("writers")[1], re.M)
    ctx.eq([r["name"] for r in doc["readers"]], readers, "/api/formats readers vs --list-formats")
    ctx.eq([w["name"] for w in doc["writers"]], writers, "/api/formats writers vs --list-formats")
    ctx.check(all(isinstance(w["binary"], bool) for w in doc["writers"]), "writers carry 'binary'")


def api(srv, query, body, content_type="application/octet-stream"):
    return request(srv, "POST", "/api/convert?" + query, body, {"Content-Type": content_type})


def check_pprof(ctx, srv, env, src):
    name = os.path.basename(src)
    with open(src, "rb") as f:
        st, h, body = api(srv, f"to=pprof&name={name}", f.read())
    if not ctx.eq(st, 200, f"{name} -> pprof: status"):
        return
    ctx.eq(h.get("content-disposition"), f'attachment; filename="{name[:-6]}.pb.gz"', f"{name}: file name")
    ctx.check(body[:2] == b"\x1f\x8b", f"{name}: pprof is gzipped")
    path = os.path.join(ctx.work, name + ".api.pb.gz")
    with open(path, "wb") as f:
        f.write(body)
    r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-raw", path], env=env)
    if r is None or not ctx.check(r.returncode == 0, f"{name}: go tool pprof -raw: {r.stderr[-300:]!r}"):
        return
    r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-top", "-sample_index=wall", "-unit=ns", path], env=env)
    m = re.search(r"of (\d+)ns total", r.stdout.decode(errors="replace"))
    want = sum(t["wall_total_us"] for t in facts(src)["threads"]) * 1000
    ctx.eq(int(m.group(1)) if m else None, want, f"{name}: pprof wall total vs the facts' time in methods")


def check_perfetto(ctx, srv, src):
    name = os.path.basename(src)
    with open(src, "rb") as f:
        st, h, body = api(srv, "to=perfetto", f.read())
    if not ctx.eq(st, 200, f"{name} -> perfetto: status"):
        return
    ctx.eq(h.get("content-type"), "application/octet-stream", f"{name}: perfetto content type")
    r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                    "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], input=body)
    if r is None or not ctx.check(r.returncode == 0, f"{name}: protoc --decode: {r.stderr[-300:]!r}"):
        return
    text = r.stdout.decode(errors="replace")
    for t in facts(src)["threads"]:
        ctx.check(f'thread_name: "{t["name"]}"' in text, f"{name}: thread {t['name']!r} named in the pftrace")


def check_json(ctx, srv, src):
    name = os.path.basename(src)
    body, ctype = multipart([("trace", name, open(src, "rb").read())])
    st, h, out = api(srv, "to=json", body, ctype)
    if not ctx.eq(st, 200, f"{name} -> json (multipart): status"):
        return
    ctx.eq(h.get("content-type"), "application/json", f"{name}: json content type")
    path = os.path.join(ctx.work, name + ".api.json")
    with open(path, "wb") as f:
        f.write(out)
    json.loads(out)
    got = {tid: tot for (pid, tid), (cnt, tot) in tclib.json_thread_totals(path).items()}
    want = {t["tid"]: t["wall_total_us"] * 1000 for t in facts(src)["threads"]}
    ctx.eq(dict(sorted(got.items())), dict(sorted(want.items())), f"{name}: per-thread top-level time vs facts")


def check_gzip_and_options(ctx, srv, src):
    name = os.path.basename(src)
    with open(src, "rb") as f:
        data = f.read()
    st, _, out = api(srv, f"to=folded&name={name}.gz", gzip.compress(data))
    ctx.eq(st, 200, f"{name}.gz -> folded: status")
    ctx.check(out == cli_folded(ctx, src), f"{name}.gz: folded from a gzip body equals the CLI's")
    st, _, out = api(srv, "to=folded&weight=cpu", data)
    ctx.eq(st, 200, "weight=cpu: status")
    ctx.check(out == cli_folded(ctx, src, ["--weight", "cpu"]), f"{name}: weight=cpu folded equals the CLI's")
    st, _, out = api(srv, "to=flamegraph&merge-threads&title=T%3Cx%3E", data)
    ctx.eq(st, 200, "a flag without a value (merge-threads): status")
    ctx.check(b"<svg" in out[:400] and b"T&lt;x&gt;" in out, "flamegraph with a title from the query")
    for q, what in (("to=folded&bogus=1", "unknown option"), ("to=nope", "unknown writer"),
                    ("to=folded&from=nope", "unknown reader"), ("to=folded&weight=sideways", "bad value"),
                    ("from=art", "no to=")):
        st, h, out = api(srv, q, data)
        ctx.eq(st, 400, f"{what} ({q}): status")
        ctx.eq(h.get("content-type"), "text/plain; charset=utf-8", f"{what}: text/plain")
        ctx.check(out.count(b"\n") == 1 and out.endswith(b"\n"), f"{what}: one line: {out!r}")
    ctx.check(b"weight" in api(srv, "to=folded&weight=sideways", data)[2], "a bad value is named by the library")


def check_422(ctx, srv, srcdir):
    rnd = os.path.join(ctx.work, "random.bin")
    with open(rnd, "wb") as f:
        f.write(os.urandom(4096))
    trunc = os.path.join(ctx.work, "cut.trace")
    with open(os.path.join(srcdir, "app-startup.trace"), "rb") as f:
        data = f.read()
    with open(trunc, "wb") as f:
        f.write(data[:3000])  # inside the key section
    for path in (rnd, trunc):
        name = os.path.basename(path)
        want = cli_error_line(ctx, path)
        ctx.check(want.startswith(f"traceconv: {name}: "), f"{name}: the CLI's line names the file: {want!r}")
        body = open(path, "rb").read()
        st, h, out = api(srv, f"to=folded&name={name}", body)
        ctx.eq(st, 422, f"{name} API: status")
        ctx.eq(h.get("content-type"), "text/plain; charset=utf-8", f"{name} API: text/plain")
        ctx.eq(out.decode(errors="replace"), want + "\n", f"{name} API: the CLI's line")
        mp, ctype = multipart([("trace", name, body)])
        st, h, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        ctx.eq(st, 422, f"{name} page (JSON): status")
        ctx.eq(json.loads(out).get("error"), want, f"{name} page (JSON): the CLI's line")
        st, h, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype})
        ctx.eq(st, 422, f"{name} page (HTML): status")
        esc = want.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;")
        ctx.check(esc in out.decode(errors="replace"), f"{name} page (HTML): the line is on the page")


HOSTILE_NAME = "my app<&>.trace"  # a name each format escapes in its own way


def no_store_name(ctx, srv, what, data):
    """An output or message must name the user's file, never the store's temporary one."""
    store = (srv.store() or "traceconv-serve-").encode()
    ctx.check(b".upload" not in data and store not in data and b"traceconv-serve-" not in data,
              f"{what}: names no temporary file of the store")


def check_display_name(ctx, srv, env, src):
    """The upload is opened under its own name: each format names `my app<&>.trace`
    (escaped its own way) exactly as the CLI does for a file of that name."""
    named = os.path.join(ctx.work, "named")
    os.makedirs(named, exist_ok=True)
    local = os.path.join(named, HOSTILE_NAME)
    shutil.copyfile(src, local)
    data = open(src, "rb").read()
    mp, ctype = multipart([("trace", HOSTILE_NAME, data)])
    outs = {}
    for to in ("flamegraph", "json", "pprof", "report"):
        st, _, outs[to] = api(srv, f"to={to}", mp, ctype)
        ctx.eq(st, 200, f"{HOSTILE_NAME} -> {to}: status")
        no_store_name(ctx, srv, f"{to} output", gzip.decompress(outs[to]) if to == "pprof" else outs[to])
        cli = os.path.join(named, "cli." + to)
        subprocess.run([ctx.traceconv, "-f", "-o", to, HOSTILE_NAME, cli], cwd=named, capture_output=True)
        with open(cli, "rb") as f:
            ctx.check(f.read() == outs[to], f"{to}: the upload's output equals the CLI's for a file of that name")
    # each read back by a reader of the format
    svg = ET.fromstring(outs["flamegraph"])
    sub = [e for e in svg.iter() if e.get("id") == "subtitle"]
    ctx.check(sub and (sub[0].text or "").startswith(HOSTILE_NAME + " ("),
              f"flame graph subtitle names the upload: {sub[0].text if sub else None!r}")
    ctx.check(b"my app&lt;&amp;&gt;.trace (" in outs["flamegraph"], "the SVG escapes the name")
    ctx.eq(json.loads(outs["json"])["otherData"]["input"], HOSTILE_NAME, "json otherData.input")
    path = os.path.join(named, "api.pb.gz")
    with open(path, "wb") as f:
        f.write(outs["pprof"])
    r = ctx.oracle(["go", "tool", "pprof", "-comments", path], env=env)
    if r is not None:
        ctx.check(f"converted by traceconv from {HOSTILE_NAME}" in r.stdout.decode(errors="replace").splitlines(),
                  f"pprof comments name the upload: {r.stdout[:200]!r}")
    ctx.check(re.search(rb"^input +my app<&>\.trace$", outs["report"], re.M) is not None,
              "the report's header names the upload")
    # the page: the flame graph and report files of a result
    st, _, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
    if ctx.eq(st, 200, "page upload of a hostile name"):
        loc = json.loads(out)["result"]
        for f in ("flame-wall.svg", "flame-cpu-merged.svg", "report.txt", "trace.json", "trace.pftrace"):
            st, _, body = request(srv, "GET", f"{loc}/{f}")
            if st == 200:
                no_store_name(ctx, srv, f"page {f}", body)
                ctx.check(b"my app" in body, f"page {f} names the upload")
        st, _, page = request(srv, "GET", loc)
        no_store_name(ctx, srv, "result page", page)
    # the 422 line, and gzip: the CLI's line for a file of that name
    bad = os.urandom(4096)
    with open(local, "wb") as f:
        f.write(bad)
    want = cli_error_line(ctx, local)
    ctx.check(want.startswith(f"traceconv: {HOSTILE_NAME}: "), f"the CLI's line names the file: {want!r}")
    st, _, out = api(srv, "to=folded", *multipart([("trace", HOSTILE_NAME, bad)]))
    ctx.eq((st, out.decode(errors="replace")), (422, want + "\n"), "422: the CLI's line naming the upload")
    gz = HOSTILE_NAME + ".gz"
    with open(os.path.join(named, gz), "wb") as f:
        f.write(gzip.compress(data))
    st, _, out = api(srv, "to=flamegraph", *multipart([("trace", gz, gzip.compress(data))]))
    cli = os.path.join(named, "cli-gz.svg")
    subprocess.run([ctx.traceconv, "-f", "-o", "flamegraph", gz, cli], cwd=named, capture_output=True)
    ctx.check(st == 200 and open(cli, "rb").read() == out, "a gzip upload: the CLI's flame graph for that file")
    ctx.check(b"my app&lt;&amp;&gt;.trace.gz (" in out, "a gzip upload's subtitle names the .gz file")


def check_rhea_mapping(ctx, srv):
    """The Rhea method mapping is the explicit option: the upload is opened from memory,
    and no side file is looked for beside it."""
    rhea = os.path.join(ctx.corpus, "rhea")
    trace = os.path.join(rhea, "v2-appTrace.bin")
    mapping = os.path.join(rhea, "v2-methodMapping.txt")
    want = cli_folded(ctx, trace)  # the CLI finds v2-methodMapping.txt beside it
    ctx.check(want and b"NotesApp" in want, "the CLI names Rhea methods through the mapping beside it")
    body = open(trace, "rb").read()
    st, _, out = api(srv, "to=folded", *multipart([("trace", os.path.basename(trace), body),
                                                    ("mapping", "methodMapping.txt", open(mapping, "rb").read())]))
    ctx.eq(st, 200, "rhea + mapping: status")
    ctx.check(out == want, "rhea + mapping field: folded equals the CLI's")
    st, _, out = api(srv, "to=folded", *multipart([("trace", os.path.basename(trace), body)]))
    ctx.check(st == 200 and b"method#" in out and b"NotesApp" not in out,
              f"rhea without the mapping field: methods by id, no side file read: {out[:120]!r}")


def leftovers(srv):
    store = srv.store()
    return sorted(os.listdir(os.path.join(store, "tmp"))) if store else ["no store"]


def early_answer(srv, path, headers, length, part):
    """Send the headers (Content-Length: length) and part of the body, then read the
    answer's status line: the server must answer while the body is still unsent."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nContent-Length: {length}\r\n{extra}\r\n".encode())
    head = b""
    try:
        s.sendall(part)
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
    except OSError as e:
        head += f" ({e})".encode()
    s.close()
    return head


def check_413(ctx, srv, limit):
    head = early_answer(srv, "/api/convert?to=folded", {"Content-Type": "application/octet-stream"}, limit + 1,
                        b"\0" * 4096)
    ctx.check(head.startswith(b"HTTP/1.1 413"), f"API: 413 before the body's end: {head[:60]!r}")
    mp, ctype = multipart([("trace", "big.trace", b"\0" * (limit + 10))])
    head = early_answer(srv, "/upload", {"Content-Type": ctype, "Accept": "application/json"}, len(mp), mp[:4096])
    ctx.check(head.startswith(b"HTTP/1.1 413"), f"page: 413 before the body's end: {head[:60]!r}")
    # a chunked body has no declared size: cut off when its running size passes the limit
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    s.sendall(b"POST /api/convert?to=folded HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nTransfer-Encoding: chunked\r\n"
              b"Content-Type: application/octet-stream\r\n\r\n" % srv.port)
    sent, closed = 0, False
    try:
        while sent < 20 * limit:
            piece = b"\1" * 65536
            s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            sent += len(piece)
    except OSError:
        closed = True
    if not closed:
        try:
            closed = s.recv(100) in (b"",) or True
        except OSError:
            closed = True
    s.close()
    ctx.check(closed and sent < 20 * limit, f"a chunked body over the limit is cut off (sent {sent} bytes)")
    time.sleep(0.3)
    ctx.eq(leftovers(srv), [], "nothing of the refused uploads is left in the store")


def check_paths(ctx, srv, result):
    for path in ("/../etc/passwd", "/r/%2e%2e/%2e%2e/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd",
                 "/etc/passwd", f"/r/{result[3:]}/../../tmp", f"/r/{result[3:]}/%2e%2e/name",
                 "/r/" + "0" * 32, "/r/" + "0" * 32 + "/trace.json", "/r/xyz", "/r/" + "G" * 32,
                 "/r/" + result[3:].upper(), f"{result}x", f"{result}/name", f"{result}/index.html",
                 f"{result}/trace.json/", f"{result}//trace.json", "/static/../static/serve.js", "/nothing"):
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        c.putrequest("GET", path, skip_accept_encoding=True)  # sent as is, never normalized
        c.endheaders()
        r = c.getresponse()
        r.read()
        c.close()
        ctx.eq(r.status, 404, f"GET {path}")
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
        st, h, _ = request(srv, method, result, b"x")
        ctx.eq(st, 405, f"{method} {result}")
        ctx.eq(h.get("allow"), "GET, HEAD, POST", f"{method}: Allow")
    st, _, _ = request(srv, "GET", "/api/convert")
    ctx.eq(st, 405, "GET /api/convert")


def check_page_result(ctx, srv, src):
    """A page upload: the result page, its downloads and their headers; a hostile name."""
    hostile = "<img src=x onerror=window.pwned=1>'&\x01.trace"  # a quote would end the multipart file name
    mp, ctype = multipart([("trace", hostile, open(src, "rb").read())])
    st, h, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype})
    ctx.eq(st, 303, "page upload without script: 303 to the result")
    loc = h.get("location", "")
    ctx.check(re.fullmatch(r"/r/[0-9a-f]{32}", loc) is not None, f"result location {loc!r}")
    st, h, page = request(srv, "GET", loc)
    ctx.eq(st, 200, "result page")
    check_security_headers(ctx, "result page", h)
    csp = h.get("content-security-policy", "")
    ctx.check("unsafe-inline" not in csp and "script-src 'self'" in csp, f"page CSP has no unsafe-inline: {csp}")
    text = page.decode()
    ctx.check("<img" not in text and "<h2>&lt;img src=x onerror=window.pwned=1&gt;&#39;&amp;_.trace</h2>" in text,
              "a hostile name is escaped in the page")
    ctx.check("<script>" not in text and " style=" not in text and "http://" not in text.replace(srv.url, ""),
              "no inline script or style, nothing external")
    for want in ('id="flame"', 'sandbox="allow-scripts"', 'id="top-methods"', 'id="threads"', 'id="perfetto"'):
        ctx.check(want in text, f"result page has {want}")
    for t in facts(src)["threads"]:
        ctx.check(f"{t['name']} (tid {t['tid']})" in text, f"thread {t['name']} in the page's thread table")
    links = re.findall(r'href="(/r/[0-9a-f]{32}/[^"?]+)\?download=1" data-writer="([^"]+)"', text)
    writers = {w for _, w in links}
    for w in ("perfetto", "json", "pprof", "folded", "systrace", "speedscope", "report", "dot", "flamegraph"):
        ctx.check(w in writers, f"a download of {w}")
    for href, w in links:
        st, h, body = request(srv, "GET", href + "?download=1")
        ctx.eq(st, 200, f"download {href}")
        cd = h.get("content-disposition", "")
        ctx.check(re.fullmatch(r'attachment; filename="[A-Za-z0-9._+-]+"', cd) is not None,
                  f"{href}: an ASCII attachment name: {cd!r}")
        check_security_headers(ctx, href, h)
    folded = [h for h, w in links if w == "folded"][0]
    ctx.check(request(srv, "GET", folded + "?download=1")[2] == cli_folded(ctx, src), "page's folded = CLI's")
    st, h, svg = request(srv, "GET", f"{loc}/flame-wall.svg")
    ctx.check("sandbox" in h.get("content-security-policy", "") and "content-disposition" not in h,
              "the flame graph is shown inline, sandboxed")
    return loc


# ---- the selection (issue 24) ---------------------------------------------------------

SELECTION = [("thread", "main"), ("thread", "OkHttp*"), ("since", "100ms"), ("until", "1.2s"), ("ignore-idle", "")]


def query_of(pairs):
    return "&".join(k + ("=" + urllib.parse.quote(v, safe="") if v else "") for k, v in pairs)


def flags_of(pairs):
    return [a for k, v in pairs for a in (["--" + k, v] if v else ["--" + k])]


def cli_named(ctx, src, writer, flags):
    """The command's output for src under its own name (as the upload names it), with flags."""
    out = os.path.join(ctx.work, "sel-" + uuid.uuid4().hex)
    r = subprocess.run([ctx.traceconv, "-f", "-o", writer, *flags, os.path.basename(src), out],
                       cwd=os.path.dirname(src), capture_output=True)
    ctx.eq(r.returncode, 0, f"traceconv -o {writer} {' '.join(flags)}: {r.stderr.decode(errors='replace')[-300:]}")
    with open(out, "rb") as f:
        data = f.read()
    os.unlink(out)
    return data


def check_selection_api(ctx, srv, src):
    st, _, body = request(srv, "GET", "/api/formats")
    doc = json.loads(body)
    offered = doc.get("serve", {}).get("options", [])
    for key in ("thread", "since", "until", "focus", "ignore", "ignore-idle", "weight"):
        ctx.check(key in offered, f"/api/formats: the API takes {key}")
    # what it should take: every writer's option (--list-formats --json) and every option of
    # every conversion in --help (not the limits, the server's own, listed apart) but the
    # mapping files the open reads (they come as upload fields) and threads (serve converts
    # each on one thread: its workers are its parallelism; issue 26)
    tables = json.loads(ctx.run(["--list-formats", "--json"], check_rc=0).stdout)
    helptext = ctx.run(["--help"], check_rc=0).stdout.decode()
    every = helptext.split("Options of every conversion:\n")[1].split("\nLimits")[0]
    want = {o["name"] for w in tables["writers"] for o in w["options"]}
    want |= set(re.findall(r"^      --([a-z-]+)", every, re.M)) - {"deobfuscate", "mapping", "threads"}
    ctx.check({"thread", "strict"} <= want, f"--help's options of every conversion: {sorted(want)}")
    ctx.eq(sorted(set(offered)), sorted(want), "the API's options: every option of the tables a client may choose")

    name = os.path.basename(src)
    data = open(src, "rb").read()
    mp, ctype = multipart([("trace", name, data)])
    for writer in ("folded", "flamegraph", "report"):
        st, _, out = request(srv, "POST", f"/api/convert?to={writer}&" + query_of(SELECTION), mp,
                             {"Content-Type": ctype})
        ctx.eq(st, 200, f"API {writer} with a selection: status")
        ctx.check(out == cli_named(ctx, src, writer, flags_of(SELECTION)),
                  f"API {writer} with {query_of(SELECTION)}: the command's bytes")
    # the selection reaches the library, each repeated value too
    one = cli_named(ctx, src, "folded", ["--thread", "main"])
    both = cli_named(ctx, src, "folded", ["--thread", "main", "--thread", "OkHttp*"])
    whole = cli_named(ctx, src, "folded", [])
    ctx.check(len(one) < len(both) < len(whole), "the command's selection: one thread < two threads < all")
    st, _, out = request(srv, "POST", "/api/convert?to=folded&thread=main&thread=OkHttp%2A", mp, {"Content-Type": ctype})
    ctx.check(st == 200 and out == both, "thread=main&thread=OkHttp*: both threads, as --thread twice")
    # the command's line, in the API's words (issue 36, item 8): the query's fields, not the flags
    for q, flag, field, status in (
            ("since=abc", ["--since", "abc"], "field since=", 400), ("until=1.5", ["--until", "1.5"], "field until=", 400),
            ("thread=", ["--thread", ""], "field thread=", 400),
            ("thread=nosuch", ["--thread", "nosuch"], "thread='nosuch'", 422),
            ("since=2ms&until=1ms", ["--since", "2ms", "--until", "1ms"], "until= must be after since=", 400)):
        st, h, out = request(srv, "POST", "/api/convert?to=folded&" + q, mp, {"Content-Type": ctype})
        r = subprocess.run([ctx.traceconv, "-o", "folded", *flag, src, os.path.join(ctx.work, "never.folded")],
                           capture_output=True)
        line = r.stderr.decode(errors="replace").splitlines()[0]
        said = out.decode(errors="replace").strip()
        ctx.check(st == status and field in said and "--" not in said and "option '" not in said,
                  f"API {q}: {status}, naming the field ({field}): {st} {said!r}")
        ctx.check(r.returncode != 0 and ("--" in line or "option '" in line), f"the command names its flag: {line!r}")
    check_method_fields(ctx, srv, src, mp, ctype)


def check_method_fields(ctx, srv, src, mp, ctype):
    """focus, ignore and callers as query fields (issue 36): methods named as people type them give
    the command's bytes; one that names no method is 400 with the command's line, the option
    named as the query's field (focus='onCreat'), never as a flag."""
    for writer, pairs in (("folded", [("callers", "LayoutInflater.inflate")]),
                          ("folded", [("focus", "onCreate"), ("ignore", "Looper.loop")]),
                          ("report", [("callers", "inflate"), ("thread", "main")]),
                          ("flamegraph", [("callers", "OkHttpClient.<init>")])):
        st, _, out = request(srv, "POST", f"/api/convert?to={writer}&" + query_of(pairs), mp, {"Content-Type": ctype})
        ctx.check(st == 200 and out == cli_named(ctx, src, writer, flags_of(pairs)),
                  f"API {writer} {query_of(pairs)}: 200 and the command's bytes ({st})")
    for key, value in (("focus", "onCreat"), ("ignore", "Objct.wait"), ("callers", "inflat")):
        st, _, out = request(srv, "POST", f"/api/convert?to=folded&{key}={urllib.parse.quote(value)}", mp,
                             {"Content-Type": ctype})
        r = subprocess.run([ctx.traceconv, "-o", "folded", f"--{key}", value, os.path.basename(src),
                            os.path.join(ctx.work, "never.folded")], cwd=os.path.dirname(src), capture_output=True)
        line = r.stderr.decode(errors="replace").strip()
        text = out.decode(errors="replace").strip()
        ctx.check(r.returncode == 2 and f"--{key} '{value}'" in line, f"--{key} {value}: the command's usage error: {line}")
        ctx.eq((st, text), (400, line.replace(f"--{key} '{value}'", f"{key}='{value}'")),
               f"API {key}={value}: 400 and the command's line, naming the field")
        ctx.check("--" not in text, f"API {key}={value}: no flag named: {text}")


def check_selection_result(ctx, srv, src):
    name = os.path.basename(src)
    fx = facts(src)
    mp, ctype = multipart([("trace", name, open(src, "rb").read())])
    st, _, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
    ctx.eq(st, 200, "page upload")
    loc = json.loads(out)["result"]
    st, h, info = request(srv, "GET", f"{loc}/info.json")
    ctx.eq((st, h.get("content-type")), (200, "application/json"), "info.json")
    info = json.loads(info)
    ctx.eq(info["duration_ns"], (fx["trace_end_us"] - fx["trace_start_us"]) * 1000, "info.json: the trace's duration")
    ctx.eq(sorted((t["tid"], t["name"], t["records"]) for t in info["threads"] if t["records"]),
           sorted((t["tid"], t["name"], t["records"]) for t in fx["threads"]), "info.json: the facts' threads")
    ctx.eq(info["records"], fx["records"], "info.json: records in all")
    q = query_of(SELECTION)
    st, h, out = request(srv, "GET", f"{loc}/trace.folded?download=1&{q}")
    ctx.check(st == 200 and out == cli_named(ctx, src, "folded", flags_of(SELECTION)),
              "a result's folded download with the selection: the command's bytes")
    ctx.check(h.get("content-disposition", "").startswith("attachment"), "the download with a selection: an attachment")
    cpu = cli_named(ctx, src, "flamegraph", ["--weight", "cpu", "--title", "Flame Graph (CPU time)",
                                             *flags_of(SELECTION)])
    st, h, out = request(srv, "GET", f"{loc}/flame-cpu.svg?{q}&weight=wall")
    ctx.check(st == 200 and out == cpu, "the CPU flame graph with the selection (its own weight wins): the command's")
    ctx.check("sandbox" in h.get("content-security-policy", "") and "content-disposition" not in h,
              "a flame graph with a selection is shown inline, sandboxed")
    st, h, out = request(srv, "GET", f"{loc}/report.html?{q}")
    ctx.check(st == 200 and out == cli_named(ctx, src, "report-html", flags_of(SELECTION)),
              "the HTML report with the selection: the command's")
    st, _, kept = request(srv, "GET", f"{loc}/flame-wall.svg")
    ctx.check(kept == cli_named(ctx, src, "flamegraph", []), "without a selection: the kept flame graph")
    for bad, status in (("since=abc", 400), ("bogus=1", 400), ("thread=", 400)):
        st, h, out = request(srv, "GET", f"{loc}/trace.folded?download=1&{bad}")
        ctx.check(st == status and out.count(b"\n") == 1, f"{bad}: {status} and one line: {st} {out!r}")
    st, _, page = request(srv, "GET", loc)
    for want in ('<form id="select"', 'id="thread-list"', 'id="since"', 'id="until"', 'id="weight"', 'id="reverse"',
                 'id="ignore-idle"', f'data-info="{loc}/info.json"'):
        ctx.check(want.encode() in page, f"the result page's controls: {want}")


def check_hostile_thread_name(ctx, srv):
    hostile = "</script><img src=x onerror=alert(1)>\"'&\u202e"
    doc = {"traceEvents": [{"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": hostile}},
                           {"ph": "X", "name": "work", "pid": 7, "tid": 8, "ts": 0, "dur": 100}]}
    mp, ctype = multipart([("trace", "hostile.json", json.dumps(doc).encode())])
    st, _, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
    ctx.eq(st, 200, "a trace with a hostile thread name: uploaded")
    st, _, raw = request(srv, "GET", json.loads(out)["result"] + "/info.json")
    ctx.check(b"<" not in raw and b">" not in raw, "info.json: no markup character, even in a hostile name")
    ctx.eq([t["name"] for t in json.loads(raw)["threads"]], [hostile], "info.json: the hostile name, exactly")


# ---- the load test -------------------------------------------------------------------


def load_test(ctx, srcs):
    keep = 20
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "-j", "2", "--keep", str(keep), tmpdir=os.path.join(ctx.work, "load"))
    want = {s: cli_folded(ctx, s) for s in srcs}
    datas = {s: open(s, "rb").read() for s in srcs}
    max_results, evicted = [0], []

    def one(i):
        s = srcs[i % len(srcs)]
        mp, ctype = multipart([("trace", os.path.basename(s), datas[s])])
        st, _, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"},
                             timeout=600)
        if st != 200:
            return f"upload {i}: {st} {out[:200]!r}"
        loc = json.loads(out)["result"]
        st, _, folded = request(srv, "GET", loc + "/trace.folded?download=1")
        store = srv.store()
        held = [d for d in os.listdir(store) if len(d) == 32]
        max_results[0] = max(max_results[0], len(held))
        if st == 404 and loc.rstrip("/").rsplit("/", 1)[-1] not in held and len(held) == keep:
            # a client stalled while --keep newer results came in: the store, full, let this one
            # go as --keep says; the 404 is the truth, counted (a few at most)
            evicted.append(i)
            return None
        if st != 200:
            return f"download {i}: {st}"
        return None if folded == want[s] else f"upload {i} ({s}): folded differs from the CLI's"

    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        errors = [e for e in pool.map(one, range(200)) if e]
    took = time.time() - t0
    ctx.eq(errors[:5], [], "200 uploads, 8 at a time: every result correct")
    ctx.check(len(evicted) <= 10, f"results let go by --keep before their client's download: {len(evicted)} (at most 10)")
    hwm = srv.vm_hwm_kb()
    with open(ctx.traceconv, "rb") as f:  # ASan's shadow memory and quarantine weigh on RSS
        bound = 1024 if b"__asan_init" in f.read() else 100
    ctx.check(hwm is not None and hwm < bound * 1024, f"server peak RSS {hwm} kB (bound {bound} MB)")
    store = srv.store()
    results = [d for d in os.listdir(store) if len(d) == 32]
    ctx.check(len(results) <= keep and max_results[0] <= keep, f"store holds {len(results)} results, "
              f"at most {max_results[0]} seen (--keep {keep})")
    ctx.eq(leftovers(srv), [], "no upload left in the store's tmp after the load")
    rc = srv.stop()
    ctx.eq(rc, 0, "exit status after SIGTERM")
    ctx.eq(os.listdir(srv.tmpdir), [], "nothing left under TMPDIR after SIGTERM (the default store removed)")
    print(f"load: 200 uploads in {took:.1f} s, peak RSS {hwm} kB")


def check_sigterm_while_converting(ctx, src):
    """SIGTERM with conversions running or waiting: they are canceled, exit 0, nothing left."""
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "-j", "1", tmpdir=os.path.join(ctx.work, "sigterm"))
    data = open(src, "rb").read()
    mp, ctype = multipart([("trace", "x.trace", data)])
    pool = concurrent.futures.ThreadPoolExecutor(4)
    futs = [pool.submit(lambda: request(srv, "POST", "/upload", mp, {"Content-Type": ctype}))
            for _ in range(4)]
    time.sleep(0.2)
    rc = srv.stop()
    for f in futs:
        try:
            f.result(timeout=60)
        except Exception:
            pass  # a connection closed by the stop
    pool.shutdown()
    ctx.eq(rc, 0, "exit status after SIGTERM during conversions")
    ctx.eq(os.listdir(srv.tmpdir), [], "nothing left after SIGTERM during conversions")


def check_store_option(ctx, src):
    """--store DIR keeps results across a restart; --keep 1 keeps only the newest."""
    store = os.path.join(ctx.work, "kept-store")
    shutil.rmtree(store, ignore_errors=True)
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--store", store, "--keep", "1",
                           tmpdir=os.path.join(ctx.work, "store-tmp"))
    mp, ctype = multipart([("trace", "a.trace", open(src, "rb").read())])
    locs = [json.loads(request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})[2])
            ["result"] for _ in range(2)]
    ctx.eq(request(srv, "GET", locs[0])[0], 404, "--keep 1: the older result expired")
    ctx.eq(srv.stop(), 0, "--store: exit status")
    ctx.eq(oct(os.stat(store).st_mode & 0o777), "0o700", "--store DIR is private")
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--store", store, tmpdir=os.path.join(ctx.work, "store-tmp"))
    ctx.eq(request(srv, "GET", locs[1])[0], 200, "--store: a result survives a restart")
    ctx.eq(srv.stop(), 0, "--store: exit status (2)")
    ctx.eq(os.listdir(store), [locs[1][3:]], "--store: the result, and no tmp, after the stop")
    kept = os.path.join(store, locs[1][3:])
    ctx.eq(sorted((f, oct(os.stat(os.path.join(kept, f)).st_mode & 0o777)) for f in os.listdir(kept)
                  if f.startswith(".tc-") or os.stat(os.path.join(kept, f)).st_mode & 0o077),
           [], "--store: every file of a result private (0600), no temporary file left")


def check_keep_age(ctx, src):
    """--keep 2s: a result answers at once, then 404 once it is older than 2 s, and its
    directory leaves the store (bounded wait)."""
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--keep", "2s", tmpdir=os.path.join(ctx.work, "keep-age"))
    try:
        mp, ctype = multipart([("trace", "a.trace", open(src, "rb").read())])
        st, _, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        if not ctx.eq(st, 200, "--keep 2s: upload"):
            return
        loc = json.loads(out)["result"]
        born = time.time()
        ctx.eq(request(srv, "GET", loc)[0], 200, "--keep 2s: the result right after the upload")
        gone = None
        while time.time() - born < 15:
            time.sleep(0.25)
            if request(srv, "GET", loc)[0] == 404 and request(srv, "GET", loc + "/trace.folded")[0] == 404:
                gone = time.time() - born
                break
        ctx.check(gone is not None and gone >= 1.0, f"--keep 2s: 404 after its age (after {gone} s, bound 15 s)")
        deadline = time.time() + 10
        while time.time() < deadline and [d for d in os.listdir(srv.store()) if len(d) == 32]:
            time.sleep(0.25)
        ctx.eq([d for d in os.listdir(srv.store()) if len(d) == 32], [], "--keep 2s: the result left the disk")
    finally:
        ctx.eq(srv.stop(), 0, "--keep 2s: exit status")


def check_queue_bound(ctx, small):
    """--queue 1 -j 1: one slow conversion running and one waiting, a third upload is
    refused at once with 503, a one-line reason and Retry-After; the two finish; then the
    server takes uploads again."""
    big = os.path.join(ctx.work, "bench64.trace")
    r = subprocess.run([os.path.join(os.path.dirname(ctx.traceconv), "tracegen"), "--bench", "64", big],
                       capture_output=True)
    if not ctx.check(r.returncode == 0, f"tracegen --bench 64: {r.stderr[-200:]!r}"):
        return
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "-j", "1", "--queue", "1", tmpdir=os.path.join(ctx.work, "queue"))
    tmp = os.path.join(srv.store(), "tmp")
    pool = concurrent.futures.ThreadPoolExecutor(2)
    try:
        big_data, small_data = open(big, "rb").read(), open(small, "rb").read()

        def uploads_complete(n, size):
            """n upload files in tmp/, one of them of the given size (fully received)."""
            files = [os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".upload")]
            return len(files) == n and any(os.path.getsize(f) == size for f in files)

        def wait_for(cond, what, bound=60):
            deadline = time.time() + bound
            while time.time() < deadline:
                try:
                    if cond():
                        return True
                except OSError:
                    pass  # a file removed while looked at
                time.sleep(0.02)
            return ctx.check(False, f"{what} (bound {bound} s)")

        running = pool.submit(api, srv, "to=flamegraph&name=big.trace", big_data)
        if not wait_for(lambda: uploads_complete(1, len(big_data)), "the slow upload is received"):
            return
        time.sleep(0.3)  # submitted to the only worker: the queue is empty again
        waiting = pool.submit(api, srv, "to=folded&name=small.trace", small_data)
        if not wait_for(lambda: uploads_complete(2, len(small_data)), "the second upload is received and waits"):
            return
        time.sleep(0.1)
        ctx.check(not running.done(), "the slow conversion is still running when the third upload comes")
        st, h, out = api(srv, "to=folded&name=third.trace", small_data)
        ctx.eq(st, 503, "--queue 1 -j 1: a third upload while one runs and one waits")
        ctx.eq(h.get("retry-after"), "5", "503: Retry-After")
        ctx.eq(out[:200], b"too many conversions are waiting: try again later\n", "503: one clear line")
        mp, ctype = multipart([("trace", "page.trace", small_data)])
        st, h, out = request(srv, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        ctx.eq((st, h.get("retry-after")), (503, "5"), "the page's upload too: 503 with Retry-After")
        ctx.check(b"try again later" in out, f"the page's 503 says why: {out[:100]!r}")
        st, _, out = running.result(timeout=600)
        ctx.check(st == 200 and b"<svg" in out[:600], f"the slow conversion: {st} {out[:100]!r}")
        st, _, out = waiting.result(timeout=600)
        ctx.check(st == 200 and out == cli_folded(ctx, small), f"the waiting conversion: {st}, the CLI's folded")
        st, _, out = api(srv, "to=folded&name=after.trace", small_data)
        ctx.check(st == 200 and out == cli_folded(ctx, small), f"after the queue drained, uploads are taken: {st}")
    finally:
        pool.shutdown(wait=True)
        ctx.eq(srv.stop(), 0, "--queue: exit status")
        ctx.eq(os.listdir(srv.tmpdir), [], "--queue: nothing left")


def main():
    ctx = tclib.Ctx()
    cases = {name: path for name, path, fx in ctx.project_cases() if fx}
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    limit = 1 << 20
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--max-upload", "1M")
    try:
        st, h, page = request(srv, "GET", "/")
        ctx.eq(st, 200, "GET /")
        check_security_headers(ctx, "/", h)
        ctx.check(b'<form id="upload"' in page, "the upload form")
        ctx.eq(request(srv, "HEAD", "/")[0], 200, "HEAD /")
        check_formats(ctx, srv)
        for name in ("app-startup", "open-at-end", "exits-without-enter"):
            check_pprof(ctx, srv, env, cases[name])
            check_perfetto(ctx, srv, cases[name])
            check_json(ctx, srv, cases[name])
        check_gzip_and_options(ctx, srv, cases["app-startup"])
        check_422(ctx, srv, ctx.corpus)
        check_display_name(ctx, srv, env, cases["app-startup"])
        check_rhea_mapping(ctx, srv)
        check_413(ctx, srv, limit)
        loc = check_page_result(ctx, srv, cases["app-startup"])
        check_paths(ctx, srv, loc)
        check_selection_api(ctx, srv, cases["app-startup"])
        check_selection_result(ctx, srv, cases["app-startup"])
        check_hostile_thread_name(ctx, srv)
        check_hint_on_page(ctx, srv)
    finally:
        rc = srv.stop()
    ctx.eq(rc, 0, "exit status after SIGTERM")
    ctx.eq(os.listdir(srv.tmpdir), [], "nothing left under TMPDIR")
    small = [p for n, p in sorted(cases.items()) if os.path.getsize(p) < 400_000]
    load_test(ctx, small)
    check_sigterm_while_converting(ctx, cases["app-startup"])
    check_store_option(ctx, cases["app-startup"])
    check_keep_age(ctx, cases["app-startup"])
    check_queue_bound(ctx, cases["app-startup"])
    ctx.done()


if __name__ == "__main__":
    main()
