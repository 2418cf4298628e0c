"""The bad-input suite: inputs from crashed apps, truncated pulls and wrong
tools, each with the outcome traceconv must give. Every case is built here
from a small hand-made trace, so the expected byte offset comes from how the
case was made, not from traceconv's output.

A case is (name, bytes, expect) where expect is a dict:
  exit     1 (clean error, no output file) or 0 (converted, with a warning)
  module   the module named in the message ("art", "gzip", "input", ...)
  offset   the byte offset the message must name, or None
  words    a phrase the message must contain
  ext      (optional) the file name's extension (default ".trace")
  args     (optional) extra command-line options
"""
import gzip
import os
import random
import struct
import zlib

MAGIC = b"SLOW"


def key_text(threads="1\tmain\n", methods="0x4\tcom.example.A\trun\t()V\tA.java\n", extra=""):
    return ("*version\n3\ndata-file-overflow=false\nclock=dual\nelapsed-time-usec=1000\n"
            "vm=art\npid=1\n" + extra + "*threads\n" + threads + "*methods\n" + methods + "*end\n").encode()


def header(version=3, offset=32, start=1000, rec_size=14):
    h = MAGIC + struct.pack("<HHQH", version, offset, start, rec_size)
    return h + b"\0" * (offset - len(h)) if offset >= len(h) else h[:offset]


def records(n=4):
    out = b""
    for i in range(n):
        action = i % 2  # enter, exit, enter, exit
        out += struct.pack("<HIII", 1, 0x4 | action, 10 * i, 10 * i)
    return out


def stream_header():
    return MAGIC + struct.pack("<HHQH", 0xF3, 32, 1000, 14) + b"\0" * 14


