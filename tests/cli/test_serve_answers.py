#!/usr/bin/env python3
"""`traceconv serve`: what an answer says it is, who may ask, and how slowly an answer may be
read (issue 38, items 10 and 14a). Raw sockets throughout: http.client may merge or refuse
repeated headers, and the requests here must go out exactly as written.

Item 10, a download is named and typed by what is served:
- every download of a result page (its links) and the API's variant writers, each asked with
  no query, ?html, ?csv and ?text (the options that pick a variant), with and without
  ?download=1: the variant served is the one this test's model expects (the output's own,
  or the variant of its writer the query's option picks, from `--list-formats --json`; a
  variant named by the output stays itself), its Content-Type is that variant's media type,
  its attachment name ends with that variant's extension (report.txt?html is not
  "app.report.txt"), it is shown inline only when that variant is a page or an image, and
  its bytes are the command's `-o VARIANT` output of the same file name (the outputs with
  options of their own, the CPU and merged flame graphs, are compared by headers only);
- a request with two Host headers (the second another site's, in either order; `host:` and
  `Host:`; the same value twice) or two Origin headers (`origin:` and `ORIGIN:`, one of them
  another site's or null) is refused with 400 and one line, for GET and for POST (nothing
  converted, nothing kept); one of each is still answered.
Item 14a, a client that reads its answer slowly is bounded as one that sends its body
slowly: with --header-timeout 2 --min-rate 64K, 64 connections (the per-address limit) that
ask for a large download (the HTML report of a trace of 8000 methods, over 4 MB) and read it one byte a second are all dropped within 4 s (twice
the grace), and a normal client is then answered in full; on today's code they held every
connection of 127.0.0.1 until libmicrohttpd's 60 s idle timeout. A normal download of the
same file at full speed is never cut.
Found beside it: a GET or HEAD that declares a body and trickles it is closed within 4 s
under --header-timeout 2, as a POST body is (it was not timed at all).
"""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402
from test_serve_edges import http, multipart, raw  # noqa: E402

VARIANT_OPTIONS = ("html", "csv", "text")


def variants_model(ctx):
    """Every writer variant: name -> (its writer, its row of --list-formats --json)."""
    out = subprocess.run([ctx.traceconv, "--list-formats", "--json"], capture_output=True, check=True).stdout
    model = {}
    for w in json.loads(out)["writers"]:
        for v in w["variants"]:
            model[v["name"]] = (w, v)
    return model


def expected_variant(model, own, option):
    """What an output of variant `own` asked with ?option is: the variant of its writer that
    option picks when `own` is its writer's default (the writer named), else `own`."""
    writer, row = model[own]
    if option and writer["variants"][0]["name"] == own:
        for v in writer["variants"]:
            if v.get("option") == option:
                return v["name"]
    return own


def cli_output(ctx, src_named, variant, option, cache):
    """The command's output for -o variant with --option (as the query gives it), of the file
    of the same name."""
    if (variant, option) not in cache:
        d = os.path.dirname(src_named)
        out = os.path.join(d, f"cli.{variant}.{option}")
        subprocess.run([ctx.traceconv, "-q", "-f", "-o", variant, *([f"--{option}"] if option else []),
                        os.path.basename(src_named), out], cwd=d, check=True, capture_output=True)
        cache[variant, option] = open(out, "rb").read()
    return cache[variant, option]


