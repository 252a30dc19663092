#!/usr/bin/env python3
"""A Docker Engine API stand-in on a unix socket, for reading what the real docker CLI sends.

  fake_docker_api.py SOCKET OUT [IMAGE_JSON]

Answers /_ping; records the JSON body of POST .../containers/create in OUT and answers it (and every other POST) with
500, so that `docker run` stops there (exit 125) without a daemon. The tests use it to see how `docker run --env-file`
reads the installer's docker.env: Env in the create request is exactly what the container would get.
With IMAGE_JSON, GET .../images/<name>/json (`docker image inspect`) is answered with that file, so that the real
CLI's template output (the installer's repo-digest format) can be compared.
"""
import http.server
import json
import os
import socketserver
import sys

SOCKET, OUT = sys.argv[1], sys.argv[2]
IMAGE_JSON = sys.argv[3] if len(sys.argv) > 3 else None


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body=b""):
        self.send_response(code)
        self.send_header("Api-Version", "1.45")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.answer(200)

    def do_GET(self):
        path = self.path.split("?")[0]
        if "/images/" in path and path.endswith("/json"):
            if IMAGE_JSON is None:
                self.answer(404, json.dumps({"message": "No such image"}).encode())
            else:
                with open(IMAGE_JSON, "rb") as f:
                    self.answer(200, f.read())
            return
        self.answer(200, b"OK")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "/containers/create" in self.path:
            with open(OUT + ".tmp", "wb") as f:
                f.write(body)
            os.replace(OUT + ".tmp", OUT)
        self.answer(500, json.dumps({"message": "fake docker API: stops here"}).encode())

    def address_string(self):
        return "unix"

    def log_message(self, *args):
        pass


if os.path.exists(SOCKET):
    os.unlink(SOCKET)
socketserver.UnixStreamServer(SOCKET, Handler).serve_forever()
