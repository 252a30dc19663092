"""Tests for relay_standin.py.

Run: python3 -m unittest discover -s Tests/Doubles

Most tests run the server in-process on an ephemeral loopback port with a fake monotonic clock,
so windows and rate limits are tested without sleeping.  A few start the CLI as a subprocess.
"""

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The throwaway CA lives with the lab, not the doubles.
sys.path.insert(0, os.path.join(HERE, "..", "Lab"))
import relay_standin  # noqa: E402
import testca  # noqa: E402
from relay_standin import RelayStandin  # noqa: E402

SCRIPT = os.path.join(HERE, "relay_standin.py")
DEV = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
DEV2 = "2222222-3333333-4444444-5555555-6666666-7777777-ZZZZZZZ-YYYYYYY"
TRIGGER = "/api/v1/trigger"
RFC3339_RE = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"


class FakeClock:
    """Monotonic clock that only moves when told to."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


class Response:
    """status, headers (lower-case dict), raw body and parsed JSON of one answer."""

    def __init__(self, resp):
        self.status = resp.status
        self.headers = {k.lower(): v for k, v in resp.getheaders()}
        self.body = resp.read()
        try:
            self.json = json.loads(self.body)
        except ValueError:
            self.json = None


class RelayTestCase(unittest.TestCase):
    """Starts a RelayStandin per test; override ``relay_kwargs``."""

    relay_kwargs: dict = {}

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log_path = os.path.join(self.tmp.name, "requests.jsonl")
        self.clock = FakeClock()
        kwargs = {"log_path": self.log_path, "clock": self.clock}
        kwargs.update(self.relay_kwargs)
        self.relay = RelayStandin(**kwargs).start()

    def tearDown(self):
        self.relay.stop()
        self.tmp.cleanup()

    def request(self, method, path, body=None, headers=None, timeout=10):
        """One request on a fresh connection; body may be bytes, str or a JSON-able object."""
        conn = http.client.HTTPConnection("127.0.0.1", self.relay.port, timeout=timeout)
        try:
            if body is not None and not isinstance(body, (bytes, str)):
                body = json.dumps(body)
            hdrs = {"Content-Type": "application/json"}
            hdrs.update(headers or {})
            conn.request(method, path, body=body, headers=hdrs)
            return Response(conn.getresponse())
        finally:
            conn.close()

    def trigger(self, device_id=DEV):
        return self.request("POST", "/api/v1/trigger", {"device_id": device_id})

    def set_faults(self, faults):
        r = self.request("POST", "/_control/faults", faults)
        self.assertEqual(r.status, 200, r.body)
        return r.json

    def log_lines(self):
        with open(self.log_path, encoding="utf-8") as f:
            return [json.loads(line) for line in f]


class HealthAndRouting(RelayTestCase):
    def test_health(self):
        r = self.request("GET", "/api/v1/health")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json, {"status": "ok", "version": "1.3.2-standin"})
        self.assertEqual(r.headers["content-type"], "application/json")

    def test_unknown_path_is_404(self):
        for path in ("/", "/api/v2/trigger", "/api/v1/nope", "/health"):
            self.assertEqual(self.request("GET", path).status, 404, path)
        self.assertEqual(self.request("POST", "/api/v1/triggers", {"device_id": DEV}).status, 404)

    def test_wrong_method_is_405(self):
        r = self.request("GET", "/api/v1/trigger")
        self.assertEqual(r.status, 405)
        self.assertEqual(r.headers["allow"], "POST")

    def test_query_string_is_ignored_for_routing(self):
        self.assertEqual(self.request("GET", "/api/v1/health?x=1").status, 200)


class TriggerValidation(RelayTestCase):
    relay_kwargs = {"provisioned": [DEV]}

    def test_accepted(self):
        r = self.trigger()
        self.assertEqual(r.status, 202)
        self.assertEqual(r.json, {"status": "accepted", "devices_notified": 1})

    def test_bad_bodies_are_400(self):
        bad = [
            b"", b"not json", b"[]", b'"str"', b"{}", b'{"device_id": 5}',
            json.dumps({"device_id": DEV.lower()}),
            json.dumps({"device_id": DEV.replace("-", "")}),
            json.dumps({"device_id": DEV[:-1]}),
            json.dumps({"device_id": DEV.replace("A", "1")}),  # 1 is not base32
            json.dumps({"device_id": DEV + "-AAAAAAA"}),
            b"\xff\xfe",
        ]
        for body in bad:
            r = self.request("POST", "/api/v1/trigger", body)
            self.assertEqual(r.status, 400, body)
            self.assertIn("error", r.json)

    def test_unprovisioned_is_403(self):
        r = self.trigger(DEV2)
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json, {"error": "no active subscription"})

    def test_chunked_request_body(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.relay.port, timeout=5)
        body = json.dumps({"device_id": DEV}).encode()
        conn.request("POST", "/api/v1/trigger", body=iter([body[:10], body[10:]]),
                     headers={"Content-Type": "application/json"}, encode_chunked=True)
        self.assertEqual(conn.getresponse().status, 202)
        conn.close()

    def test_oversized_request_body_is_413(self):
        r = self.request("POST", "/api/v1/trigger", b"x" * (relay_standin.MAX_REQUEST_BODY + 1))
        self.assertEqual(r.status, 413)
        self.assertEqual(r.headers["connection"], "close")

    def test_oversized_chunked_body_is_413(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.relay.port, timeout=10)
        chunks = [b"x" * 65536] * (relay_standin.MAX_REQUEST_BODY // 65536 + 2)
        try:
            conn.request("POST", "/api/v1/trigger", body=iter(chunks), encode_chunked=True)
            r = Response(conn.getresponse())
        finally:
            conn.close()
        self.assertEqual(r.status, 413)
        self.assertEqual(r.headers["connection"], "close")

    def test_refused_body_lingers_for_a_bounded_time(self):
        # A client that declares a huge body, sends a little of it and then stalls: the answer
        # arrives, and the connection is closed once the lingering time is up.
        relay_standin.LINGER_SECONDS, saved = 0.2, relay_standin.LINGER_SECONDS
        self.addCleanup(setattr, relay_standin, "LINGER_SECONDS", saved)
        with socket.create_connection(("127.0.0.1", self.relay.port), timeout=10) as sock:
            sock.sendall(b"POST /api/v1/trigger HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: 100000000\r\n\r\n" + b"x" * 1000)
            received = b""
            while True:
                data = sock.recv(65536)  # the timeout fails the test if the server never closes
                if not data:
                    break
                received += data
        self.assertTrue(received.startswith(b"HTTP/1.1 413 "), received[:40])
        self.assertIn(b"\r\nConnection: close\r\n", received)


class ProvisionAny(RelayTestCase):
    relay_kwargs = {"provision_any": True}

    def test_any_valid_id_is_provisioned(self):
        self.assertEqual(self.trigger(DEV).status, 202)
        self.assertEqual(self.trigger(DEV2).status, 202)
        self.assertEqual(self.request("POST", "/api/v1/trigger", {"device_id": "x"}).status, 400)


class PushWindowSpec(RelayTestCase):
    """The default (spec) mode: inside the window 202 without a push; 429 only per minute."""

    relay_kwargs = {"provisioned": [DEV, DEV2], "window_seconds": 30, "per_minute": 10}

    def pushed(self):
        return [e["pushed"] for e in self.relay.state.recorded() if e["path"] == TRIGGER]

    def test_default_mode_is_spec(self):
        self.assertEqual(self.relay.state.window_mode, "spec")

    def test_inside_window_accepted_without_push(self):
        self.assertEqual(self.trigger().status, 202)
        self.clock.advance(10.2)
        r = self.trigger()
        self.assertEqual(r.status, 202)
        self.assertEqual(r.json, {"status": "accepted", "devices_notified": 1})
        self.assertNotIn("retry-after", r.headers)
        self.clock.advance(19.7)  # 29.9 s after the push: still inside
        self.assertEqual(self.trigger().status, 202)
        self.clock.advance(0.1)  # 30 s after the push: the window has ended
        self.assertEqual(self.trigger().status, 202)
        self.assertEqual(self.pushed(), [True, False, False, True])

    def test_window_runs_from_last_push_not_last_trigger(self):
        self.trigger()
        self.clock.advance(20)
        self.trigger()  # swallowed: does not extend the window
        self.clock.advance(10)
        self.trigger()  # 30 s after the push, 10 s after the swallowed one
        self.clock.advance(10)
        self.trigger()  # inside the new window
        self.assertEqual(self.pushed(), [True, False, True, False])

    def test_window_is_per_device(self):
        self.trigger(DEV)
        self.trigger(DEV2)
        self.trigger(DEV)
        self.assertEqual(self.pushed(), [True, True, False])

    def test_swallowed_trigger_updates_observation_time(self):
        body = {"device_id": DEV, "signed_transaction": "t"}
        self.relay.state.wall = lambda: 1_800_000_000.0
        self.trigger()
        self.relay.state.wall = lambda: 1_800_000_005.0
        self.clock.advance(5)
        self.assertEqual(self.trigger().status, 202)  # inside the push window
        self.assertEqual(self.pushed(), [True, False])
        r = self.request("POST", "/api/v1/status", body)
        self.assertEqual(r.json["last_trigger_observed_at"], "2027-01-15T08:00:05Z")

    def test_per_minute_429(self):
        self.relay.state.wall = lambda: 1_800_000_000.0
        for i in range(10):
            self.assertEqual(self.trigger().status, 202, i)
            self.clock.advance(1)
        self.relay.state.wall = lambda: 1_800_000_010.0
        r = self.trigger()  # 11th within 60 s
        self.assertEqual(r.status, 429)
        self.assertEqual(r.json, {"error": "rate limited"})
        self.assertEqual(r.headers["retry-after"], "50")  # the first expires at t0+60
        self.assertEqual(self.pushed(), [True] + [False] * 10)
        # Not observed: /status still shows the 10th trigger's time.
        r = self.request("POST", "/api/v1/status", {"device_id": DEV, "signed_transaction": "t"})
        self.assertEqual(r.json["last_trigger_observed_at"], "2027-01-15T08:00:00Z")
        self.assertEqual(self.trigger(DEV2).status, 202)  # other Device IDs unaffected
        self.clock.advance(50)
        r = self.trigger()  # 60 s after the first: it has left the log; window ended too
        self.assertEqual(r.status, 202)
        self.assertEqual(self.pushed()[-1], True)

    def test_unknown_mode_rejected(self):
        with self.assertRaises(ValueError):
            relay_standin.RelayState(window_mode="strict")


class PushWindowLegacy(RelayTestCase):
    """--window-mode legacy: the stand-in's earlier answers (429 inside the window)."""

    relay_kwargs = {"provisioned": [DEV, DEV2], "window_seconds": 30, "per_minute": 10,
                    "window_mode": "legacy"}

    def test_window_429_with_retry_after(self):
        self.assertEqual(self.trigger().status, 202)
        self.clock.advance(10.2)
        r = self.trigger()
        self.assertEqual(r.status, 429)
        self.assertEqual(r.json, {"error": "push window"})
        self.assertEqual(r.headers["retry-after"], "20")  # 19.8 s left, rounded up
        self.clock.advance(19.5)
        r = self.trigger()
        self.assertEqual(r.status, 429)
        self.assertEqual(r.headers["retry-after"], "1")  # 0.3 s left: at least 1
        self.clock.advance(0.3)
        self.assertEqual(self.trigger().status, 202)
        self.assertEqual([e["pushed"] for e in self.relay.state.recorded()],
                         [True, False, False, True])

    def test_window_is_per_device(self):
        self.assertEqual(self.trigger(DEV).status, 202)
        self.assertEqual(self.trigger(DEV2).status, 202)
        self.assertEqual(self.trigger(DEV).status, 429)

    def test_per_minute_limit(self):
        self.relay.state.window_seconds = 0  # isolate the per-minute limit
        for i in range(10):
            self.assertEqual(self.trigger().status, 202, i)
            self.clock.advance(1)
        r = self.trigger()  # 11th within 60 s
        self.assertEqual(r.status, 429)
        self.assertEqual(r.headers["retry-after"], "50")  # the first expires at t0+60
        self.assertEqual(self.trigger(DEV2).status, 202)  # other Device IDs unaffected
        self.clock.advance(50)
        self.assertEqual(self.trigger().status, 202)

    def test_window_counts_toward_per_minute(self):
        # Debounced (window) triggers still pass the limiter and count.
        for _ in range(10):
            self.trigger()
        r = self.trigger()
        self.assertEqual(r.status, 429)
        self.assertEqual(r.json, {"error": "rate limited"})

    def test_status_window_trigger_counts_as_observed(self):
        self.relay.state.wall = lambda: 1_800_000_000.0
        self.trigger()
        self.relay.state.wall = lambda: 1_800_000_005.0
        self.assertEqual(self.trigger().status, 429)  # inside the push window
        r = self.request("POST", "/api/v1/status", {"device_id": DEV, "signed_transaction": "t"})
        self.assertEqual(r.json["last_trigger_observed_at"], "2027-01-15T08:00:05Z")


