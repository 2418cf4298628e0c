#!/usr/bin/env python3
"""`traceconv serve` at its edges (issue 22, items 2, 3, 4 and 16).

Item 2, one request cannot fill the disk or outlive its client:
- a JSON trace 8000 frames deep, POST /api/convert?to=folded&max-depth=1000000: its
  folded text would be over 200 MB (computed here from the depth); the answer is 422
  with the library's line (`output larger than --max-output (64x the input: ...)`), in
  seconds, and the store's tmp/ never holds more than 64x the upload (sampled while it
  runs); with --max-output 1M the line says 1M;
- a client that closes its connection while its conversion runs (a trace 40000 frames
  deep of one method to pprof: about 10 s of deflate in the writer's finish, a small
  output): the server's CPU time stops growing within 2 s and tmp/ is empty;
- SIGTERM while such a conversion is in its finish: exit 0 within 4 s, nothing left
  under TMPDIR.
Item 3, Host and Origin:
- a POST from another site's page (Origin http://evil.example, Origin null, this host on
  another port) is 403 with one line, and converts nothing; the server's own origin (as
  127.0.0.1 and as localhost) and no Origin at all (curl) are converted;
- Host evil.example:PORT (DNS rebinding), 127.0.0.1 without the port, or another port:
  403, also for GET; with --allow-host traces.example that name is answered;
- on [::1]: Host [::1]:PORT and localhost:PORT answered, 127.0.0.1:PORT refused;
- --listen 0.0.0.0:0 warns on stderr that the address is not a loopback one (127.0.0.1
  does not), and answers Host 127.0.0.1:PORT but not evil.example.
Item 4, slow clients:
- 64 connections from 127.0.0.1 sending one header byte every 0.5 s do not lock out a
  normal client: GET /api/formats answers at once while they trickle (default limits);
- with --header-timeout 2: a connection still sending its headers is closed after 2 s
  (bound 4.5 s), a body sent at 10 bytes a second likewise; with the defaults a
  trickling connection is closed between 9 and 12.5 s (the issue's 10 s);
- two `trace` parts in one upload: 400 with one line, not converted, nothing kept;
- requests pipelined after a POST (in the same write, or while it converts, or after a
  422) are all answered, in order.
Item 16, the page works for any trace the API takes:
- --keep-size 256K: a trace of 300K (tracegen) uploaded through the page is refused
  (413, "too large", the sizes and the option) before its body is read; sent chunked
  (no declared size) it is refused after; a trace whose upload fits but whose result
  does not is refused at publishing; the earlier result is still there every time
  (nothing was evicted for them); the page carries the limits for its script;
- a result that fits answers its page and downloads on every look-up; a result holds
  what the page shows (no JSON, pprof, ... files), and those downloads are converted
  on demand: the folded and JSON downloads equal the CLI's outputs of the same file.
"""
import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402
from test_max_output import deep_trace, folded_size  # noqa: E402


def raw(port, data, timeout=30, host="127.0.0.1", family=socket.AF_INET):
    """Send data on a fresh connection and read until the server closes it (or timeout)."""
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect((host, port))
    s.sendall(data)
    out = []
    try:
        while True:
            c = s.recv(1 << 20)
            if not c:
                break
            out.append(c)
    except (socket.timeout, OSError):
        pass
    s.close()
    return b"".join(out)


def http(port, method, path, body=b"", headers=None, host=None, family=socket.AF_INET, addr="127.0.0.1",
         timeout=120):
    """One request with exactly these headers (Host given, or this server's); (status, headers, body)."""
    h = {"Host": host or f"{addr if family == socket.AF_INET else '[' + addr + ']'}:{port}",
         "Content-Length": str(len(body)), "Connection": "close"}
    h.update(headers or {})
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items() if v is not None)
    data = raw(port, head.encode() + b"\r\n" + body, timeout=timeout, host=addr, family=family)
    if not data:
        return None, {}, b""
    top, _, rest = data.partition(b"\r\n\r\n")
    lines = top.decode(errors="replace").split("\r\n")
    hdrs = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return int(lines[0].split()[1]), hdrs, rest


def multipart(fields):
    boundary = "tcb" + uuid.uuid4().hex
    out = b""
    for name, filename, data in fields:
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def tmp_files(srv):
    store = srv.store()
    return sorted(os.listdir(os.path.join(store, "tmp"))) if store else []


