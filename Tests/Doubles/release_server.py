#!/usr/bin/env python3
"""An HTTPS stand-in for where a release's files live, laid out the way GitHub and the website answer.

For install/tests/e2e only (standard library only). One TLS listener answers three host names (the caller maps
them to 127.0.0.1 in a private /etc/hosts); the certificate must carry all of them (Tests/Lab/testca.py --dns-name).

  https://vaultsync.eu/notify.sh
      302 -> https://github.com/<repo>/releases/latest/download/notify.sh   (what the website must do)
  https://github.com/<repo>/releases/latest
      302 -> https://github.com/<repo>/releases/tag/<tag of the latest release>
  https://github.com/<repo>/releases/latest/download/<asset>
      302 -> https://github.com/<repo>/releases/download/<tag of the latest release>/<asset>
  https://github.com/<repo>/releases/tag/<tag>                 200, a page
  https://github.com/<repo>/releases/download/<tag>/<asset>
      302 -> https://release-assets.githubusercontent.com/github-production-release-asset/<n>/<token>?<signed query>
  https://release-assets.githubusercontent.com/...?<query>     200, the file (403 without the query's sig)

Files come from RELEASES/<tag>/<asset>; the latest tag is the content of RELEASES/latest (read on every request,
so a test can publish a release while the server runs). While RELEASES/tamper exists, the asset host serves every
vaultsync-notify-* binary with its last byte changed (a compromised download). Each request is appended to the
--log file as one JSON line: host, path (without the query), query present or not, status.

    release_server.py --releases DIR --cert PEM --key PEM --log FILE --ready FILE [--port 443]
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import re
import ssl
import sys
import threading
import urllib.parse

REPO = "vaultsync/vaultsync-notify"
GITHUB = "github.com"
WEBSITE = "vaultsync.eu"
ASSETS = "release-assets.githubusercontent.com"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "release-stand-in"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass

    def _record(self, status: int):
        parts = urllib.parse.urlsplit(self.path)
        entry = {"host": self.headers.get("Host", "").split(":")[0], "path": parts.path,
                 "query": bool(parts.query), "status": status}
        with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None):
        self._record(status)
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _redirect(self, location: str):
        self._send(302, b"", {"Location": location})

    def _latest(self) -> str | None:
        try:
            with open(os.path.join(self.server.releases, "latest"), encoding="utf-8") as f:
                tag = f.read().strip()
        except FileNotFoundError:
            return None
        return tag if NAME.match(tag) else None

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        host = self.headers.get("Host", "").split(":")[0]
        parts = urllib.parse.urlsplit(self.path)
        path = parts.path
        prefix = f"/{REPO}/releases/"
        if host == WEBSITE and path == "/notify.sh":
            return self._redirect(f"https://{GITHUB}{prefix}latest/download/notify.sh")
        if host == GITHUB and path.startswith(prefix):
            rest = path[len(prefix):].split("/")
            if rest == ["latest"]:
                tag = self._latest()
                return self._redirect(f"https://{GITHUB}{prefix}tag/{tag}") if tag else self._send(404)
            if len(rest) == 3 and rest[:2] == ["latest", "download"] and NAME.match(rest[2]):
                tag = self._latest()
                if not tag:
                    return self._send(404)
                return self._redirect(f"https://{GITHUB}{prefix}download/{tag}/{rest[2]}")
            if len(rest) == 2 and rest[0] == "tag" and NAME.match(rest[1]):
                if os.path.isdir(os.path.join(self.server.releases, rest[1])):
                    return self._send(200, b"<html>release</html>", {"Content-Type": "text/html"})
                return self._send(404)
            if len(rest) == 3 and rest[0] == "download" and NAME.match(rest[1]) and NAME.match(rest[2]):
                file = os.path.join(self.server.releases, rest[1], rest[2])
                if not os.path.isfile(file):
                    return self._send(404)
                token = hashlib.sha256(file.encode()).hexdigest()[:32]
                self.server.tokens[token] = file
                query = urllib.parse.urlencode({
                    "sp": "r", "sv": "2018-11-09", "sr": "b", "spr": "https",
                    "rscd": f"attachment; filename={rest[2]}", "rsct": "application/octet-stream",
                    "sig": token[:16]})
                return self._redirect(f"https://{ASSETS}/github-production-release-asset/1/{token}?{query}")
            return self._send(404)
        if host == ASSETS and path.startswith("/github-production-release-asset/1/"):
            token = path.rsplit("/", 1)[-1]
            file = self.server.tokens.get(token)
            if file is None:
                return self._send(404)
            if urllib.parse.parse_qs(parts.query).get("sig") != [token[:16]]:
                return self._send(403)
            with open(file, "rb") as f:
                body = f.read()
            if os.path.basename(file).startswith("vaultsync-notify-") and os.path.exists(
                    os.path.join(self.server.releases, "tamper")):
                body = body[:-1] + bytes([body[-1] ^ 0xFF])
            return self._send(200, body, {"Content-Type": "application/octet-stream"})
        return self._send(404)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="HTTPS stand-in for GitHub releases and the website's notify.sh")
    p.add_argument("--releases", required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--ready", required=True, help="written once listening")
    p.add_argument("--port", type=int, default=443)
    args = p.parse_args(argv)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.releases = args.releases
    server.log_path = args.log
    server.log_lock = threading.Lock()
    server.tokens = {}
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(args.ready + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.ready + ".tmp", args.ready)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