class LimitsDisabled(RelayTestCase):
    relay_kwargs = {"provisioned": [DEV], "window_seconds": 0, "per_minute": 0}

    def test_no_limits(self):
        for _ in range(25):
            self.assertEqual(self.trigger().status, 202)


class ProvisionAndStatus(RelayTestCase):
    def test_provision_trigger_deprovision(self):
        self.assertEqual(self.trigger().status, 403)
        for token in ("aa01", "bb02"):
            r = self.request("POST", "/api/v1/provision",
                             {"device_id": DEV, "apns_token": token, "transaction_id": "eyJ.x.y"})
            self.assertEqual(r.status, 200)
            self.assertEqual(r.json, {"status": "provisioned"})
        r = self.trigger()
        self.assertEqual(r.status, 202)
        self.assertEqual(r.json["devices_notified"], 2)
        for token in ("aa01", "bb02"):
            r = self.request("DELETE", "/api/v1/provision", {"device_id": DEV, "apns_token": token})
            self.assertEqual(r.status, 200)
            self.assertEqual(r.json, {"status": "deprovisioned"})
        self.clock.advance(31)
        self.assertEqual(self.trigger().status, 403)

    def test_provision_validation(self):
        for body in ({"device_id": DEV, "apns_token": "aa"},
                     {"device_id": "bad", "apns_token": "aa", "transaction_id": "t"},
                     {"device_id": DEV, "apns_token": "", "transaction_id": "t"}):
            self.assertEqual(self.request("POST", "/api/v1/provision", body).status, 400, body)
        self.assertEqual(self.request("DELETE", "/api/v1/provision", {"device_id": DEV}).status, 400)

    def test_status_observed(self):
        self.request("POST", "/api/v1/provision",
                     {"device_id": DEV, "apns_token": "aa", "transaction_id": "t"})
        body = {"device_id": DEV, "signed_transaction": "eyJ.x.y"}
        r = self.request("POST", "/api/v1/status", body)
        self.assertEqual(r.status, 200)
        self.assertIs(r.json["v1_trigger_observed"], False)
        self.assertNotIn("last_trigger_observed_at", r.json)
        self.assertRegex(r.json["checked_at"], RFC3339_RE)
        self.trigger()
        r = self.request("POST", "/api/v1/status", body)
        self.assertIs(r.json["v1_trigger_observed"], True)
        self.assertRegex(r.json["last_trigger_observed_at"], RFC3339_RE)
        self.assertRegex(r.json["checked_at"], RFC3339_RE)

    def test_status_rejected_trigger_not_observed_and_unprovisioned_403(self):
        self.trigger()  # 403: not observed
        r = self.request("POST", "/api/v1/status", {"device_id": DEV, "signed_transaction": "t"})
        self.assertEqual(r.status, 403)
        self.assertEqual(self.request("POST", "/api/v1/status", {"device_id": DEV}).status, 400)


