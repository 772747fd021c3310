#!/usr/bin/python3
"""HTTP basic auth in front of a server that has none (floe's schema
registry, for test_registry_external): GET and POST requests carrying
`Authorization: Basic base64(USER:PASSWORD)` are forwarded to UPSTREAM and
answered with its answer, and printed as "METHOD PATH STATUS" (the test
reads which requests floe made); any other gets 401 with a WWW-Authenticate
header.  Prints "listening PORT" once ready.

    basic_auth_proxy.py http://127.0.0.1:PORT USER:PASSWORD"""
import base64
import http.client
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UP = urllib.parse.urlparse(sys.argv[1])
WANT = 'Basic ' + base64.b64encode(sys.argv[2].encode()).decode()
OUT = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def forward(self):
        if self.headers.get('Authorization') != WANT:
            body = b'{"error_code":401,"message":"Unauthorized"}'
            self.send_response(401)
            self.send_header('WWW-Authenticate', 'Basic realm="registry"')
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        n = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(n) if n else None
        c = http.client.HTTPConnection(UP.hostname, UP.port, timeout=30)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ('authorization', 'host')}
        c.request(self.command, self.path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ('transfer-encoding', 'connection', 'content-length'):
                self.send_header(k, v)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        c.close()
        with OUT:
            print('%s %s %d' % (self.command, self.path, r.status), flush=True)

    do_GET = do_POST = do_PUT = do_DELETE = forward

    def log_message(self, *args):
        pass


srv = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
print('listening %d' % srv.server_address[1], flush=True)
srv.serve_forever()