def tmp_bytes(srv):
    """The bytes of the store's tmp/: its files, and the unlinked ones the server holds open
    there (an API output is unlinked as soon as it is created)."""
    total = 0
    store = srv.store()
    if not store:
        return 0
    tmp = os.path.join(store, "tmp")
    for root, _, files in os.walk(tmp):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    fds, seen = f"/proc/{srv.proc.pid}/fd", set()
    for fd in os.listdir(fds) if os.path.isdir(fds) else ():
        try:
            target = os.readlink(os.path.join(fds, fd))
            st = os.stat(os.path.join(fds, fd))
            if target.startswith(tmp) and target.endswith(" (deleted)") and st.st_ino not in seen:
                seen.add(st.st_ino)  # a file open twice (a descriptor and its FILE) is counted once
                total += st.st_size
        except OSError:
            pass
    return total


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def statuses(out):
    """The status of each response in a stream of them (a body need not end in CRLF)."""
    got, i = [], out.find(b"HTTP/1.1 ")
    while i >= 0:
        got.append(int(out[i + 9:i + 12]))
        i = out.find(b"HTTP/1.1 ", i + 12)
    return got


def line_of(body):
    return body.decode(errors="replace").strip()


# ---- item 2 ---------------------------------------------------------------------------


def check_output_bound(ctx):
    d = os.path.join(ctx.work, "bound")
    os.makedirs(d, exist_ok=True)
    src = deep_trace(os.path.join(d, "deep.json"), 8000)
    data = open(src, "rb").read()
    ctx.check(folded_size(8000) > 64 * len(data), "the folded text would pass 64x the upload")
    srv = serve_lib.Server(ctx.traceconv, ctx.work, tmpdir=os.path.join(ctx.work, "bound-tmp"))
    try:
        peak, stop = [0], threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], tmp_bytes(srv))
                time.sleep(0.05)

        t = threading.Thread(target=sample)
        t.start()
        t0 = time.time()
        st, _, body = http(srv.port, "POST", "/api/convert?to=folded&max-depth=1000000&name=deep.json", data)
        took = time.time() - t0
        stop.set()
        t.join()
        ctx.eq(st, 422, "a depth-squared folded output: 422")
        ctx.check(line_of(body).startswith("traceconv: deep.json: folded: output larger than --max-output (64x the "
                                           "input: "), f"the line names the bound: {body[:200]!r}")
        ctx.check(took < 30, f"answered in {took:.1f} s (bound 30 s)")
        print(f"depth-squared folded request: 422 after {took:.2f} s, tmp/ peak {peak[0] / 1e6:.1f} MB "
              f"(64x the upload: {64 * len(data) / 1e6:.1f} MB)")
        ctx.check(peak[0] <= 64 * len(data) + 2 * len(data) + (1 << 20),
                  f"tmp/ held at most {peak[0]} bytes (64x the upload: {64 * len(data)})")
        ctx.eq(tmp_files(srv), [], "nothing left in tmp/")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--max-output", "1M", tmpdir=os.path.join(ctx.work, "bound-tmp"))
    try:
        st, _, body = http(srv.port, "POST", "/api/convert?to=folded&max-depth=1000000&name=deep.json", data)
        ctx.eq((st, line_of(body)), (422, "traceconv: deep.json: folded: output larger than --max-output (1M)"),
               "--max-output 1M: the line")
        r = subprocess.run([ctx.traceconv, "serve", "--max-output", "lots"], capture_output=True)
        ctx.check(r.returncode == 2 and b"--max-output" in r.stderr, "serve --max-output lots: a usage error")
    finally:
        srv.stop()


def slow_pprof_request(ctx, port, name="rec.json"):
    """A socket whose request is a trace 40000 frames deep of one method, to pprof: the
    writer's finish deflates about 1.6 GB of location lists (seconds), into a small output."""
    path = os.path.join(ctx.work, name)
    if not os.path.exists(path):
        deep_trace(path, 40000, same_name=True)
    data = open(path, "rb").read()
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall((f"POST /api/convert?to=pprof&max-depth=1000000&name={name} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Content-Length: {len(data)}\r\n\r\n").encode() + data)
    return s