def check_names_and_types(ctx, srv, src):
    model = variants_model(ctx)
    named = os.path.join(ctx.work, "named", "app.trace")
    os.makedirs(os.path.dirname(named), exist_ok=True)
    with open(named, "wb") as f:
        f.write(open(src, "rb").read())
    mp, ctype = multipart([("trace", "app.trace", open(src, "rb").read())])
    st, _, out = http(srv.port, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
    ctx.eq(st, 200, "page upload")
    loc = json.loads(out)["result"]
    st, _, page = http(srv.port, "GET", loc)
    links = re.findall(r'href="(/r/[0-9a-f]{32}/([^"?/]+))\?download=1" data-writer="([^"]+)"', page.decode())
    ctx.check(len(links) >= 12, f"the result page links every download ({len(links)})")
    cache = {}
    asked = []
    for href, f, writer in links:
        # the output's own variant: of its writer (data-writer), the one whose extension its
        # file name ends with (report.html: report-html), the longest
        own = max((v["name"] for v in model[writer][0]["variants"] if ("." + f).endswith("." + v["extension"])),
                  key=lambda n: len(model[n][1]["extension"]), default=writer) if writer in model else None
        if not own:
            ctx.fail(f"{href}: data-writer {writer!r} is no writer of --list-formats")
            continue
        for option in ("",) + VARIANT_OPTIONS:
            for download in (True, False):
                query = "&".join(x for x in (option, "download=1" if download else "") if x)
                asked.append((f"{href}{'?' + query if query else ''}", own, option, download, f))
    # the API: each writer with variants, named by the writer or by a variant
    for name, (writer, _) in model.items():
        if len(writer["variants"]) > 1:
            for option in ("",) + VARIANT_OPTIONS:
                asked.append((f"/api/convert?to={name}&name=app.trace" + (f"&{option}" if option else ""), name,
                              option, True, None))
    trace = open(src, "rb").read()
    wrong = []
    for url, own, option, download, f in asked:
        if url.startswith("/api/"):
            st, h, body = http(srv.port, "POST", url, trace)
        else:
            st, h, body = http(srv.port, "GET", url)
        want = expected_variant(model, own, option)
        wrow = model[want][1]
        if st != 200:
            wrong.append(f"{url}: {st} {body[:200]!r}")
            continue
        ctype = h.get("content-type", "")
        cd = h.get("content-disposition")
        m = re.fullmatch(r'attachment; filename="([^"]+)"', cd or "")
        inline = wrow["inline"] and not download
        problems = []
        if ctype != wrow["mime"]:
            problems.append(f"Content-Type {ctype!r}, the {want} variant is {wrow['mime']!r}")
        if inline and cd is not None:
            problems.append(f"a {want} view, yet an attachment ({cd!r})")
        if not inline and not (m and m.group(1).startswith("app.") and m.group(1).endswith("." + wrow["extension"])):
            problems.append(f"attachment {cd!r}: not app.*.{wrow['extension']} ({want})")
        if not inline and m and want == own and f and not m.group(1).endswith("." + f.split(".", 1)[-1]) \
                and own != "flamegraph":
            problems.append(f"attachment {cd!r}: not the output's own name ({f})")
        own_options = f and f.startswith("flame-") and f != "flame-wall.svg"
        if not own_options and body != cli_output(ctx, named, want, option, cache):
            problems.append(f"the bytes are not the command's -o {want} output ({len(body)} bytes, {body[:60]!r})")
        if problems:
            wrong.append(f"{url}: " + "; ".join(problems))
    ctx.check(not wrong, f"{len(asked)} downloads and API answers are named and typed by the variant served: "
              f"{len(wrong)} are not:\n  " + "\n  ".join(wrong[:20]))


def status_of(data):
    return int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else None


def check_repeated_headers(ctx, srv, small):
    p = srv.port
    me, evil = f"127.0.0.1:{p}", f"evil.example:{p}"
    cases = [
        ("two Host, the second another site's", [("Host", me), ("Host", evil)]),
        ("two Host, the first another site's", [("Host", evil), ("Host", me)]),
        ("host: and Host:", [("host", me), ("Host", evil)]),
        ("HOST: and host:, the same value", [("HOST", me), ("host", me)]),
        ("two Origin, the second another site's", [("Host", me), ("Origin", f"http://{me}"),
                                                    ("Origin", "http://evil.example")]),
        ("origin: and ORIGIN: null", [("Host", me), ("origin", f"http://{me}"), ("ORIGIN", "null")]),
        ("Origin: and origin:, the same value", [("Host", me), ("Origin", f"http://{me}"), ("origin", f"http://{me}")]),
    ]
    for what, headers in cases:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers)
        for method, path, body in (("GET", "/api/formats", b""),
                                   ("POST", "/api/convert?to=folded&name=a.trace", small)):
            req = (f"{method} {path} HTTP/1.1\r\n{head}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                   .encode() + body)
            out = raw(p, req)
            top, _, rest = out.partition(b"\r\n\r\n")
            ctx.check(status_of(out) == 400 and rest.count(b"\n") == 1 and b"Host" in rest,
                      f"{what}, {method}: 400 and one line: {out[:12]!r} {rest[:200]!r}")
    ok_head = f"host: {me}\r\nORIGIN: http://{me}\r\n"
    out = raw(p, f"POST /api/convert?to=folded&name=a.trace HTTP/1.1\r\n{ok_head}Content-Length: {len(small)}\r\n"
                 "Connection: close\r\n\r\n".encode() + small)
    ctx.eq(status_of(out), 200, "one host: and one ORIGIN: (any case): converted")
    store = srv.store()
    left = sorted(os.listdir(os.path.join(store, "tmp"))) if store else []
    ctx.eq(left, [], "nothing of the refused requests is kept")


# ---- item 14a ---------------------------------------------------------------------------


def closed_by_peer(s):
    """Whether the server reset or closed the connection, though the client has not read what
    its kernel holds yet (a reset does not drop that, and reading it one byte a second would
    take an hour): the TCP state (Linux's TCP_INFO), CLOSE or CLOSE_WAIT."""
    if not hasattr(socket, "TCP_INFO"):
        return False
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0] in (7, 8)


