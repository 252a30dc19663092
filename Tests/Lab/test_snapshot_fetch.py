"""Tests of scripts/lib/snapshot_fetch.py (scripts/static-deps' fallback to snapshot.debian.org) against a fake
snapshot service on loopback: the files land under their names only when every SHA-1 and the pinned .dsc SHA-256
match, and a malformed or lying answer writes nothing usable and exits 1."""

import hashlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "lib", "snapshot_fetch.py")


class FakeSnapshot(http.server.ThreadingHTTPServer):
    """Serves /mr/package/<p>/<v>/srcfiles?fileinfo=1 from `index` and /file/<sha1> from `blobs`."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.index = {}
        self.blobs = {}
        self.requests = []


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.requests.append(self.path)
        if self.path.startswith("/mr/package/") and self.path.endswith("/srcfiles?fileinfo=1"):
            body = json.dumps(self.server.index).encode()
        elif self.path.startswith("/file/") and self.path[6:] in self.server.blobs:
            body = self.server.blobs[self.path[6:]]
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class SnapshotFetchTests(unittest.TestCase):
    def setUp(self):
        self.server = FakeSnapshot()
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.dest = tempfile.mkdtemp()
        self.files = {"pkg_1.0-1.dsc": b"Format: 3.0 (quilt)\n", "pkg_1.0.orig.tar.gz": b"tarball bytes"}
        self.publish(self.files)

    def publish(self, files, names=None):
        self.server.index = {"result": [], "fileinfo": {}}
        for name, body in files.items():
            sha1 = hashlib.sha1(body).hexdigest()
            self.server.blobs[sha1] = body
            self.server.index["result"].append({"hash": sha1})
            self.server.index["fileinfo"][sha1] = [{"name": (names or {}).get(name, name), "archive_name": "debian"}]

    def run_fetch(self, dsc_sha256=None, version="1.0-1"):
        dsc_sha256 = dsc_sha256 or hashlib.sha256(self.files["pkg_1.0-1.dsc"]).hexdigest()
        env = dict(os.environ, VAULTSYNC_DEBIAN_SNAPSHOT_URL=f"http://127.0.0.1:{self.server.server_address[1]}/")
        return subprocess.run([sys.executable, SCRIPT, "pkg", version, dsc_sha256, self.dest],
                              env=env, capture_output=True, text=True, timeout=60)

    def test_fetches_every_file_under_its_name(self):
        result = self.run_fetch()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(os.listdir(self.dest)), sorted(self.files))
        for name, body in self.files.items():
            with open(os.path.join(self.dest, name), "rb") as f:
                self.assertEqual(f.read(), body)

    def test_quotes_the_version_in_the_index_url(self):
        self.assertEqual(self.run_fetch(version="1.0-1~deb13u2+x").returncode, 0)
        self.assertIn("/mr/package/pkg/1.0-1~deb13u2%2Bx/srcfiles?fileinfo=1", self.server.requests)

    def test_a_dsc_that_differs_from_the_pin_fails(self):
        result = self.run_fetch(dsc_sha256="0" * 64)
        self.assertEqual(result.returncode, 1)
        self.assertIn("pinned in scripts/static-deps", result.stderr)
        self.assertNotIn("pkg_1.0-1.dsc", os.listdir(self.dest))

    def test_a_file_that_differs_from_its_sha1_fails(self):
        sha1 = hashlib.sha1(self.files["pkg_1.0.orig.tar.gz"]).hexdigest()
        self.server.blobs[sha1] = b"something else"
        result = self.run_fetch()
        self.assertEqual(result.returncode, 1)
        self.assertIn("does not match its SHA-1", result.stderr)

    def test_a_file_name_with_a_path_is_refused(self):
        self.publish(self.files, names={"pkg_1.0.orig.tar.gz": "../escape.tar.gz"})
        result = self.run_fetch()
        self.assertEqual(result.returncode, 1)
        self.assertIn("not a plain name", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dest, "..", "escape.tar.gz")))

    def test_an_index_without_a_dsc_or_not_json_fails(self):
        self.publish({"pkg_1.0.orig.tar.gz": b"tarball bytes"})
        self.assertEqual(self.run_fetch().returncode, 1)
        self.server.index = "not an object"
        self.assertEqual(self.run_fetch().returncode, 1)

    def test_an_unknown_version_fails_with_one_line(self):
        self.server.index = {}
        self.server.blobs = {}
        result = self.run_fetch()
        self.assertEqual(result.returncode, 1)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


if __name__ == "__main__":
    unittest.main()
