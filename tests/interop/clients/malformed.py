"""Malformed input against floe from raw sockets (standard library only):
truncated frames, huge lengths, unknown API keys and versions, record
batches with a bad CRC and garbage batches.  Each gets an error response or
a closed connection; the broker keeps serving other clients and its RSS
stays bounded.  Needs FLOE_KAFKA and FLOE_PID."""
import sys, os, socket, struct, random, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BROKER, TAG, step, check, eq, finish  # noqa: E402

HOST, PORT = BROKER.rsplit(":", 1)
PORT = int(PORT)
PID = int(os.environ["FLOE_PID"])
TOPIC = "malformed-" + TAG


def rss_kb():
    for line in open("/proc/%d/status" % PID):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def conn():
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.settimeout(10)
    return s


def s16(x): return struct.pack(">h", x)
def s32(x): return struct.pack(">i", x)
def s64(x): return struct.pack(">q", x)
def kstr(x): return s16(len(x)) + x.encode()


def header(api, ver, corr):
    return s16(api) + s16(ver) + s32(corr) + kstr("floe-malformed")


def frame(body):
    return s32(len(body)) + body


def recv_exact(s, n):
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def recv_frame(s):
    """Return the response body, or None if the broker closed the connection."""
    try:
        h = recv_exact(s, 4)
        if h is None:
            return None
        n = struct.unpack(">i", h)[0]
        check(0 <= n < 64 << 20, "response length %d" % n)
        return recv_exact(s, n)
    except (ConnectionResetError, BrokenPipeError):
        return None


def closed_or_error(s, corr, error_at=None):
    """The broker either closes the connection or answers with this
    correlation id (and, if error_at is given, a non-zero int16 there)."""
    r = recv_frame(s)
    if r is None:
        return "closed"
    eq(struct.unpack(">i", r[:4])[0], corr, "correlation id")
    if error_at is not None:
        code = struct.unpack(">h", r[error_at:error_at + 2])[0]
        check(code != 0, "error code 0 for a malformed request")
        return "error %d" % code
    return "answered"


def api_versions_ok():
    """A fresh client gets a good ApiVersions v0 answer."""
    s = conn()
    s.sendall(frame(header(18, 0, 4242)))
    r = recv_frame(s)
    s.close()
    check(r is not None, "the broker closed a healthy ApiVersions connection")
    eq(struct.unpack(">i", r[:4])[0], 4242, "correlation id")
    eq(struct.unpack(">h", r[4:6])[0], 0, "ApiVersions error code")
    n = struct.unpack(">i", r[6:10])[0]
    check(n > 5, "only %d APIs" % n)


# --- CRC32C (Castagnoli), for building record batches ---
_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def varint(v):
    v = (v << 1) ^ (v >> 63)  # zigzag
    out = b""
    while True:
        if v < 0x80:
            return out + bytes([v])
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7


def record(i, key, value):
    body = b"\x00" + varint(0) + varint(i) + varint(len(key)) + key + varint(len(value)) + value + varint(0)
    return varint(len(body)) + body


def batch(records, count=None, crc_delta=0):
    """RecordBatch v2 (magic 2) without compression, CreateTime, no producer."""
    recs = b"".join(record(i, b"k%d" % i, v) for i, v in enumerate(records))
    # Now, not a fixed date: retention.ms (7 days) would delete older records.
    ts = int(time.time() * 1000)
    count = len(records) if count is None else count
    after_crc = (s16(0) + s32(len(records) - 1) + s64(ts) + s64(ts) +
                 s64(-1) + s16(-1) + s32(-1) + s32(count) + recs)
    crc = (crc32c(after_crc) + crc_delta) & 0xFFFFFFFF
    after_len = s32(0) + b"\x02" + struct.pack(">I", crc) + after_crc
    return s64(0) + s32(len(after_len)) + after_len


def produce(records_bytes, corr, topic=TOPIC):
    """Produce v3 request body (acks=-1) for partition 0 of topic."""
    body = (header(0, 3, corr) + s16(-1) + s16(-1) + s32(10000) + s32(1) + kstr(topic) +
            s32(1) + s32(0) + s32(len(records_bytes)) + records_bytes)
    return frame(body)


# Produce v3 response: corr, [topics: name, [partitions: index, error_code ...]]
def produce_error_at():
    return 4 + 4 + 2 + len(TOPIC) + 4 + 4


def produce_result(records_bytes, corr):
    s = conn()
    s.sendall(produce(records_bytes, corr))
    res = closed_or_error(s, corr, produce_error_at())
    s.close()
    return res


def setup():
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": BROKER})
    for f in a.create_topics([NewTopic(TOPIC, 1, 1)], request_timeout=15).values():
        f.result(15)
    # The request encoder of this test is right: a valid batch is accepted.
    s = conn()
    s.sendall(produce(batch([b"valid-1", b"valid-2"]), 7))
    r = recv_frame(s)
    s.close()
    check(r is not None, "valid produce: connection closed")
    eq(struct.unpack(">h", r[produce_error_at():produce_error_at() + 2])[0], 0, "valid produce error code")


ready = step("malformed_valid_raw_produce_accepted", 30, setup)
rss0 = rss_kb()
print("# floe RSS before malformed input: %d KiB" % rss0)


