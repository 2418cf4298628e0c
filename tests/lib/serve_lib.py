"""Starting `traceconv serve` for the tests (test_serve.py, test_serve_browser.py).

The server listens on 127.0.0.1 port 0 and prints its URL on stderr; TMPDIR is a
directory of the test's own, so that its default store (and anything it would leave
behind) can be inspected and must be gone after it stops.
"""
import os
import re
import subprocess
import threading
import time

URL_RE = re.compile(r"traceconv serve: listening on (http://\S+/)")


class Server:
    def __init__(self, traceconv, work, *args, tmpdir=None):
        self.tmpdir = tmpdir or os.path.join(work, "tmpdir")
        os.makedirs(self.tmpdir, exist_ok=True)
        env = dict(os.environ, TMPDIR=self.tmpdir)
        self.proc = subprocess.Popen([traceconv, "serve", "--listen", "127.0.0.1:0", *args],
                                     stderr=subprocess.PIPE, env=env)
        self.url = None
        self.stderr_lines = []
        deadline = time.time() + 30
        while time.time() < deadline:
            line = self.proc.stderr.readline().decode(errors="replace")
            if not line:
                break
            self.stderr_lines.append(line)
            m = URL_RE.search(line)
            if m:
                self.url = m.group(1)
                break
        if not self.url:
            self.proc.kill()
            raise RuntimeError("serve did not start: " + "".join(self.stderr_lines))
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))
        # keep reading stderr so that the server never blocks on a full pipe
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode(errors="replace"))

    def store(self):
        """The default store: the one traceconv-serve-* directory under TMPDIR."""
        d = [x for x in os.listdir(self.tmpdir) if x.startswith("traceconv-serve-")]
        return os.path.join(self.tmpdir, d[0]) if len(d) == 1 else None

    def vm_hwm_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return None

    def stop(self, sig=15, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self._reader.join(timeout=5)
        return rc


def run_checks(ctx, checks, only_env=None):
    """Each (name, check) on its own, timed: one that cannot even start fails alone, and the
    others still run. only_env names an environment variable holding a comma-separated subset
    of the names, to replay one."""
    only = os.environ.get(only_env) if only_env else None
    for name, check in checks:
        if only and name not in only.split(","):
            continue
        t0 = time.time()
        try:
            check()
            print(f"{name}: {time.time() - t0:.1f} s")
        except Exception as e:  # noqa: BLE001
            ctx.fail(f"{name}: {type(e).__name__}: {e}")