class Faults(RelayTestCase):
    relay_kwargs = {"provisioned": [DEV], "window_seconds": 0, "per_minute": 0}

    def test_status_and_retry_after_verbatim(self):
        self.set_faults([{"status": 503, "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT"}])
        r = self.trigger()
        self.assertEqual(r.status, 503)
        self.assertEqual(r.headers["retry-after"], "Wed, 21 Oct 2015 07:28:00 GMT")
        self.assertEqual(r.json["status"], 503)
        self.assertEqual(self.trigger().status, 202)  # default count is 1

    def test_faulted_trigger_is_not_observed(self):
        self.set_faults([{"status": 500}])
        self.trigger()
        self.assertNotIn(DEV, self.relay.state.observed_at)

    def test_delay(self):
        self.set_faults([{"delay": 0.5}])
        start = time.monotonic()
        r = self.trigger()
        self.assertGreaterEqual(time.monotonic() - start, 0.5)
        self.assertEqual(r.status, 202)  # delay alone: normal answer

    def test_retry_after_on_normal_answer(self):
        self.set_faults([{"retry_after": "3"}])
        r = self.trigger()
        self.assertEqual((r.status, r.headers["retry-after"]), (202, "3"))

    def test_oversized_body(self):
        self.set_faults([{"oversized_body": 5_000_000}, {"status": 502, "oversized_body": 3}])
        r = self.trigger()
        self.assertEqual(r.status, 202)
        self.assertEqual(len(r.body), 5_000_000)
        self.assertEqual(r.headers["content-length"], "5000000")
        self.assertTrue(r.body.startswith(b'{"pad":"'))
        r = self.trigger()
        self.assertEqual((r.status, r.body), (502, b"xxx"))

    def test_redirect(self):
        self.set_faults([{"redirect": "http://127.0.0.1:9/elsewhere"},
                         {"redirect": "https://example.invalid/", "status": 302}])
        r = self.trigger()
        self.assertEqual(r.status, 307)
        self.assertEqual(r.headers["location"], "http://127.0.0.1:9/elsewhere")
        r = self.trigger()
        self.assertEqual(r.status, 302)
        self.assertEqual(r.headers["location"], "https://example.invalid/")

    def test_drop(self):
        self.set_faults([{"drop": True}])
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionResetError)):
            self.trigger()
        self.assertEqual(self.trigger().status, 202)
        entry = self.relay.state.recorded()[0]
        self.assertEqual((entry["status"], entry["fault"]), (None, "drop"))

    def test_count_and_order(self):
        self.set_faults([{"status": 500, "count": 2}, {"status": 429, "retry_after": "1"}])
        self.assertEqual([self.trigger().status for _ in range(4)], [500, 500, 429, 202])

    def test_count_forever(self):
        self.set_faults([{"status": 503, "count": -1}])
        self.assertEqual({self.trigger().status for _ in range(5)}, {503})
        self.assertEqual(len(self.request("GET", "/_control/faults").json), 1)

    def test_for_seconds(self):
        # 404 for a while (a relay deploy behind a proxy), then normal answers again.
        self.set_faults([{"status": 404, "for_seconds": 0.4}])
        self.assertEqual([self.trigger().status for _ in range(3)], [404, 404, 404])
        self.assertEqual(self.request("GET", "/api/v1/health").status, 200)  # trigger path only
        self.clock.advance(0.3)  # the fake clock: slow requests above cannot outlast the fault
        self.assertEqual(self.trigger().status, 404)
        self.clock.advance(0.2)  # 0.5 s after the fault list was set: it has run out
        self.assertEqual(self.trigger().status, 202)
        self.assertEqual(self.request("GET", "/_control/faults").json, [])

    def test_for_seconds_with_count(self):
        self.set_faults([{"status": 503, "for_seconds": 60, "count": 2}])
        self.assertEqual([self.trigger().status for _ in range(3)], [503, 503, 202])

    def test_for_seconds_validation(self):
        for bad in (0, -1, 3601, "5", True):
            r = self.request("POST", "/_control/faults", [{"status": 404, "for_seconds": bad}])
            self.assertEqual(r.status, 400, bad)

    def test_paths(self):
        self.set_faults([{"status": 500, "paths": ["/api/v1/health"]}])
        self.assertEqual(self.trigger().status, 202)  # trigger not affected
        self.assertEqual(self.request("GET", "/api/v1/health").status, 500)
        self.assertEqual(self.request("GET", "/api/v1/health").status, 200)

    def test_default_paths_is_trigger_only(self):
        self.set_faults([{"status": 500}])
        self.assertEqual(self.request("GET", "/api/v1/health").status, 200)
        self.assertEqual(self.trigger().status, 500)

    def test_post_replaces_and_delete_clears(self):
        self.set_faults([{"status": 500, "count": -1}])
        self.set_faults([{"status": 418, "count": -1}])
        self.assertEqual(self.trigger().status, 418)
        r = self.request("DELETE", "/_control/faults")
        self.assertEqual(r.status, 200)
        self.assertEqual(self.trigger().status, 202)

    def test_invalid_faults_rejected(self):
        for bad in ({"status": 500}, [{"status": "500"}], [{"bogus": 1}], [{"count": 0}],
                    [{"drop": "yes"}], [{"delay": -1}], [{"paths": "/api/v1/trigger"}],
                    [{"status": True}], [5]):
            r = self.request("POST", "/_control/faults", bad)
            self.assertEqual(r.status, 400, bad)
        self.assertEqual(self.request("POST", "/_control/faults", b"nope").status, 400)

    def test_fault_name_recorded(self):
        self.set_faults([{"status": 500, "name": "boom"}, {"status": 503, "delay": 0.01}])
        self.trigger()
        self.trigger()
        self.trigger()
        faults = [e["fault"] for e in self.relay.state.recorded()]
        self.assertEqual(faults, ["boom", "status:503+delay:0.01", None])