def truncated():
    s = conn()
    s.sendall(s32(100) + header(18, 0, 1)[:6])  # frame says 100 bytes, 6 sent
    api_versions_ok()                           # another client is served meanwhile
    s.close()                                   # then the peer goes away mid-frame
    s2 = conn()
    s2.sendall(b"\x00\x00")                     # even the length is cut
    s2.close()
    api_versions_ok()


step("malformed_truncated_frame", 30, truncated)


def huge():
    for n in (0x7FFFFFFF, -1, -100, 0x40000000, 200 << 20):
        s = conn()
        s.sendall(s32(n) + b"\x00" * 64)
        try:
            s.sendall(b"\x00" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass
        r = recv_frame(s)
        check(r is None, "length %d: got a response instead of a closed connection" % n)
        s.close()
        api_versions_ok()


step("malformed_huge_or_negative_length_closes", 60, huge)


def unknown_api():
    # Unknown API key: error response or closed connection.
    s = conn()
    s.sendall(frame(header(12345, 0, 11) + b"\x00" * 8))
    print("# unknown api key ->", closed_or_error(s, 11))
    s.close()
    # ApiVersions at an unsupported version: Kafka answers v0 with
    # UNSUPPORTED_VERSION (35) so clients can downgrade; closing is allowed.
    s = conn()
    s.sendall(frame(header(18, 999, 12)))
    r = recv_frame(s)
    s.close()
    if r is None:
        print("# ApiVersions v999 -> closed")
    else:
        eq(struct.unpack(">i", r[:4])[0], 12, "correlation id")
        eq(struct.unpack(">h", r[4:6])[0], 35, "ApiVersions v999 error code")
        print("# ApiVersions v999 -> error 35")
    # Metadata at an unknown version: error or close.
    s = conn()
    s.sendall(frame(header(3, 999, 13) + s32(-1)))
    print("# metadata v999 ->", closed_or_error(s, 13))
    s.close()
    api_versions_ok()


step("malformed_unknown_api_key_and_version", 30, unknown_api)


def bad_crc():
    check(ready, "needs the topic")
    print("# bad crc ->", produce_result(batch([b"bad-crc"], crc_delta=1), 21))
    api_versions_ok()


step("malformed_bad_crc_batch_rejected", 30, bad_crc)


def garbage():
    check(ready, "needs the topic")
    rnd = random.Random(7)
    cases = {
        "random bytes": bytes(rnd.randrange(256) for _ in range(300)),
        "count lies (valid crc)": batch([b"x"], count=1000),
        "count negative (valid crc)": batch([b"x"], count=-5),
        "batch length beyond data": batch([b"y"])[:-3],
        "trailing garbage": batch([b"z"]) + b"\x01\x02\x03",
        "bad magic": batch([b"m"])[:16] + b"\x07" + batch([b"m"])[17:],
        "record length lies (valid crc)": None,
    }
    # A record whose length varint claims more than the batch holds, CRC fixed up.
    b = bytearray(batch([b"lie"]))
    rec_at = 61  # records start after the 61-byte batch header
    b[rec_at] = 0x7E  # zigzag 63: longer than what follows
    crc = crc32c(bytes(b[21:]))
    b[17:21] = struct.pack(">I", crc)
    cases["record length lies (valid crc)"] = bytes(b)
    for i, (name, data) in enumerate(cases.items()):
        r = produce_result(data, 100 + i)
        print("# %s -> %s" % (name, r))
        api_versions_ok()


step("malformed_garbage_batches_rejected", 60, garbage)


def nothing_appended():
    check(ready, "needs the topic")
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": BROKER, "group.id": "unused-" + TAG})
    lo, hi = c.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
    c.close()
    eq((lo, hi), (0, 2), "watermarks: only the two valid records are in the log")


step("malformed_nothing_appended_from_bad_batches", 30, nothing_appended)


def memory_bounded():
    # Many connections that announce big frames and send a part, at once.
    socks = []
    for i in range(64):
        s = conn()
        try:
            s.sendall(s32((50 << 20) + i) + header(0, 3, i) + b"\x00" * 256 * 1024)
        except (BrokenPipeError, ConnectionResetError):
            pass
        socks.append(s)
    api_versions_ok()
    peak = rss_kb()
    for s in socks:
        s.close()
    for i in range(300):
        s = conn()
        try:
            s.sendall(s32(0x7FFFFFF0) + b"\x00" * 1024)
            s.sendall(produce(bytes(random.Random(i).randrange(256) for _ in range(512)), i))
        except (BrokenPipeError, ConnectionResetError):
            pass
        s.close()
    api_versions_ok()
    after = rss_kb()
    print("# floe RSS: before %d KiB, peak with 64 partial 50 MiB frames %d KiB, after %d KiB" % (rss0, peak, after))
    # 64 x 256 KiB were really sent; a broker that pre-allocates the announced
    # 50 MiB per frame (3.2 GiB) or keeps garbage around fails this bound.
    check(peak - rss0 < 256 * 1024, "RSS grew by %d KiB while holding partial frames" % (peak - rss0))
    check(after - rss0 < 64 * 1024, "RSS grew by %d KiB after malformed input" % (after - rss0))


step("malformed_memory_bounded", 90, memory_bounded)
step("malformed_broker_still_serves", 10, api_versions_ok)
finish()