def wait_busy(srv, seconds=1.0, bound=60):
    """Until the server has burnt `seconds` of CPU since now (its conversion is under way)."""
    start, t0 = cpu_seconds(srv.proc.pid), time.time()
    while time.time() - t0 < bound:
        if cpu_seconds(srv.proc.pid) - start >= seconds:
            return True
        time.sleep(0.05)
    return False


def check_disconnect(ctx):
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "-j", "1", tmpdir=os.path.join(ctx.work, "gone-tmp"))
    try:
        s = slow_pprof_request(ctx, srv.port)
        ctx.check(wait_busy(srv), "the conversion runs")
        a = cpu_seconds(srv.proc.pid)
        time.sleep(1.0)
        rate = cpu_seconds(srv.proc.pid) - a  # what the conversion gets of a CPU on this machine now
        s.close()  # the client leaves
        time.sleep(2.0)
        before = cpu_seconds(srv.proc.pid)
        time.sleep(2.0)
        burnt = cpu_seconds(srv.proc.pid) - before
        print(f"client gone: server CPU {burnt:.2f} s in 2 s, 2 s after ({rate:.2f} s a second while converting)")
        ctx.check(burnt < min(0.3, 0.25 * 2 * rate),
                  f"a client that left: its job stops (server CPU {burnt:.2f} s in 2 s, 2 s after; "
                  f"{rate:.2f} s a second while it ran)")
        ctx.eq(tmp_files(srv), [], "a client that left: nothing left in tmp/")
        st, _, _ = http(srv.port, "GET", "/api/formats")
        ctx.eq(st, 200, "the server goes on")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")


def check_sigterm_in_finish(ctx):
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "-j", "1", tmpdir=os.path.join(ctx.work, "term-tmp"))
    s = slow_pprof_request(ctx, srv.port)
    ctx.check(wait_busy(srv, 1.5), "the conversion runs")
    t0 = time.time()
    rc = srv.stop(timeout=60)
    took = time.time() - t0
    s.close()
    ctx.eq(rc, 0, "SIGTERM mid-conversion: exit status")
    ctx.check(took < 4, f"SIGTERM mid-conversion: stopped in {took:.1f} s (bound 4 s)")
    print(f"SIGTERM in a writer's finish: exit after {took:.2f} s")
    ctx.eq(os.listdir(srv.tmpdir), [], "SIGTERM mid-conversion: nothing left under TMPDIR")


# ---- item 3 ---------------------------------------------------------------------------