class RequestLog(RelayTestCase):
    relay_kwargs = {"provisioned": [DEV]}

    def test_every_request_logged_control_excluded(self):
        self.request("GET", "/api/v1/health", headers={"X-Custom-Thing": "v"})
        self.set_faults([{"status": 500, "paths": ["/nowhere"]}])
        self.request("POST", "/api/v1/trigger", {"device_id": DEV})
        self.request("POST", "/api/v1/trigger", b"garbage")
        self.request("GET", "/nowhere?q=1")
        self.request("GET", "/_control/requests")
        lines = self.log_lines()
        self.assertEqual([(e["method"], e["path"], e["status"]) for e in lines], [
            ("GET", "/api/v1/health", 200),
            ("POST", "/api/v1/trigger", 202),
            ("POST", "/api/v1/trigger", 400),
            ("GET", "/nowhere?q=1", 500),
        ])
        first = lines[0]
        self.assertEqual(set(first), {"t", "method", "path", "headers", "body", "status", "fault"})
        self.assertIsInstance(first["t"], float)
        self.assertLess(abs(first["t"] - time.time()), 60)
        self.assertEqual(first["headers"]["x-custom-thing"], "v")
        self.assertTrue(all(k == k.lower() for k in first["headers"]))
        self.assertEqual(json.loads(lines[1]["body"]), {"device_id": DEV})
        self.assertEqual(lines[2]["body"], "garbage")
        self.assertIsNone(lines[1]["fault"])
        # The control endpoint returns the same records.
        r = self.request("GET", "/_control/requests")
        self.assertEqual(r.json, lines)
        self.request("DELETE", "/_control/requests")
        self.assertEqual(self.request("GET", "/_control/requests").json, [])

    def test_pushed_on_trigger_records(self):
        self.relay.state.per_minute = 2
        self.trigger()                                      # 202, push
        self.trigger()                                      # 202 inside the window
        self.trigger()                                      # 429 per minute
        self.trigger(DEV2)                                  # 403
        self.request("POST", "/api/v1/trigger", b"garbage")  # 400
        self.request("GET", "/api/v1/trigger")              # 405
        self.set_faults([{"status": 202}, {"drop": True}])
        self.trigger(DEV2)                                  # fault: 202 but nothing pushed
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionResetError)):
            self.trigger(DEV2)
        self.request("GET", "/api/v1/health")
        lines = self.log_lines()
        self.assertEqual([(e["status"], e.get("pushed")) for e in lines], [
            (202, True), (202, False), (429, False), (403, False), (400, False), (405, False),
            (202, False), (None, False), (200, None),
        ])
        self.assertNotIn("pushed", lines[-1])  # only trigger records carry it
        self.assertEqual(self.request("GET", "/_control/requests").json, lines)

    def test_log_is_flushed_per_request(self):
        self.request("GET", "/api/v1/health")
        self.assertEqual(len(self.log_lines()), 1)  # readable while the server runs


