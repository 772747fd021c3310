"""An HTTP proxy for the S3 tests that injects faults between floe and the
S3 server, one request at a time.

    p = FaultProxy('http://127.0.0.1:PORT').start()   # p.endpoint for s3.endpoint
    p.arm(n, mode)     # the n-th request from now (1 = the next) gets mode
    p.fired            # whether the armed fault happened
    p.requests         # requests seen so far

Modes: '500' (InternalError, not forwarded), '503' (SlowDown, not
forwarded), 'reset' (connection closed with a RST, not forwarded), 'lost'
(forwarded, the store applies it, then the connection is reset instead of
answering: the answer is lost), 'delay' (forwarded after 2 s).  Requests
are forwarded as they come (signatures stay valid: the Host header is
passed through unchanged)."""
import http.client
import socket
import struct
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FaultProxy:
    def __init__(self, upstream):
        u = urllib.parse.urlparse(upstream)
        self.up = (u.hostname, u.port)
        self.lock = threading.Lock()
        self.requests = 0
        self.armed_at = None
        self.mode = None
        self.fired = False
        self.server = None

    def arm(self, n, mode):
        with self.lock:
            self.armed_at = self.requests + n
            self.mode = mode
            self.fired = False

    def disarm(self):
        with self.lock:
            self.armed_at = None

    def _take(self):
        """Count one request; the fault it gets, or None."""
        with self.lock:
            self.requests += 1
            if self.armed_at is not None and self.requests == self.armed_at:
                self.armed_at = None
                self.fired = True
                return self.mode
            return None

    def start(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *a):
                pass

            def _reset(self):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack('ii', 1, 0))
                self.close_connection = True
                self.connection.close()

            def _error(self, status, code, msg):
                body = ('<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code>'
                        '<Message>%s</Message></Error>' % (code, msg)).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/xml')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                if self.command != 'HEAD':
                    self.wfile.write(body)

            def _any(self):
                n = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(n) if n else b''
                fault = proxy._take()
                if fault == '500':
                    return self._error(500, 'InternalError', 'injected by the fault proxy')
                if fault == '503':
                    return self._error(503, 'SlowDown', 'injected by the fault proxy')
                if fault == 'reset':
                    return self._reset()
                if fault == 'delay':
                    time.sleep(2)
                c = http.client.HTTPConnection(*proxy.up, timeout=60)
                hdrs = {k: v for k, v in self.headers.items()}
                c.request(self.command, self.path, body=body, headers=hdrs)
                r = c.getresponse()
                data = r.read()
                c.close()
                if fault == 'lost':
                    return self._reset()
                self.send_response(r.status)
                length = str(len(data))
                for k, v in r.getheaders():
                    if k.lower() == 'content-length' and self.command == 'HEAD':
                        length = v
                    elif k.lower() not in ('transfer-encoding', 'connection', 'content-length'):
                        self.send_header(k, v)
                self.send_header('Content-Length', length)
                self.end_headers()
                if self.command != 'HEAD':
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = 'http://127.0.0.1:%d' % self.server.server_address[1]
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
