"""Minimal hand-written Kafka wire helpers for raw-protocol tests (classic,
non-flexible encodings, plus the few compact forms the tests read)."""
import socket
import struct


def kstr(s):
    if s is None:
        return struct.pack('>h', -1)
    b = s.encode() if isinstance(s, str) else s
    return struct.pack('>h', len(b)) + b


def req(key, ver, corr, body=b'', client='t'):
    return struct.pack('>hhi', key, ver, corr) + kstr(client) + body


def frame(payload):
    return struct.pack('>i', len(payload)) + payload


def recv_exact(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError('closed after %d of %d bytes' % (len(b), n))
        b += c
    return b


def recv_frame(s):
    n = struct.unpack('>i', recv_exact(s, 4))[0]
    return recv_exact(s, n)


def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xffffffff


def zz(n):
    """zigzag varint"""
    v = (n << 1) ^ (n >> 63)
    out = b''
    while True:
        if v < 0x80:
            return out + bytes([v])
        out += bytes([(v & 0x7f) | 0x80])
        v >>= 7


def batch(values, pid=-1, epoch=-1, seq=-1, ts=1000, crc_ok=True, count=None):
    """RecordBatch v2, uncompressed; count overrides the record count field
    (the CRC still matches)."""
    recs = b''
    for i, v in enumerate(values):
        body = b'\x00' + zz(0) + zz(i) + zz(-1) + zz(len(v)) + v + zz(0)
        recs += zz(len(body)) + body
    count = len(values) if count is None else count
    after = struct.pack('>hiqqqhii', 0, len(values) - 1, ts, ts, pid, epoch, seq, count) + recs
    crc = crc32c(after) ^ (0 if crc_ok else 1)
    body = struct.pack('>ibI', 0, 2, crc) + after
    return struct.pack('>qi', 0, len(body)) + body


class R:
    """Reader over a response body."""
    def __init__(self, b, pos=0):
        self.b, self.p = b, pos

    def take(self, fmt):
        v = struct.unpack_from('>' + fmt, self.b, self.p)
        self.p += struct.calcsize('>' + fmt)
        return v if len(v) > 1 else v[0]

    def str(self):
        n = self.take('h')
        if n < 0:
            return None
        s = self.b[self.p:self.p + n].decode()
        self.p += n
        return s

    def bytes(self):
        n = self.take('i')
        if n < 0:
            return None
        s = self.b[self.p:self.p + n]
        self.p += n
        return s

    def uvarint(self):
        shift = v = 0
        while True:
            c = self.b[self.p]
            self.p += 1
            v |= (c & 0x7f) << shift
            if c < 0x80:
                return v
            shift += 7

    def cstr(self):
        n = self.uvarint() - 1
        if n < 0:
            return None
        s = self.b[self.p:self.p + n].decode()
        self.p += n
        return s


class Conn:
    def __init__(self, addr):
        self.s = socket.create_connection(addr, timeout=30)
        self.corr = 0

    def call(self, key, ver, body):
        self.corr += 1
        self.s.sendall(frame(req(key, ver, self.corr, body)))
        r = recv_frame(self.s)
        c = struct.unpack('>i', r[:4])[0]
        assert c == self.corr, (c, self.corr)
        return r

    def close(self):
        self.s.close()


def produce_full(conn, topic, part, records, acks=-1, ver=3):
    """-> (error, base offset, log append time)"""
    body = kstr(None) + struct.pack('>hi', acks, 10000) + struct.pack('>i', 1) + kstr(topic) + \
        struct.pack('>ii', 1, part) + struct.pack('>i', len(records)) + records
    r = R(conn.call(0, ver, body), 4)
    r.take('i'); r.str(); r.take('i')
    idx, err, base, lat = r.take('ihqq')
    return err, base, lat


def produce(conn, topic, part, records, acks=-1, ver=3):
    return produce_full(conn, topic, part, records, acks, ver)[:2]


def create_topic(conn, name, parts, configs):
    """CreateTopics v0 -> error code"""
    body = struct.pack('>i', 1) + kstr(name) + struct.pack('>ih', parts, 1) + struct.pack('>i', 0) + \
        struct.pack('>i', len(configs)) + b''.join(kstr(k) + kstr(v) for k, v in configs.items()) + \
        struct.pack('>i', 10000)
    r = R(conn.call(19, 0, body), 4)
    r.take('i'); r.str()
    return r.take('h')


def fetch(conn, topic, part, offset, max_wait=0, min_bytes=0, ver=4):
    body = struct.pack('>iiiib', -1, max_wait, min_bytes, 1 << 20, 0) + struct.pack('>i', 1) + kstr(topic) + \
        struct.pack('>i', 1) + struct.pack('>iqi', part, offset, 1 << 20)
    r = R(conn.call(1, ver, body), 4)
    r.take('i')  # throttle
    r.take('i'); r.str(); r.take('i')
    idx, err, hw, lso = r.take('ihqq')
    na = r.take('i')
    for _ in range(max(na, 0)):
        r.take('qq')
    recs = r.bytes()
    return err, hw, recs


def metadata(conn, topics):
    body = struct.pack('>i', len(topics)) + b''.join(kstr(t) for t in topics)
    return conn.call(3, 1, body)