class Loopback(unittest.TestCase):
    def test_is_loopback_host(self):
        for host in ("127.0.0.1", "127.1.2.3", "::1", "localhost"):
            self.assertTrue(relay_standin.is_loopback_host(host), host)
        # Names other than localhost are refused without a DNS lookup.
        for host in ("0.0.0.0", "::", "10.0.0.1", "192.0.2.1", "example.invalid"):
            self.assertFalse(relay_standin.is_loopback_host(host), host)

    def test_in_process_refuses_non_loopback(self):
        with self.assertRaises(ValueError):
            RelayStandin(host="0.0.0.0")


class CliTestCase(unittest.TestCase):
    """Starts the CLI as a subprocess (no tests of its own)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def start(self, *args):
        port_file = os.path.join(self.tmp.name, "port")
        if os.path.exists(port_file):  # left by an earlier start() in the same test
            os.unlink(port_file)
        proc = subprocess.Popen([sys.executable, SCRIPT, "--port", "0", "--port-file", port_file,
                                 *args], stderr=subprocess.PIPE, text=True)
        self.addCleanup(self._reap, proc)
        deadline = time.monotonic() + 10
        while not os.path.exists(port_file):
            self.assertIsNone(proc.poll(), "relay_standin exited early")
            self.assertLess(time.monotonic(), deadline, "no port file")
            time.sleep(0.02)
        with open(port_file) as f:
            return proc, int(f.read())

    @staticmethod
    def _reap(proc):
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()

    @staticmethod
    def post(port, path, obj):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("POST", path, body=json.dumps(obj))
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return resp


class CommandLine(CliTestCase):
    """The CLI as a subprocess: port file, initial state, SIGTERM/SIGINT, host refusal."""

    def test_cli_serves_and_exits_on_sigterm(self):
        log = os.path.join(self.tmp.name, "log.jsonl")
        proc, port = self.start("--log", log, "--provision", DEV, "--window-seconds", "0",
                                "--faults", json.dumps([{"status": 503}]))
        self.assertEqual(self.post(port, "/api/v1/trigger", {"device_id": DEV}).status, 503)
        self.assertEqual(self.post(port, "/api/v1/trigger", {"device_id": DEV}).status, 202)
        self.assertEqual(self.post(port, "/api/v1/trigger", {"device_id": DEV2}).status, 403)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=10), 0)
        with open(log) as f:
            self.assertEqual([json.loads(line)["status"] for line in f], [503, 202, 403])

    def test_cli_window_modes(self):
        for mode_args, statuses, pushed in (
                ((), [202, 202], [True, False]),
                (("--window-mode", "spec"), [202, 202], [True, False]),
                (("--window-mode", "legacy"), [202, 429], [True, False])):
            log = os.path.join(self.tmp.name, f"log-{'-'.join(mode_args) or 'default'}.jsonl")
            proc, port = self.start("--log", log, "--provision", DEV, *mode_args)
            got = [self.post(port, "/api/v1/trigger", {"device_id": DEV}).status for _ in range(2)]
            self.assertEqual(got, statuses, mode_args)
            proc.terminate()
            self.assertEqual(proc.wait(timeout=10), 0)
            with open(log) as f:
                self.assertEqual([json.loads(line)["pushed"] for line in f], pushed, mode_args)

    def test_parse_args_defaults_and_window_mode(self):
        args = relay_standin.parse_args([])
        self.assertEqual((args.window_mode, args.window_seconds, args.per_minute), ("spec", 30.0, 10))
        args = relay_standin.parse_args(["--window-mode", "legacy", "--window-seconds", "0.5",
                                         "--per-minute", "3"])
        self.assertEqual((args.window_mode, args.window_seconds, args.per_minute), ("legacy", 0.5, 3))

    def test_cli_rejects_unknown_window_mode(self):
        proc = subprocess.run([sys.executable, SCRIPT, "--window-mode", "strict"],
                              capture_output=True, text=True, timeout=10)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--window-mode", proc.stderr)

    def test_cli_exits_on_sigint(self):
        proc, port = self.start("--provision-any")
        self.assertEqual(self.post(port, "/api/v1/trigger", {"device_id": DEV2}).status, 202)
        proc.send_signal(signal.SIGINT)
        self.assertEqual(proc.wait(timeout=10), 0)

    def test_cli_refuses_non_loopback(self):
        for host in ("0.0.0.0", "192.0.2.1"):
            proc = subprocess.run([sys.executable, SCRIPT, "--host", host], capture_output=True,
                                  text=True, timeout=10)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("non-loopback", proc.stderr)

    def test_cli_rejects_bad_faults_and_ids(self):
        for args in (["--faults", "[{\"bogus\": 1}]"], ["--faults", "{"], ["--provision", "x"]):
            proc = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                                  timeout=10)
            self.assertEqual(proc.returncode, 2, args)

    def test_port_file_written_atomically_with_bound_port(self):
        proc, port = self.start()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        self.assertEqual(os.listdir(self.tmp.name), ["port"])  # no temp file left behind
        proc.terminate()
        self.assertEqual(proc.wait(timeout=10), 0)


HAS_OPENSSL = shutil.which("openssl") is not None
NO_OPENSSL = "the openssl command is missing (scripts/install-deps installs it)"


class _NamedHTTPS(http.client.HTTPSConnection):
    """https to 127.0.0.1:port that sends SNI and verifies the certificate for ``host`` (a DNS name
    that nothing resolves): what a client that resolved the name to loopback does."""

    def connect(self):
        raw = socket.create_connection(("127.0.0.1", self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)


@unittest.skipUnless(HAS_OPENSSL, NO_OPENSSL)
class Https(unittest.TestCase):
    """https mode with a certificate from a test CA made by Tests/Lab/testca.py."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.pki = testca.make(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.relay = RelayStandin(provision_any=True, window_seconds=0, tls_cert=self.pki["cert"],
                                  tls_key=self.pki["key"]).start()
        self.addCleanup(self.relay.stop)

    def client(self, cafile=None, name=testca.DEFAULT_DNS_NAME, **context):
        ctx = ssl.create_default_context(cafile=cafile or self.pki["ca"])
        for key, value in context.items():
            setattr(ctx, key, value)
        return _NamedHTTPS(name, self.relay.port, context=ctx, timeout=5)

    @staticmethod
    def call(conn, method, path, body=None):
        try:
            conn.request(method, path, body=body)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def test_url_and_context(self):
        self.assertEqual(self.relay.url, f"https://127.0.0.1:{self.relay.port}")
        self.assertEqual(self.relay.server.tls.minimum_version, ssl.TLSVersion.TLSv1_2)

    def test_health_and_trigger_over_tls_recorded(self):
        status, body = self.call(self.client(), "GET", "/api/v1/health")
        self.assertEqual((status, json.loads(body)["status"]), (200, "ok"))
        status, _ = self.call(self.client(), "POST", TRIGGER, json.dumps({"device_id": DEV}))
        self.assertEqual(status, 202)
        self.assertEqual([(r["path"], r["status"], r["pushed"]) for r in self.relay.state.recorded()
                          if r["path"] == TRIGGER], [(TRIGGER, 202, True)])

    def test_keep_alive_over_tls(self):
        conn = self.client()
        try:
            for _ in range(3):
                conn.request("GET", "/api/v1/health")
                resp = conn.getresponse()
                resp.read()
                self.assertEqual(resp.status, 200)
        finally:
            conn.close()
        self.assertEqual(len(self.relay.state.recorded()), 3)

    def test_untrusted_or_wrong_name_fails_and_server_keeps_serving(self):
        other = testca.make(os.path.join(self.tmp.name, "other"))
        with self.assertRaises(ssl.SSLCertVerificationError):
            self.call(self.client(cafile=other["ca"]), "GET", "/api/v1/health")
        with self.assertRaises(ssl.SSLCertVerificationError):
            self.call(self.client(name="other.vaultsync.test"), "GET", "/api/v1/health")
        self.assertEqual(self.call(self.client(), "GET", "/api/v1/health")[0], 200)
        self.assertEqual(self.relay.server.tls_failures, 2)
        self.assertEqual(self.relay.state.recorded()[-1]["status"], 200)
        self.assertEqual(len(self.relay.state.recorded()), 1)  # failed handshakes are not requests

    def test_tls_1_1_refused(self):
        with warnings.catch_warnings(), self.assertRaises(ssl.SSLError):
            warnings.simplefilter("ignore", DeprecationWarning)  # naming TLS 1.1 warns
            self.call(self.client(minimum_version=ssl.TLSVersion.MINIMUM_SUPPORTED,
                                  maximum_version=ssl.TLSVersion.TLSv1_1), "GET", "/api/v1/health")

    def test_plain_http_gets_no_answer(self):
        with self.assertRaises((http.client.HTTPException, OSError)):
            self.call(http.client.HTTPConnection("127.0.0.1", self.relay.port, timeout=5), "GET",
                      "/api/v1/health")
        self.assertEqual(self.relay.state.recorded(), [])

    def test_cert_and_key_go_together(self):
        for kwargs in ({"tls_cert": self.pki["cert"]}, {"tls_key": self.pki["key"]}):
            with self.assertRaises(ValueError):
                RelayStandin(**kwargs)


