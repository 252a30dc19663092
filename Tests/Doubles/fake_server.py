#!/usr/bin/env python3
"""Loopback fake HTTP server for the CurlTransport tests (Python 3 stdlib only).

Usage: fake_server.py [--unix PATH] [--tls CERT KEY]

Listens on 127.0.0.1 with an ephemeral port (or on the unix socket PATH), optionally with TLS, and prints
`READY <port>` (port 0 for a unix socket) on stdout once it accepts connections. Markers it prints later:
`HELD` when /hold has sent its 200 headers and starts to block, `REQUEST <path>` for every request it routes.

Routes (GET or POST; the query string selects the behaviour):
  /echo                         200, JSON {"method", "target", "headers": [[name, value], ...], "body_hex",
                                "connection": the number of the connection it came on, 1 for the first accepted}
  /respond?status=N&header=Name:%20value&body=text
                                status N with the given headers (repeatable) and body
  /hold?seconds=S               200 + chunked headers at once, then blocks S seconds before the body `[]`
                                (what Syncthing does on a long poll, docs/syncthing-api.md, "Long-poll and timeouts")
  /cut                          200 chunked, half a JSON array, then the connection is closed
                                (a killed Syncthing worker: docs/syncthing-api.md, "Restarts")
  /big?bytes=N&mode=length|chunked
                                N bytes of body, announced with Content-Length or sent chunked
  /redirect?to=URL              307 with Location: URL (Syncthing's answer to http:// on a TLS port, section g)
  /interim                      a 100 Continue with its own header, then the final 200
  /trailers                     chunked 200 with a trailer field after the body
  /many-headers?count=N         200 with N header fields of about 100 bytes each
"""

import argparse
import json
import socket
import signal
import socketserver
import ssl
import sys
import threading
import time
import urllib.parse
import http.server

_out_lock = threading.Lock()
_connections = iter(range(1, 1 << 62))
_connections_lock = threading.Lock()


def emit(line):
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-syncthing"
    sys_version = ""

    def setup(self):
        # TCP_NODELAY as Go servers (Syncthing) set it; otherwise a small answer on a kept-alive connection waits
        # for a delayed ACK. A unix socket has no such option.
        self.disable_nagle_algorithm = self.request.family != socket.AF_UNIX
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        with _connections_lock:
            self.connection_number = next(_connections)
        super().setup()

    def log_message(self, *args):
        pass

    def address_string(self):
        return "client"

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    # -- helpers

    def raw(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    def chunk(self, data):
        self.raw(b"%x\r\n%s\r\n" % (len(data), data))

    def simple(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.raw(body)

    # -- routing

    def route(self):
        target = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(target.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        emit("REQUEST " + target.path)
        handler = getattr(self, "route_" + target.path.strip("/").replace("-", "_"), None)
        if handler is None:
            self.simple(404, [], b"not found")
            return
        try:
            handler(query, body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def route_echo(self, query, body):
        payload = {
            "method": self.command,
            "target": self.path,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body_hex": body.hex(),
            "connection": self.connection_number,
        }
        self.simple(200, [("Content-Type", "application/json")], json.dumps(payload).encode())

    def route_respond(self, query, body):
        status = int(query.get("status", ["200"])[0])
        # Values are sent as given, surrounding blanks included: the client must trim them.
        headers = [tuple(h.split(":", 1)) for h in query.get("header", [])]
        self.simple(status, headers, query.get("body", [""])[0].encode())

    def route_hold(self, query, body):
        seconds = float(query.get("seconds", ["30"])[0])
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        emit("HELD")
        time.sleep(seconds)
        self.chunk(b"[]")
        self.raw(b"0\r\n\r\n")

    def route_cut(self, query, body):
        self.raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        self.chunk(b'[{"id":1,"type":"LocalIndexUpdated"')
        self.close_connection = True
        self.request.shutdown(socket.SHUT_RDWR)

    def route_big(self, query, body):
        size = int(query.get("bytes", ["0"])[0])
        mode = query.get("mode", ["length"])[0]
        block = b"x" * 65536
        if mode == "length":
            self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
            while size > 0:
                self.raw(block[: min(size, len(block))])
                size -= len(block)
        else:
            self.raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            while size > 0:
                self.chunk(block[: min(size, len(block))])
                size -= len(block)
            self.raw(b"0\r\n\r\n")

    def route_redirect(self, query, body):
        self.simple(307, [("Location", query.get("to", ["/echo"])[0])], b"")

    def route_interim(self, query, body):
        self.raw(b"HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n")
        self.raw(b"HTTP/1.1 200 OK\r\nX-Final: yes\r\nContent-Length: 2\r\n\r\nok")

    def route_trailers(self, query, body):
        self.raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Trailer\r\n\r\n")
        self.chunk(b"body")
        self.raw(b"0\r\nX-Trailer: late\r\n\r\n")

    def route_many_headers(self, query, body):
        count = int(query.get("count", ["1"])[0])
        lines = b"".join(b"X-Filler-%05d: %s\r\n" % (i, b"v" * 80) for i in range(count))
        self.raw(b"HTTP/1.1 200 OK\r\n" + lines + b"Content-Length: 2\r\n\r\nok")


class QuietErrors:
    daemon_threads = True
    allow_reuse_address = True
    ssl_context = None

    def get_request(self):
        sock, address = self.socket.accept()
        if self.ssl_context is not None:
            # Handshake in the handler thread, so a client that never finishes it cannot stall accept().
            sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request, client_address):
        pass


class TCPServer(QuietErrors, socketserver.ThreadingTCPServer):
    pass


class UnixServer(QuietErrors, socketserver.ThreadingUnixStreamServer):
    pass


def main():
    # Spawned from a thread that blocks signals, the server would inherit the mask and ignore SIGTERM.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signal.valid_signals())
    parser = argparse.ArgumentParser()
    parser.add_argument("--unix")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = parser.parse_args()
    if args.unix:
        server = UnixServer(args.unix, Handler)
        port = 0
    else:
        server = TCPServer(("127.0.0.1", 0), Handler)
        port = server.server_address[1]
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls[0], args.tls[1])
        server.ssl_context = context
    emit("READY %d" % port)
    server.serve_forever()


if __name__ == "__main__":
    main()
