"""Tests for fake_syncthing.py.

Run: python3 -m unittest discover -s Tests/Doubles

Most tests run the server in-process on an ephemeral loopback port; a few start the CLI as a subprocess
(listening on a signal, a restart with downtime, SIGTERM, the status-only mode and its port line).
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_syncthing  # noqa: E402
from fake_syncthing import Server, State  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_syncthing.py")
KEY = "test-key"
MASK = "events=LocalIndexUpdated,FolderCompletion"
DEV = fake_syncthing.DEFAULT_DEVICE
PEER = fake_syncthing.DEFAULT_PEER


class FakeTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "log.jsonl")
        self.state = State(DEV, KEY, PEER, ["vault", "notes"], log_path=self.log)
        self.server = Server(("127.0.0.1", 0), self.state)
        self.state.server = self.server
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def tearDown(self):
        self.state.stopping = True
        with self.state.cond:
            self.state.cond.notify_all()
        self.server.shutdown()
        self.server.server_close()
        self.state.close()
        self.tmp.cleanup()

    def wait_until_held(self):
        """Wait until a long poll is held (a fixed sleep can be too short on a loaded machine)."""
        deadline = time.monotonic() + 10
        while not self.state.snapshot()["waiting"]:
            self.assertLess(time.monotonic(), deadline, "the long poll was never held")
            time.sleep(0.02)

    def request(self, path, method="GET", key=KEY, body=None, headers=None, timeout=10):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = dict(headers or {})
        if key is not None:
            h["X-API-Key"] = key
        try:
            conn.request(method, path, body=body, headers=h)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        return resp.status, dict((k.lower(), v) for k, v in resp.getheaders()), data

    def get_json(self, path, **kw):
        status, _, data = self.request(path, **kw)
        self.assertEqual(status, 200, data)
        return json.loads(data)

    def control(self, path, obj=None, method="POST"):
        status, _, data = self.request("/_control/" + path, method=method, key=None,
                                       body=None if obj is None else json.dumps(obj))
        self.assertEqual(status, 200, data)
        return json.loads(data)

    def events(self, query, **kw):
        return self.get_json(f"/rest/events?{MASK}&{query}", **kw)

    def logged(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f if line.strip()]


class AuthAndStatus(FakeTestCase):
    def test_missing_or_wrong_key_is_csrf_error(self):
        for key in (None, "wrong"):
            status, headers, body = self.request("/rest/system/status", key=key)
            self.assertEqual(status, 403)
            self.assertEqual(body, b"CSRF Error\n")
            self.assertEqual(headers["x-syncthing-id"], DEV)

    def test_header_name_is_case_insensitive(self):
        status, _, _ = self.request("/rest/system/status", key=None, headers={"x-api-key": KEY})
        self.assertEqual(status, 200)

    def test_host_check(self):
        status, _, body = self.request("/rest/system/status", headers={"Host": "example.com"})
        self.assertEqual((status, body), (403, b"Host check error\n"))

    def test_status(self):
        st = self.get_json("/rest/system/status")
        self.assertEqual(st["myID"], DEV)
        self.assertRegex(st["startTime"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_config_and_completion(self):
        devices = self.get_json("/rest/config/devices")
        self.assertEqual([d["deviceID"] for d in devices], [DEV, PEER])
        folders = self.get_json("/rest/config/folders")
        self.assertEqual([f["id"] for f in folders], ["vault", "notes"])
        self.assertEqual([d["deviceID"] for d in folders[0]["devices"]], [DEV, PEER])
        c = self.get_json(f"/rest/db/completion?device={PEER}&folder=vault")
        self.assertEqual((c["completion"], c["needBytes"]), (100, 0))
        self.control("completion", {"device": PEER, "folder": "vault", "needBytes": 6})
        c = self.get_json(f"/rest/db/completion?device={PEER}&folder=vault")
        self.assertEqual(c["needBytes"], 6)
        self.assertLess(c["completion"], 100)
        self.assertEqual(self.request(f"/rest/db/completion?device={PEER}&folder=nope")[0], 404)
        self.assertEqual(self.request("/rest/db/completion?device=XYZ&folder=vault")[0], 400)
        connections = self.get_json("/rest/system/connections")["connections"]
        self.assertEqual(sorted(connections), sorted([DEV, PEER]))
        self.assertFalse(connections[PEER]["connected"])

    def test_log_lines(self):
        self.request("/rest/system/status", key="wrong")
        self.request("/rest/system/status")
        self.control("state", method="GET")
        entries = self.logged()
        self.assertEqual([(e["route"], e["status"]) for e in entries],
                         [("/rest/system/status", 403), ("/rest/system/status", 200)])


class Events(FakeTestCase):
    def test_filtered_subscription_has_no_history_and_own_ids(self):
        self.control("events", {"type": "LocalIndexUpdated", "folder": "vault"})
        self.assertEqual(self.events("since=0&timeout=0"), [])
        out = self.control("events", {"type": "LocalIndexUpdated", "folder": "vault"})
        self.assertEqual(out[0]["ids"]["FolderCompletion,LocalIndexUpdated"], 1)
        evs = self.events("since=0&timeout=0")
        self.assertEqual([(e["id"], e["type"], e["data"]["folder"]) for e in evs], [(1, "LocalIndexUpdated", "vault")])
        # The default subscription saw everything, startup events included.
        default = self.get_json("/rest/events?since=0&timeout=0")
        self.assertEqual([e["type"] for e in default][:2], ["Starting", "StartupComplete"])
        self.assertEqual(len(default), 4)

    def test_limit_keeps_the_newest(self):
        self.events("since=0&timeout=0")
        self.control("events", [{"type": "LocalIndexUpdated"}, {"type": "FolderCompletion"},
                                {"type": "LocalIndexUpdated"}])
        self.assertEqual([e["id"] for e in self.events("since=0&limit=1&timeout=0")], [3])
        self.assertEqual([e["id"] for e in self.events("since=0&limit=2&timeout=0")], [2, 3])

    def test_long_poll_holds_then_answers(self):
        self.events("since=0&timeout=0")
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall(f"GET /rest/events?{MASK}&since=0&timeout=5 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"X-API-Key: {KEY}\r\n\r\n".encode())
        sock.settimeout(2)
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        # The 200 and its headers come at once, chunked, before any event exists.
        self.assertTrue(head.startswith(b"HTTP/1.1 200"))
        self.assertIn(b"Transfer-Encoding: chunked", head)
        self.wait_until_held()
        self.control("events", {"type": "LocalIndexUpdated", "folder": "vault"})
        rest = head.split(b"\r\n\r\n", 1)[1]
        while not rest.endswith(b"0\r\n\r\n"):
            rest += sock.recv(65536)
        sock.close()
        self.assertIn(b'"id": 1', rest)

    def test_timeout(self):
        t = time.monotonic()
        self.assertEqual(self.events("since=5&timeout=1"), [])
        self.assertGreaterEqual(time.monotonic() - t, 0.9)
        t = time.monotonic()
        self.assertEqual(self.events("since=0&timeout=0"), [])
        self.assertLess(time.monotonic() - t, 0.5)

    def test_skip_makes_a_gap(self):
        self.events("since=0&timeout=0")
        self.control("events", {"type": "LocalIndexUpdated"})
        self.control("skip", {"count": 5})
        self.control("events", {"type": "LocalIndexUpdated"})
        self.assertEqual([e["id"] for e in self.events("since=0&timeout=0")], [1, 7])

    def test_negative_since_gives_placeholders(self):
        self.events("since=0&timeout=0")
        self.control("events", {"type": "LocalIndexUpdated"})
        evs = self.events("since=-5&timeout=0")
        self.assertEqual(len(evs), 1000)
        self.assertEqual(evs[0]["type"], "Unknown")
        self.assertEqual(evs[-1]["id"], 1)

    def test_buffer_keeps_1000(self):
        self.events("since=0&timeout=0")
        self.control("events", [{"type": "LocalIndexUpdated"}] * 1005)
        evs = self.events("since=0&timeout=0")
        self.assertEqual((len(evs), evs[0]["id"], evs[-1]["id"]), (1000, 6, 1005))


class Generate(FakeTestCase):
    def wait_generator_done(self):
        deadline = time.monotonic() + 10
        while (snap := self.control("generate", method="GET"))["running"]:
            self.assertLess(time.monotonic(), deadline, "the generator never finished")
            time.sleep(0.02)
        return snap

    def test_rate_for_seconds_with_names(self):
        self.events("since=0&timeout=0")
        started = self.control("generate", {"rate": 200, "seconds": 0.5, "names": 3, "folder": "notes"})
        self.assertEqual(started["rate"], 200)
        self.assertEqual(self.wait_generator_done()["emitted"], 100)
        evs = self.events("since=0&timeout=0")
        self.assertEqual([e["id"] for e in evs], list(range(1, 101)))
        self.assertEqual({e["type"] for e in evs}, {"LocalIndexUpdated"})
        self.assertEqual({(e["data"]["folder"], e["data"]["items"], len(e["data"]["filenames"])) for e in evs},
                         {("notes", 3, 3)})

    def test_a_held_poll_gets_generated_events(self):
        self.events("since=0&timeout=0")
        self.control("generate", {"rate": 50, "seconds": 0.1})
        self.assertGreaterEqual(len(self.events("since=0&timeout=5")), 1)

    def test_runs_until_stopped(self):
        self.control("generate", {"rate": 1000, "type": "FolderCompletion", "needItems": 2})
        time.sleep(0.2)
        stopped = self.control("generate", method="DELETE")
        self.assertFalse(stopped["running"])
        self.assertGreater(stopped["emitted"], 0)
        time.sleep(0.1)
        self.assertEqual(self.control("generate", method="GET")["emitted"], stopped["emitted"])
        default = self.get_json("/rest/events?since=0&timeout=0")
        completions = [e for e in default if e["type"] == "FolderCompletion"]
        self.assertEqual(len(completions), stopped["emitted"])
        self.assertEqual(completions[0]["data"]["needItems"], 2)

    def test_invalid_specs(self):
        for spec in ([], {"rate": 0}, {"rate": "x"}, {"rate": True}, {"rate": 10, "names": -1},
                     {"rate": 10, "seconds": 0}, {"rate": 10, "type": ""}):
            status, _, data = self.request("/_control/generate", method="POST", key=None, body=json.dumps(spec))
            self.assertEqual(status, 400, (spec, data))
        self.assertFalse(self.control("generate", method="GET")["running"])


class Restart(FakeTestCase):
    def test_restart_new_start_time_and_ids(self):
        before = self.get_json("/rest/system/status")["startTime"]
        self.events("since=0&timeout=0")
        self.control("events", [{"type": "LocalIndexUpdated"}] * 3)
        self.control("restart", {})
        self.assertNotEqual(self.get_json("/rest/system/status")["startTime"], before)
        self.assertEqual(self.events("since=0&timeout=0"), [])  # new run, new subscription
        self.control("events", {"type": "LocalIndexUpdated"})
        self.assertEqual([e["id"] for e in self.events("since=0&timeout=0")], [1])

    def held_poll(self):
        result = {}

        def run():
            try:
                result["events"] = self.events("since=0&timeout=10")
            except Exception as exc:  # noqa: BLE001
                result["error"] = exc
        self.events("since=0&timeout=0")
        t = threading.Thread(target=run)
        t.start()
        self.wait_until_held()
        return t, result

    def test_inflight_empty(self):
        t, result = self.held_poll()
        self.control("restart", {"inflight": "empty"})
        t.join(5)
        self.assertEqual(result.get("events"), [])

    def test_inflight_cut(self):
        t, result = self.held_poll()
        self.control("restart", {"inflight": "cut"})
        t.join(5)
        self.assertIsInstance(result.get("error"), http.client.IncompleteRead)


class Faults(FakeTestCase):
    def setUp(self):
        super().setUp()
        self.events("since=0&timeout=0")

    def test_oversized_is_exact_valid_json(self):
        self.control("faults", [{"kind": "oversized", "bytes": 3 << 20}])
        status, headers, body = self.request(f"/rest/events?{MASK}&since=0&timeout=5")
        self.assertEqual(len(body), 3 << 20)
        self.assertEqual(headers.get("transfer-encoding"), "chunked")
        self.assertEqual(json.loads(body)[0]["type"], "LocalIndexUpdated")

    def test_cut(self):
        self.control("faults", [{"kind": "cut"}])
        with self.assertRaises(http.client.IncompleteRead):
            self.request(f"/rest/events?{MASK}&since=0&timeout=5")

    def test_malformed(self):
        self.control("faults", [{"kind": "malformed"}])
        status, _, body = self.request(f"/rest/events?{MASK}&since=0&timeout=5")
        self.assertEqual(status, 200)
        with self.assertRaises(ValueError):
            json.loads(body)

    def test_early_empty_forever_only_for_polls(self):
        self.control("faults", [{"kind": "early_empty", "count": -1, "match": "poll"}])
        self.control("events", {"type": "LocalIndexUpdated"})
        for _ in range(3):
            t = time.monotonic()
            self.assertEqual(self.events("since=0&timeout=5"), [])
            self.assertLess(time.monotonic() - t, 0.5)
        # The head query is not a poll: it still answers normally.
        self.assertEqual([e["id"] for e in self.events("since=0&limit=1&timeout=0")], [1])
        self.assertEqual(len(self.control("faults", method="GET")), 1)

    def test_status_fault(self):
        self.control("faults", [{"kind": "status", "status": 401}, {"kind": "status"}])
        status, headers, body = self.request(f"/rest/events?{MASK}&since=0&timeout=5")
        self.assertEqual((status, body), (401, b"Not Authorized\n"))
        self.assertNotIn("x-syncthing-id", headers)
        status, _, body = self.request(f"/rest/events?{MASK}&since=0&timeout=5")
        self.assertEqual((status, body), (403, b"CSRF Error\n"))
        self.assertEqual([e["fault"] for e in self.logged()[-2:]], ["status", "status"])

    def test_held_poll_takes_the_fault(self):
        result = {}

        def run():
            result["events"] = self.events("since=0&timeout=10")
        t = threading.Thread(target=run)
        start = time.monotonic()
        t.start()
        self.wait_until_held()
        self.control("faults", [{"kind": "raw", "body": '[{"id": 42, "type": "LocalIndexUpdated"}]'}])
        t.join(5)
        self.assertEqual(result["events"], [{"id": 42, "type": "LocalIndexUpdated"}])
        self.assertLess(time.monotonic() - start, 3)
        self.assertEqual(self.control("faults", method="GET"), [])

    def test_hang_until_the_client_goes_away(self):
        self.control("faults", [{"kind": "hang"}])
        with self.assertRaises((TimeoutError, socket.timeout)):
            self.request(f"/rest/events?{MASK}&since=0&timeout=5", timeout=0.5)
        deadline = time.monotonic() + 3
        while self.state.snapshot()["waiting"] and time.monotonic() < deadline:
            time.sleep(0.05)

    def test_faults_on_other_paths(self):
        self.control("faults", [{"kind": "status", "status": 500, "paths": ["/rest/system/status"]}])
        self.assertEqual(self.request("/rest/system/status")[0], 500)
        self.assertEqual(self.request("/rest/system/status")[0], 200)

    def test_invalid_faults(self):
        for bad in ([{"kind": "nope"}], [{"kind": "cut", "count": 0}], [{"kind": "cut", "extra": 1}], {"kind": "cut"}):
            status, _, _ = self.request("/_control/faults", method="POST", key=None, body=json.dumps(bad))
            self.assertEqual(status, 400, bad)


class CommandLine(unittest.TestCase):
    def start(self, *extra):
        self.tmp = tempfile.TemporaryDirectory()
        port_file = os.path.join(self.tmp.name, "port")
        proc = subprocess.Popen([sys.executable, SCRIPT, "--port", "0", "--port-file", port_file, "--api-key", KEY,
                                 *extra], stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(port_file) and time.monotonic() < deadline:
            time.sleep(0.02)
        with open(port_file) as f:
            port = int(f.read())
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc, port

    @staticmethod
    def reachable(port):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    def test_listen_on_signal_and_sigterm(self):
        proc, port = self.start("--listen-on-signal")
        self.assertFalse(self.reachable(port))
        proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while not self.reachable(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(self.reachable(port))
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(5), 0)

    def test_restart_with_downtime(self):
        proc, port = self.start()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        asked = time.monotonic()
        conn.request("POST", "/_control/restart", body=json.dumps({"down_seconds": 1}))
        self.assertEqual(conn.getresponse().status, 200)
        conn.close()
        self.assertFalse(self.reachable(port))
        deadline = time.monotonic() + 10  # down for 1 s, then back as soon as the loaded machine allows
        while not self.reachable(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(self.reachable(port))
        self.assertGreaterEqual(time.monotonic() - asked, 1.0)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(5), 0)

    def test_refuses_non_loopback(self):
        r = subprocess.run([sys.executable, SCRIPT, "--host", "0.0.0.0"], capture_output=True)
        self.assertEqual(r.returncode, 2)


class StatusOnly(unittest.TestCase):
    """``--status-only --print-port``: the port line, and 200, 403 and 404 as Syncthing answers them."""

    def setUp(self):
        self.proc = subprocess.Popen([sys.executable, SCRIPT, "--status-only", "--api-key", "right-key",
                                      "--print-port"], stdout=subprocess.PIPE, text=True)
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
        self.assertEqual(self.get("/_control/state"), (404, b""))

    def test_usage_without_a_key(self):
        result = subprocess.run([sys.executable, SCRIPT, "--status-only"], capture_output=True, text=True,
                                timeout=10)
        self.assertEqual(result.returncode, 2)
        self.assertIn("usage", result.stderr)


if __name__ == "__main__":
    unittest.main()
