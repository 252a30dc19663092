#!/usr/bin/env python3
"""A loopback stand-in for Syncthing's `GET /rest/system/status` alone (Python 3 standard library).

Usage: syncthing_status.py API_KEY

Listens on 127.0.0.1 with an ephemeral port and prints that port on a line of its own once it accepts connections.
Answers 200 with a fixed status document (`myID`, `startTime`) when X-API-Key is API_KEY, 403 `CSRF Error` (as
Syncthing does) when it is missing or wrong, and 404 for any other path. Runs until killed.
Tests/NotifyRuntimeTests/SupervisionDoubles.swift (`FakeSyncthingStatus`) starts it; the full REST fake is
fake_syncthing.py.
"""

import http.server
import sys

STATUS = (b'{"myID":"AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH",'
          b'"startTime":"2024-01-01T00:00:00Z"}')


def handler(key):
    """A request handler class that expects *key* in X-API-Key."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path != "/rest/system/status":
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.headers.get("X-API-Key") != key:
                body = b"CSRF Error\n"
                self.send_response(403)
            else:
                body = STATUS
                self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def main(argv):
    if len(argv) != 2:
        print("usage: syncthing_status.py API_KEY", file=sys.stderr)
        return 2
    server = http.server.HTTPServer(("127.0.0.1", 0), handler(argv[1]))
    print(server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