def slow_reader(port, path, stop, events, t0):
    """Ask for path and read the answer one byte a second, until the server drops the
    connection (its time since t0 goes to events) or stop is set."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the client's kernel takes little for it
    s.settimeout(30)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        while not stop.is_set() and not closed_by_peer(s):
            if not s.recv(1):
                break
            time.sleep(1.0)
    except OSError:
        pass
    if not stop.is_set():
        events.append(time.time() - t0)
    s.close()


def full_get(port, path, timeout=30):
    data = raw(port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode(),
               timeout=timeout)
    top, _, body = data.partition(b"\r\n\r\n")
    m = re.search(rb"\r\ncontent-length: *(\d+)", top, re.I)
    return status_of(data), int(m.group(1)) if m else None, body


def check_slow_readers(ctx, big):
    grace = 2
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--header-timeout", str(grace), "--min-rate", "64K",
                           tmpdir=os.path.join(ctx.work, "slow-readers-tmp"))
    stop, dropped, threads = threading.Event(), [], []
    try:
        mp, ctype = multipart([("trace", "wide.json", open(big, "rb").read())])
        st, _, out = http(srv.port, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        loc = json.loads(out)["result"]
        f = "report.html"  # kept by the result: no conversion is waited for, only the reading
        path = f"{loc}/{f}?download=1"
        t0 = time.time()
        st, n, body = full_get(srv.port, path)
        took = time.time() - t0
        ctx.check(st == 200 and n == len(body) and n >= 4 << 20,
                  f"a normal client reads all of {f}, over 4 MB ({len(body)} of {n} bytes, {took:.2f} s)")
        t0 = time.time()
        for _ in range(64):
            t = threading.Thread(target=slow_reader, args=(srv.port, path, stop, dropped, t0), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join(timeout=max(0.1, 2 * grace + 1.5 - (time.time() - t0)))
        late = [t for t in threads if t.is_alive()]
        ctx.check(not late and dropped and max(dropped) <= 2 * grace + 1.0,
                  f"64 clients reading one byte a second are dropped within {2 * grace} s (+1 s of sweep): "
                  f"{len(dropped)} dropped, the last after {max(dropped or [0]):.1f} s, {len(late)} still connected")
        a = time.time()
        st, n, body = full_get(srv.port, path, timeout=20)
        ctx.check(st == 200 and n == len(body),
                  f"then a normal client is answered in full: {st}, {len(body)} of {n} bytes in {time.time() - a:.1f} s")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)
        ctx.eq(srv.stop(), 0, "exit status")


def check_slow_get_body(ctx):
    """A GET (or HEAD) that declares a body and sends it a byte a second is closed as a slow
    POST body is (found beside item 14a: the body of a GET was not timed)."""
    grace = 2
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--header-timeout", str(grace),
                           tmpdir=os.path.join(ctx.work, "slow-get-tmp"))
    try:
        for method in ("GET", "HEAD"):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
            s.sendall(f"{method} /api/formats HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
                      "Content-Length: 100000\r\n\r\n".encode())
            t0, closed = time.time(), None
            while time.time() - t0 < 3 * grace + 2:
                time.sleep(0.5)
                try:
                    s.sendall(b"x")
                    s.setblocking(False)
                    try:
                        if s.recv(1 << 16) == b"":
                            closed = time.time() - t0
                            break
                    except BlockingIOError:
                        pass
                    s.setblocking(True)
                except OSError:
                    closed = time.time() - t0
                    break
            s.close()
            ctx.check(closed is not None and closed <= 2 * grace + 1.0,
                      f"--header-timeout 2: a {method} body sent a byte each 0.5 s is closed within {2 * grace} s "
                      f"(+1 s of sweep): {closed}")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")


def wide_trace(path, methods=8000):
    """A Chrome JSON trace of one thread: a root calling `methods` distinct methods once each,
    so that its HTML report (a row and a detail per method) is several MB."""
    ev = ['{"ph":"B","pid":1,"tid":1,"ts":0,"name":"root"}']
    for i in range(methods):
        ev.append('{"ph":"B","pid":1,"tid":1,"ts":%d,"name":"com.example.C%d.method%d"}' % (10 * i + 1, i, i))
        ev.append('{"ph":"E","pid":1,"tid":1,"ts":%d}' % (10 * i + 2 + i % 7))
    ev.append('{"ph":"E","pid":1,"tid":1,"ts":%d}' % (10 * methods + 5))
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n' + ",\n".join(ev) + "]}\n")
    return path


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.corpus, "app-startup.trace")
    small = open(src, "rb").read()
    srv = serve_lib.Server(ctx.traceconv, ctx.work)
    try:
        serve_lib.run_checks(ctx, (("names and types", lambda: check_names_and_types(ctx, srv, src)),
                                   ("repeated headers", lambda: check_repeated_headers(ctx, srv, small))))
    finally:
        ctx.eq(srv.stop(), 0, "exit status")
    serve_lib.run_checks(ctx, (("slow readers", lambda: check_slow_readers(ctx, wide_trace(os.path.join(ctx.work,
                                                                                                  "wide.json")))),
                               ("slow GET body", lambda: check_slow_get_body(ctx))))
    ctx.done()


if __name__ == "__main__":
    main()