def check_origin_host(ctx, small):
    srv = serve_lib.Server(ctx.traceconv, ctx.work, tmpdir=os.path.join(ctx.work, "origin-tmp"))
    p = srv.port
    try:
        ctx.check(not any("warning" in l for l in srv.stderr_lines), "no warning on 127.0.0.1")
        q = "/api/convert?to=folded&name=a.trace"
        for origin in ("http://evil.example", "null", f"http://127.0.0.1:{p + 1}", f"http://evil.example:{p}",
                       f"https://127.0.0.1:{p}", f"http://127.0.0.1:{p}/x", f"http://user@127.0.0.1:{p}"):
            st, h, body = http(p, "POST", q, small, {"Origin": origin})
            ctx.eq(st, 403, f"POST with Origin {origin!r}")
            ctx.check(line_of(body).startswith("refused: a cross-origin request") and body.count(b"\n") == 1,
                      f"Origin {origin!r}: one line: {body[:120]!r}")
        for origin in (f"http://127.0.0.1:{p}", f"http://localhost:{p}", f"http://LOCALHOST:{p}", None):
            st, _, body = http(p, "POST", q, small, {"Origin": origin})
            ctx.eq(st, 200, f"POST with Origin {origin!r}: converted")
        mp, ctype = multipart([("trace", "a.trace", small)])
        st, _, body = http(p, "POST", "/upload", mp, {"Origin": "http://evil.example", "Content-Type": ctype})
        ctx.eq(st, 403, "the page's upload from another site: 403")
        for host in (f"evil.example:{p}", "127.0.0.1", f"127.0.0.1:{p + 1}", f"localhost:{p + 1}", f"[::1]:{p}",
                     f"10.1.2.3:{p}", f"traces.example.evil:{p}", "", f"127.0.0.1:{p}:{p}"):
            for method, path, body in (("GET", "/", b""), ("POST", q, small)):
                st, _, out = http(p, method, path, body, host=host if host else None,
                                  headers={"Host": None} if not host else None)
                ctx.check(st in (400, 403), f"{method} with Host {host!r}: refused ({st} {out[:80]!r})")
        for host in (f"127.0.0.1:{p}", f"localhost:{p}", f"LocalHost.:{p}"):
            st, _, _ = http(p, "GET", "/api/formats", host=host)
            ctx.eq(st, 200, f"GET with Host {host!r}")
        ctx.eq(tmp_files(srv), [], "nothing of the refused uploads kept")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--allow-host", "traces.example",
                           tmpdir=os.path.join(ctx.work, "origin-tmp"))
    try:
        p = srv.port
        ctx.eq(http(p, "GET", "/api/formats", host=f"traces.example:{p}")[0], 200, "--allow-host: the name answered")
        ctx.eq(http(p, "POST", "/api/convert?to=folded", small, {"Origin": f"http://traces.example:{p}"},
                    host=f"traces.example:{p}")[0], 200, "--allow-host: its own origin")
        ctx.eq(http(p, "GET", "/api/formats", host=f"other.example:{p}")[0], 403, "--allow-host: another name not")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")
    # IPv6 loopback
    try:
        socket.socket(socket.AF_INET6).bind(("::1", 0))
        v6 = True
    except OSError:
        v6 = False
    if v6:
        proc = subprocess.Popen([ctx.traceconv, "serve", "--listen", "[::1]:0"], stderr=subprocess.PIPE,
                                env=dict(os.environ, TMPDIR=os.path.join(ctx.work, "origin-tmp")))
        line = proc.stderr.readline().decode()
        while "listening on" not in line and line:
            line = proc.stderr.readline().decode()
        port = int(line.strip().rstrip("/").rsplit(":", 1)[1])
        for host, want in ((f"[::1]:{port}", 200), (f"localhost:{port}", 200), (f"127.0.0.1:{port}", 403),
                           (f"[::2]:{port}", 403)):
            st, _, _ = http(port, "GET", "/", host=host, family=socket.AF_INET6, addr="::1")
            ctx.eq(st, want, f"[::1] server, Host {host}")
        st, _, _ = http(port, "POST", "/api/convert?to=folded", small, {"Origin": f"http://[::1]:{port}"},
                        family=socket.AF_INET6, addr="::1")
        ctx.eq(st, 200, "[::1] server: its own origin")
        proc.terminate()
        ctx.eq(proc.wait(timeout=30), 0, "[::1] server: exit status")
    else:
        print("note: no IPv6 loopback here: the [::1] checks are skipped")
    # a wildcard address: warned about, and answers this machine's addresses only
    proc = subprocess.Popen([ctx.traceconv, "serve", "--listen", "0.0.0.0:0"], stderr=subprocess.PIPE,
                            env=dict(os.environ, TMPDIR=os.path.join(ctx.work, "origin-tmp")))
    lines = []
    while True:
        line = proc.stderr.readline().decode()
        lines.append(line)
        if "listening on" in line or not line:
            break
    port = int(lines[-1].strip().rstrip("/").rsplit(":", 1)[1])
    ctx.check(any("warning" in l and "not a loopback address" in l for l in lines),
              f"--listen 0.0.0.0: a warning on stderr: {lines}")
    ctx.eq(http(port, "GET", "/", host=f"127.0.0.1:{port}")[0], 200, "0.0.0.0: Host 127.0.0.1 answered")
    ctx.eq(http(port, "GET", "/", host=f"evil.example:{port}")[0], 403, "0.0.0.0: Host evil.example refused")
    proc.terminate()
    ctx.eq(proc.wait(timeout=30), 0, "0.0.0.0 server: exit status")


# ---- item 4 ---------------------------------------------------------------------------