def make_cases():
    cases = []
    good = key_text()
    end_of_key = len(good)

    def add(name, data, **expect):
        cases.append((name, data, expect))

    # key section cut inside *methods: there is no *end line
    cut = good[: good.index(b"*methods") + 12]
    add("truncated-key-section", cut, exit=1, module="art", offset=len(cut), words="no *end")
    # *end line missing, binary data follows directly
    no_end = good.replace(b"*end\n", b"") + header() + records()
    add("missing-end", no_end, exit=1, module="art", offset=len(no_end), words="no *end")
    # the header says data starts at 64, the file ends before that
    short = good + MAGIC + struct.pack("<HHQH", 3, 64, 1000, 14) + b"\0" * 6
    add("header-shorter-than-data-offset", short, exit=1, module="art", offset=end_of_key + 6,
        words="data offset 64")
    add("record-size-0", good + header(rec_size=0) + records(), exit=1, module="art",
        offset=end_of_key + 16, words="record size 0")
    add("record-size-absurd", good + header(rec_size=9999) + records(), exit=1, module="art",
        offset=end_of_key + 16, words="record size 9999")
    # the last record is cut: the complete ones convert, with a warning naming where
    body = good + header() + records(4)
    add("truncated-last-record", body[:-5], exit=0, module="art", offset=len(body) - 14,
        words="ends inside a record")
    # thread and method lines without tabs are skipped with a warning at the line
    t_line = b"1 main\n"
    no_tab = key_text(threads="1 main\n") + header() + records()
    add("thread-line-without-tab", no_tab, exit=0, module="art", offset=no_tab.index(t_line),
        words="thread line")
    # a 1 MB method name is refused by the max-string limit, at its line
    huge = "x" * (1 << 20)
    big = key_text(methods=f"0x4\tcom.example.A\t{huge}\t()V\tA.java\n") + header() + records()
    add("method-name-1MB", big, exit=1, module="art", offset=big.index(b"0x4\tcom.example.A"),
        words="max-string")
    # names that are not UTF-8 convert; the JSON test checks the output parses
    bad_utf8 = key_text(threads="1\tma\xffin\n".encode("latin-1").decode("latin-1")).replace(
        "ma\xffin".encode(), b"ma\xffin") + header() + records()
    add("non-utf8-names", bad_utf8, exit=0, module=None, offset=None, words=None)
    add("zero-length", b"", exit=1, module="input", offset=0, words="empty")
    rnd = random.Random(1)
    add("random-bytes", bytes(rnd.randrange(256) for _ in range(4096)), exit=1, module="probe", offset=None,
        words="unknown input format")
    gz = gzip.compress(good + header() + records(200))
    add("gzip-ends-early", gz[: len(gz) // 2], exit=1, module="gzip", offset=None, words="ends early")
    add("gzip-bomb", gzip.compress(b"\0" * (300 << 20), 9), exit=1, module="gzip", offset=None,
        words="decompression bomb")
    # a stream whose inline method item says 200 bytes, with 20 left
    item = b"\0\0\x01" + struct.pack("<H", 200) + b"0x4\tcom.example.A\trun\t()V\tA.java\n"[:20]
    s = stream_header() + item
    # (nothing else in it: no trace events found, an error since issue 22, that says why)
    add("stream-item-past-end", s, exit=1, module="art", offset=32, words="ends inside a record or item")
    # the data header is text, not binary (perflib's header-only fixture, made here)
    add("no-data-header", good + b"data section follows\n", exit=1, module="art", offset=end_of_key,
        words="SLOW")
    # a trace that went through CRLF conversion (adb shell cat on old adb): every 0A became 0D 0A
    crlf = (good + header() + records()).replace(b"\n", b"\r\n")
    add("crlf-converted", crlf, exit=1, module="art", offset=len(b"*version"), words="adb pull")
    # a trace re-encoded as text: each byte that is not UTF-8 became U+FFFD (EF BF BD); the
    # first one is in the header's start time (ART's CLOCK_MONOTONIC µs: 0x1CBE991A14, 34 h of uptime)
    binary = header(start=123_456_789_012) + records()
    mangled = good + binary.decode("utf-8", errors="replace").encode("utf-8")
    add("text-reencoded", mangled, exit=1, module="art", offset=mangled.index(b"\xef\xbf\xbd", end_of_key),
        words="re-encoded as text")
    # the same for a stream: its version byte 0xF3 is the first casualty
    smangled = (stream_header() + records()).decode("utf-8", errors="replace").encode("utf-8")
    add("text-reencoded-stream", smangled, exit=1, module="art", offset=4, words="re-encoded as text")
    systrace_cases(add)
    # ---- RheaTrace (rhea reader) ----
    rhea_ok = ("1|TRACE_START|100000000000|7|2147483647|2|18316\n"
               "100.000010 7: B|7|B:A:run\n")
    bad_ts = "10O.000020 7: B|7|B:B:run\n"   # letter O in the seconds
    rest = ("100.0000x0 7: B|7|E:B:run\n"    # letter in the fraction
            "100.000090 7: B|7|E:A:run\n"
            "2|TRACE_END|100000000100000|7|2147483647|2|18316\n")
    text = (rhea_ok + bad_ts + rest).encode()
    # a line whose timestamp does not parse is skipped with a warning naming it (the rest converts)
    add("rhea-broken-timestamps", text, exit=0, module="rhea", offset=len(rhea_ok), words="timestamp",
        ext=".rhea-atrace")
    rhdr = struct.pack("<IIQQQ", 5, 7, 948220911000000, 232073280000000, 232073280000000)

    def rrec(start, dur, tid, mid):
        return struct.pack("<QQ", (start << 19) | (dur >> 26), ((dur & 0x3FFFFFF) << 38) | (tid << 23) | mid)
    rbin = rhdr + rrec(1000, 500, 7, 1) + rrec(2000, 500, 7, 2) + rrec(3000, 500, 7, 3)
    # a binary dump cut 5 bytes into its third record: the two complete ones convert
    add("rhea-binary-cut-mid-record", rbin[:-11], exit=0, module="rhea", offset=32 + 2 * 16,
        words="ends inside a record", ext=".bin")
    # a mapping file asked for with --mapping that does not exist: a clear error
    add("rhea-missing-mapping", rbin, exit=1, module="rhea", offset=None, words="cannot open the mapping file",
        ext=".bin", args=["--mapping", "/nonexistent/methodMapping.txt"])
    deobfuscation_cases(add, good + header() + records())
    return cases


def deobfuscation_cases(add, trace):
    """--deobfuscate MAPPING (module "deobfuscate"): a bad mapping fails the conversion before any
    output; side is the mapping's (name, bytes), its path given by {side} in args."""
    ok = b"com.example.A -> a.a:\n    void run() -> a\n"

    def case(name, mapping, offset, words, exit=1):
        add(name, trace, exit=exit, module="deobfuscate", offset=offset, words=words,
            args=["--deobfuscate", "{side}"], side=(name + ".mapping.txt", mapping))
    add("deobf-unreadable-mapping", trace, exit=1, module="deobfuscate", offset=None,
        words="cannot open the mapping", args=["--deobfuscate", "/nonexistent/mapping.txt"])
    case("deobf-empty-mapping", b"", 0, "the mapping is empty")
    case("deobf-no-class-line", b"# compiler: R8\n\n", 0, "no class line")
    # line 3 (offset of its start): a class line without "->"
    case("deobf-class-line-without-arrow", ok + b"com.example.B a.b:\n", len(ok), "line 3: a class line must be")
    case("deobf-class-line-without-colon", ok + b"com.example.B -> a.b\n", len(ok), "line 3: a class line must end in ':'")
    case("deobf-member-before-class", b"    void run() -> a\n" + ok, 0, "line 1: a member line before the first class")
    # in the block of a class the trace uses: the member line is parsed, and fails with its number
    bad = b"com.example.A -> com.example.A:\n    1:2:void run(int -> a\n"
    case("deobf-member-paren-not-closed", bad, bad.index(b"    1:2"), "line 2: the parameter list is not closed")
    bad = b"com.example.A -> com.example.A:\n    1:void run() -> a\n"
    case("deobf-member-single-minified-line", bad, bad.index(b"    1:void"), "line 2: a minified line range")
    case("deobf-nul-byte", ok + b"com.exa\0mple.B -> a.b:\n", len(ok), "line 3: a NUL byte")
    # one line of 1 GB (sparse: written as a size, see write_cases): refused at max-string, not read whole
    case("deobf-one-line-of-1GB", (b"com.example.A -> a.a:", 1 << 30), 0, "line 1: a line longer than 65536 bytes")
    # junk after a new name is a warning (§3.3: R8 would refuse it; it changes no name)
    case("deobf-junk-after-new-name", b"com.example.A -> com.example.A:\n    void run() -> a junk\n", None,
         "text after the new name is ignored", exit=0)


SYSTRACE_LINES = (
    "# tracer: nop\n"
    "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
    "  surfaceflinger-598   (  598) [004] ...1 10852.771242: tracing_mark_write: B|598|compose\n"
    "  surfaceflinger-598   (  598) [004] ...1 10852.771245: tracing_mark_write: E|598\n"
)


def systrace_cases(add):
    """systrace inputs (the reader's module is "systrace"); ext picks the file name."""
    # an HTML file cut inside its trace-data block: what is there converts, with a warning
    html = ("<!DOCTYPE html>\n<html>\n<body>\n"
            "  <script class=\"trace-data\" type=\"application/text\">\n" + SYSTRACE_LINES).encode()
    add("systrace-html-no-closing-tag", html, exit=0, module="systrace", offset=html.index(b"<script"),
        words="no closing </script>", ext=".html")
    # a timestamp with a letter in it: that line is skipped with a warning at its offset
    bad = SYSTRACE_LINES.replace("10852.771245:", "10852.77l245:").encode()
    add("systrace-broken-timestamp", bad, exit=0, module="systrace", offset=bad.index(b"  surfaceflinger-598   (  598) [004] ...1 10852.77l"),
        words="not an ftrace event line", ext=".systrace")
    # atrace -z output (TRACE: + zlib) cut in the middle of the stream
    body = (SYSTRACE_LINES * 200).encode()
    z = b"TRACE:\n" + zlib.compress(body, 9)
    add("systrace-zlib-ends-early", z[: len(z) // 2], exit=1, module="systrace", offset=len(z) // 2,
        words="ends early", ext=".systrace")
    # the legacy HTML (read as the text its JavaScript string holds) whose text holds no ftrace line
    legacy = (b"<!DOCTYPE html>\n<html>\n<body>\n  <script>\n  var linuxPerfData = \"\\\n"
              b"# tracer: nop\\n\\\nnot an event\\n\\\n\";\n  </script>\n</body>\n</html>\n")
    add("systrace-legacy-linuxPerfData", legacy, exit=1, module="systrace", offset=None,
        words="no line is an ftrace event line", ext=".html")
    # an IR dump whose timestamp is past the int64 range: refused at that line, not clamped
    ir = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ir", "samples.ir.txt"), "rb").read()
    at = ir.index(b"P t=0 m=- ts=3000")
    big = ir.replace(b"ts=3000 ", b"ts=9223372036870087000 ", 1)
    add("ir-timestamp-past-int64", big, exit=1, module="ir", offset=at, words="ts=<ns>", ext=".ir.txt")


def write_cases(directory):
    os.makedirs(directory, exist_ok=True)
    out = []
    for name, data, expect in make_cases():
        ext = expect.pop("ext", ".trace.gz" if name.startswith("gzip") else ".trace")
        path = os.path.join(directory, name + ext)
        with open(path, "wb") as f:
            f.write(data)
        side = expect.pop("side", None)
        if side:  # a second file the case names in its args ({side}); (head, size): sparse, size bytes
            side_path = os.path.join(directory, side[0])
            content = side[1]
            with open(side_path, "wb") as f:
                if isinstance(content, tuple):
                    f.write(content[0])
                    f.truncate(content[1])
                else:
                    f.write(content)
            expect["args"] = [a.replace("{side}", side_path) for a in expect["args"]]
        out.append((name, path, expect))
    return out
