"""Tests for syncthing_status.py: the port line, and 200, 403 and 404 as Syncthing answers them.

Run: python3 -m unittest discover -s Tests/Doubles
"""

import http.client
import json
import os
import subprocess
import sys
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "syncthing_status.py")


class SyncthingStatus(unittest.TestCase):
    def setUp(self):
        self.proc = subprocess.Popen([sys.executable, SCRIPT, "right-key"], stdout=subprocess.PIPE, text=True)
        self.addCleanup(self.stop)
        self.port = int(self.proc.stdout.readline())

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()

    def get(self, path, key=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        self.addCleanup(conn.close)
        conn.request("GET", path, headers={} if key is None else {"X-API-Key": key})
        response = conn.getresponse()
        return response.status, response.read()

    def test_right_key_gets_the_status_document(self):
        status, body = self.get("/rest/system/status", "right-key")
        self.assertEqual(status, 200)
        document = json.loads(body)
        self.assertEqual(document["myID"], "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH")
        self.assertEqual(document["startTime"], "2024-01-01T00:00:00Z")

    def test_wrong_or_missing_key_gets_csrf_error(self):
        self.assertEqual(self.get("/rest/system/status", "wrong-key"), (403, b"CSRF Error\n"))
        self.assertEqual(self.get("/rest/system/status"), (403, b"CSRF Error\n"))

    def test_other_paths_are_not_found(self):
        self.assertEqual(self.get("/rest/events", "right-key"), (404, b""))

    def test_usage_without_a_key(self):
        result = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 2)
        self.assertIn("usage", result.stderr)


if __name__ == "__main__":
    unittest.main()