def trickle(port, stop, closed_after, start, period=0.5, body_rate=None):
    """One slow client: a request's headers one byte every period (or, with body_rate,
    whole headers and then a body at body_rate bytes a second), until the server closes
    the connection (its time since start goes to closed_after) or stop is set."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = f"POST /api/convert?to=folded HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 1000000\r\n\r\n"
    try:
        if body_rate:
            s.sendall(head.encode())
            head = "x" * 10000
            period = 1.0 / body_rate
        for ch in head.encode():
            if stop.is_set():
                break
            s.sendall(bytes([ch]))
            time.sleep(period)
            r = None
            s.setblocking(False)
            try:
                r = s.recv(100)
            except BlockingIOError:
                pass
            except OSError:
                r = b""
            s.setblocking(True)
            if r == b"":
                break
    except OSError:
        pass
    closed_after.append(time.time() - start)
    s.close()


def check_slowloris(ctx):
    srv = serve_lib.Server(ctx.traceconv, ctx.work, tmpdir=os.path.join(ctx.work, "slow-tmp"))
    stop, closed = threading.Event(), []
    try:
        t0 = time.time()
        threads = [threading.Thread(target=trickle, args=(srv.port, stop, closed, t0)) for _ in range(64)]
        for t in threads:
            t.start()
        time.sleep(1.5)  # all 64 connected and trickling
        ok, worst = 0, 0.0
        for _ in range(5):
            a = time.time()
            try:
                st, _, body = http(srv.port, "GET", "/api/formats", timeout=5)
            except OSError:
                st = None
            worst = max(worst, time.time() - a)
            ok += st == 200
        ctx.eq(ok, 5, f"64 slow loopback connections: a normal client is answered (5 of 5, slowest {worst:.2f} s)")
        # the defaults: headers within 10 s
        for t in threads:
            t.join(timeout=20)
        still = [t for t in threads if t.is_alive()]
        stop.set()
        ctx.check(not still, f"every trickling connection was closed ({len(still)} still open after 20 s)")
        kept = [c for c in closed if c < 9.0]
        ctx.check(closed and max(closed) <= 12.5 and len(kept) <= 5,
                  f"a trickling connection is closed after the default 10 s: between {min(closed or [0]):.1f} "
                  f"and {max(closed or [0]):.1f} s ({len(kept)} closed early, making room)")
    finally:
        stop.set()
        ctx.eq(srv.stop(), 0, "exit status")
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--header-timeout", "2",
                           tmpdir=os.path.join(ctx.work, "slow-tmp"))
    try:
        for what, rate in (("headers one byte every 0.5 s", None), ("a body at 10 bytes a second", 10)):
            stop, closed = threading.Event(), []
            t = threading.Thread(target=trickle, args=(srv.port, stop, closed, time.time()),
                                 kwargs={"body_rate": rate})
            t.start()
            t.join(timeout=15)
            stop.set()
            ctx.check(closed and 1.5 <= closed[0] <= 4.5,
                      f"--header-timeout 2, {what}: closed after {closed[0] if closed else None} s (2 to 4.5 s)")
        ctx.eq(tmp_files(srv), [], "nothing of the slow uploads kept")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")


def says(out, text):
    """Whether an answer's line says text: a JSON error is decoded first (its string escapes
    quotes as \\u0027, as every JSON string serve writes), a plain line is taken as it is."""
    try:
        return text in json.loads(out).get("error", "")
    except (ValueError, AttributeError):
        return text.encode() in out


def check_two_parts_and_pipelining(ctx, small, cli_folded):
    srv = serve_lib.Server(ctx.traceconv, ctx.work, tmpdir=os.path.join(ctx.work, "pipe-tmp"))
    p = srv.port
    try:
        for path in ("/api/convert?to=folded", "/upload"):
            for big in (False, True):
                part = small * (40 if big else 1)  # 40 copies: the second part comes in a later read
                body, ctype = multipart([("trace", "a.trace", part), ("trace", "b.trace", part)])
                st, _, out = http(p, "POST", path, body, {"Content-Type": ctype, "Accept": "application/json"})
                ctx.eq(st, 400, f"{path}: two trace parts ({len(body)} bytes): 400")
                ctx.check(says(out, "two 'trace' parts"), f"{path}: the line says why: {out[:120]!r}")
        body, ctype = multipart([("trace", "a.trace", small), ("mapping", "m.txt", b"x"), ("mapping", "n.txt", b"y")])
        st, _, out = http(p, "POST", "/api/convert?to=folded", body, {"Content-Type": ctype})
        ctx.check(st == 400 and says(out, "two 'mapping' parts"), f"two mapping parts: {st} {out[:100]!r}")
        ctx.eq(tmp_files(srv), [], "nothing of the refused uploads kept")
        # format names in any case, as -o and -i take them (issue 22 item 20): the answer is
        # the json writer's, with its type
        st, hdrs, out = http(p, "POST", "/api/convert?to=JSON&from=ART&name=a.trace", small)
        ctx.check(st == 200 and hdrs.get("content-type", "").startswith("application/json")
                  and json.loads(out).get("traceEvents"),
                  f"to=JSON&from=ART: 200, application/json, the trace: {st} {hdrs.get('content-type')}")

        def post(body, q="to=folded&name=a.trace"):
            return (f"POST /api/convert?{q} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nContent-Length: {len(body)}\r\n\r\n"
                    ).encode() + body

        get = f"GET /api/formats HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n".encode()
        last = f"GET /api/formats HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n".encode()
        cases = {"two GETs, then a last one": (get + get + last, [200, 200, 200]),
                 "a GET after a POST": (post(small) + last, [200, 200]),
                 "two GETs after a POST": (post(small) + get + get + last, [200, 200, 200, 200]),
                 "a POST after a POST, then a GET": (post(small) + post(small) + last, [200, 200, 200]),
                 "a GET after a 422": (post(os.urandom(3000)) + get + last, [422, 200, 200])}
        for what, (data, want) in cases.items():
            out = raw(p, data)
            ctx.eq(statuses(out), want, f"pipelined: {what}")
            if "GET after a POST" in what:
                ctx.check(cli_folded in out, "pipelined: the POST's answer is the folded output")
        # a request refused before its body (its bytes are not read): the answer says the connection closes
        out = raw(p, post(small, "to=nope") + last)
        ctx.check(statuses(out) == [400] and b"Connection: close" in out,
                  f"refused before its body: 400 with Connection: close: {out[:200]!r}")
        # a request pipelined while the POST converts
        s = socket.create_connection(("127.0.0.1", p), timeout=60)
        s.sendall(post(small * 20, "to=dot&name=a.trace"))
        time.sleep(0.3)
        s.sendall(last)
        out = b""
        while True:
            c = s.recv(65536)
            if not c:
                break
            out += c
        s.close()
        ctx.eq(statuses(out), [200, 200], "pipelined while the POST converts: both answered")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")


# ---- item 16 --------------------------------------------------------------------------


def check_too_large(ctx, small_path):
    """--keep-size 160K: a 1 KB trace's result (about 100K: flame graphs, reports) fits; a
    trace of about 1 MB is refused before its body, or once received when sent chunked; the
    64K app-startup.trace fits as an upload, but its result (about 500K) does not."""
    big = os.path.join(ctx.work, "big.trace")
    subprocess.run([ctx.tracegen, "--bench", "1", big], check=True, capture_output=True)
    big_data = open(big, "rb").read()
    small = open(small_path, "rb").read()
    tiny = open(os.path.join(ctx.corpus, "open-at-end.trace"), "rb").read()
    keep = 160 << 10
    ctx.check(len(big_data) > keep > len(small) > len(tiny), f"sizes: {len(big_data)} {keep} {len(small)}")
    srv = serve_lib.Server(ctx.traceconv, ctx.work, "--keep-size", str(keep), tmpdir=os.path.join(ctx.work, "big-tmp"))
    try:
        page = http(srv.port, "GET", "/")[2].decode()
        ctx.check(f'data-keep-size="{keep}"' in page, "the page carries --keep-size for its script")
        mp, ctype = multipart([("trace", "tiny.trace", tiny)])
        st, _, out = http(srv.port, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        first = json.loads(out).get("result") if st == 200 else None
        ctx.check(first is not None, f"a tiny trace's page: {st} {out[:160]!r}")
        mp, ctype = multipart([("trace", "big.trace", big_data)])
        st, _, out = http(srv.port, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        ctx.eq(st, 413, "a trace larger than --keep-size: 413")
        err = json.loads(out).get("error", "") if out.startswith(b"{") else ""
        ctx.check("too large" in err and "--keep-size" in err and "160K" in err,
                  f"the page's line says too large, the sizes and the option: {err!r}")
        st, _, out = http(srv.port, "POST", "/upload", mp, {"Content-Type": ctype})
        ctx.check(st == 413 and b"too large" in out, "the HTML form (no script): 413 and the line on the page")
        # chunked: no declared size, refused once received
        head = (f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nTransfer-Encoding: chunked\r\n"
                f"Content-Type: {ctype}\r\nAccept: application/json\r\nConnection: close\r\n\r\n").encode()
        chunks = b"".join(b"%x\r\n" % len(mp[i:i + 65536]) + mp[i:i + 65536] + b"\r\n"
                          for i in range(0, len(mp), 65536)) + b"0\r\n\r\n"
        out = raw(srv.port, head + chunks)
        ctx.check(out.startswith(b"HTTP/1.1 413") and b"too large" in out, f"chunked: 413 too large: {out[:160]!r}")
        # the upload fits, its result does not: refused when it would be published
        mp, ctype = multipart([("trace", "small.trace", small)])
        st, _, out = http(srv.port, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        err = json.loads(out).get("error", "") if out.startswith(b"{") else ""
        ctx.check(st == 413 and "too large" in err and "result needs" in err,
                  f"an upload that fits whose result does not: 413 too large: {st} {err!r}")
        ctx.eq(http(srv.port, "GET", first)[0] if first else None, 200, "the earlier result was not evicted")
        ctx.eq([d for d in os.listdir(srv.store()) if len(d) == 32], [first[3:]] if first else [],
               "the store holds the earlier result only")
        ctx.eq(tmp_files(srv), [], "nothing left in tmp/")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")


def check_on_demand(ctx, src):
    srv = serve_lib.Server(ctx.traceconv, ctx.work, tmpdir=os.path.join(ctx.work, "demand-tmp"))
    try:
        name = os.path.basename(src)
        mp, ctype = multipart([("trace", name, open(src, "rb").read())])
        st, _, out = http(srv.port, "POST", "/upload", mp, {"Content-Type": ctype, "Accept": "application/json"})
        loc = json.loads(out)["result"]
        for _ in range(3):
            ctx.eq(http(srv.port, "GET", loc)[0], 200, "the result page, looked up again and again")
        held = sorted(os.listdir(os.path.join(srv.store(), loc[3:])))
        ctx.check(not [f for f in held if f.startswith("trace.")],
                  f"the result holds what the page shows, not every output: {held}")
        for f, writer in (("trace.folded", "folded"), ("trace.json", "json")):
            st, h, body = http(srv.port, "GET", f"{loc}/{f}?download=1")
            cli = os.path.join(ctx.work, "demand-" + f)
            named = os.path.join(ctx.work, "demand", name)
            os.makedirs(os.path.dirname(named), exist_ok=True)
            subprocess.run(["cp", src, named], check=True)
            subprocess.run([ctx.traceconv, "-f", "-o", writer, name, cli], cwd=os.path.dirname(named), check=True,
                           capture_output=True)
            ctx.check(st == 200 and body == open(cli, "rb").read(), f"download {f}: converted on demand, the CLI's")
            ctx.check(h.get("content-disposition", "").startswith("attachment"), f"download {f}: an attachment")
        json.loads(http(srv.port, "GET", f"{loc}/trace.json")[2])
        ctx.eq(tmp_files(srv), [], "nothing left in tmp/ after the downloads")
    finally:
        ctx.eq(srv.stop(), 0, "exit status")


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.corpus, "app-startup.trace")
    small = open(src, "rb").read()
    os.makedirs(os.path.join(ctx.work, "named"), exist_ok=True)
    named = os.path.join(ctx.work, "named", "a.trace")
    with open(named, "wb") as f:
        f.write(small)
    cli = subprocess.run([ctx.traceconv, "-f", "-o", "folded", "a.trace", "a.folded"], cwd=os.path.dirname(named),
                         capture_output=True)
    cli_folded = open(os.path.join(ctx.work, "named", "a.folded"), "rb").read() if cli.returncode == 0 else b"?"
    serve_lib.run_checks(ctx, (("origin and host", lambda: check_origin_host(ctx, small)),
                               ("parts and pipelining", lambda: check_two_parts_and_pipelining(ctx, small, cli_folded)),
                               ("too large", lambda: check_too_large(ctx, src)),
                               ("on demand", lambda: check_on_demand(ctx, src)),
                               ("output bound", lambda: check_output_bound(ctx)),
                               ("disconnect", lambda: check_disconnect(ctx)),
                               ("sigterm", lambda: check_sigterm_in_finish(ctx)),
                               ("slowloris", lambda: check_slowloris(ctx))), "TC_SERVE_EDGES")
    ctx.done()


if __name__ == "__main__":
    main()
