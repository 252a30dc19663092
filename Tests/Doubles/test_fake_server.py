"""Tests for fake_server.py (the CurlTransport tests' server): its marker lines and the routes' answers as its
docstring promises them. The Swift tests rely on these; here a failure names the server, not the client.

Run: python3 -m unittest discover -s Tests/Doubles
"""

import http.client
import json
import os
import socket
import tempfile
import subprocess
import sys
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_server.py")


class FakeServer(unittest.TestCase):
    def setUp(self):
        self.proc = subprocess.Popen([sys.executable, "-u", SCRIPT], stdout=subprocess.PIPE, text=True)
        self.addCleanup(self.stop)
        ready = self.proc.stdout.readline().split()
        self.assertEqual(ready[0], "READY")
        self.port = int(ready[1])

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()

    def connection(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        self.addCleanup(conn.close)
        return conn

    def test_echo_reports_the_request_and_its_connection(self):
        conn = self.connection()
        for _ in range(2):
            conn.request("POST", "/echo?x=1", body=b"\x00hi", headers={"X-Test": "yes"})
            response = conn.getresponse()
            self.assertEqual(response.status, 200)
            echo = json.loads(response.read())
            self.assertEqual(echo["method"], "POST")
            self.assertEqual(echo["target"], "/echo?x=1")
            self.assertIn(["X-Test", "yes"], echo["headers"])
            self.assertEqual(echo["body_hex"], "006869")
            self.assertEqual(echo["connection"], 1)  # kept alive: the same connection both times
        self.assertEqual(self.proc.stdout.readline(), "REQUEST /echo\n")

    def test_respond_sends_the_asked_status_headers_and_body(self):
        conn = self.connection()
        conn.request("GET", "/respond?status=418&header=X-One:%20a&header=X-Two:b&body=teapot")
        response = conn.getresponse()
        self.assertEqual((response.status, response.read()), (418, b"teapot"))
        self.assertEqual(response.getheader("X-One"), "a")
        self.assertEqual(response.getheader("X-Two"), "b")

    def test_big_sends_n_bytes_with_length_or_chunked(self):
        for mode in ("length", "chunked"):
            conn = self.connection()
            conn.request("GET", f"/big?bytes=100000&mode={mode}")
            response = conn.getresponse()
            self.assertEqual(response.read(), b"x" * 100000)
            self.assertEqual(response.getheader("Transfer-Encoding") == "chunked", mode == "chunked")

    def test_cut_closes_inside_the_body(self):
        conn = self.connection()
        conn.request("GET", "/cut")
        response = conn.getresponse()
        with self.assertRaises(http.client.IncompleteRead):
            response.read()

    def test_unknown_path_is_not_found(self):
        conn = self.connection()
        conn.request("GET", "/nothing")
        response = conn.getresponse()
        self.assertEqual((response.status, response.read()), (404, b"not found"))


class UnixSocket(unittest.TestCase):
    def test_listens_on_the_socket_and_reports_port_zero(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "s")
            proc = subprocess.Popen([sys.executable, "-u", SCRIPT, "--unix", path], stdout=subprocess.PIPE, text=True)
            try:
                self.assertEqual(proc.stdout.readline(), "READY 0\n")
                with socket.socket(socket.AF_UNIX) as sock:
                    sock.settimeout(10)
                    sock.connect(path)
                    sock.sendall(b"GET /respond?body=unix HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    answer = b""
                    while chunk := sock.recv(4096):
                        answer += chunk
                self.assertTrue(answer.startswith(b"HTTP/1.1 200 "))
                self.assertTrue(answer.endswith(b"\r\n\r\nunix"))
            finally:
                proc.kill()
                proc.wait()
                proc.stdout.close()


if __name__ == "__main__":
    unittest.main()