@unittest.skipUnless(HAS_OPENSSL, NO_OPENSSL)
class HttpsCommandLine(CliTestCase):
    """The CLI in https mode."""

    def setUp(self):
        super().setUp()
        self.pki = testca.make(os.path.join(self.tmp.name, "pki"))

    def test_cli_serves_https(self):
        log = os.path.join(self.tmp.name, "log.jsonl")
        proc, port = self.start("--log", log, "--provision-any", "--tls-cert", self.pki["cert"],
                                "--tls-key", self.pki["key"])
        ctx = ssl.create_default_context(cafile=self.pki["ca"])
        conn = _NamedHTTPS(testca.DEFAULT_DNS_NAME, port, context=ctx, timeout=5)
        conn.request("POST", TRIGGER, body=json.dumps({"device_id": DEV}))
        self.assertEqual(conn.getresponse().status, 202)
        conn.close()
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=10), 0)
        self.assertIn(f"listening on https://127.0.0.1:{port}", proc.stderr.read())
        with open(log) as f:
            self.assertEqual([json.loads(line)["status"] for line in f], [202])

    def test_cli_rejects_half_or_bad_tls_options(self):
        missing = os.path.join(self.tmp.name, "missing.pem")
        for args in (["--tls-cert", self.pki["cert"]], ["--tls-key", self.pki["key"]],
                     ["--tls-cert", missing, "--tls-key", self.pki["key"]],
                     ["--tls-cert", self.pki["ca"], "--tls-key", self.pki["key"]]):
            proc = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                                  timeout=10)
            self.assertEqual(proc.returncode, 2, args)
            self.assertIn("--tls-", proc.stderr, args)


if __name__ == "__main__":
    unittest.main()
