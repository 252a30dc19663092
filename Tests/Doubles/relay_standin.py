#!/usr/bin/env python3
"""VaultSync Cloud Relay stand-in for tests and demos (Python 3 standard library only).

Implements the relay's v1 API (README.md, "Relay answers"; SECURITY.md, "What leaves the server")
under ``/api/v1`` on a loopback ``ThreadingHTTPServer``, plain http or, with ``--tls-cert`` and
``--tls-key``, https (TLS 1.2 or later; the TLS handshake runs in the connection's own thread, and
a failed handshake ends only that connection):

* ``GET  /api/v1/health``     -> 200 ``{"status":"ok","version":"1.3.2-standin"}``
* ``POST /api/v1/trigger``    -> 202 / 400 / 403 / 429 (per-minute limit; push window in legacy mode)
* ``POST /api/v1/provision``  -> 200 ``{"status":"provisioned"}``
* ``DELETE /api/v1/provision``-> 200 ``{"status":"deprovisioned"}``
* ``POST /api/v1/status``     -> 200 ``{"v1_trigger_observed":..., "checked_at":...}``
* anything else               -> 404 (405 for a known path with the wrong method)

Every non-control request is recorded (in memory and, with ``--log``, as one JSON line per
request, flushed at once).  A request is recorded just before its answer is sent, so a client
that has received an answer always finds the matching record.  A record has the fields ``t``
(wall time received), ``method``, ``path`` (with any query), ``headers`` (lower-case names),
``body``, ``status`` (None when the connection was dropped) and ``fault`` (the fault's name or
None); a record for the trigger path also has ``pushed``: True only for a 2xx answer that sent
a push (and so started a new push window), False for every other answer (202 inside the window,
4xx, 429, a fault that replaced the answer, a dropped connection).

Faults can be injected at runtime through ``/_control/faults``; see :class:`Fault` for the
fields.  Control requests (``/_control/...``) are never recorded and never subject to faults.

Choices the relay's API leaves open (documented here so tests can rely on them):

* Trigger checks run in this order: JSON syntax and Device ID format (400), the per-minute
  rate limit (429 with ``Retry-After``), the active subscription (403), then the signal is
  *observed* (what ``/status`` reports), then the push window.  As with the real relay, a trigger
  inside the push window counts as observed but not as a push; 400/403/per-minute-429 do not.
* The push window (``--window-seconds``, default 30, 0 disables) is per Device ID and runs
  from the last trigger that caused a push; a trigger inside it does not extend it.  What a
  trigger inside the window gets depends on ``--window-mode``:

  - ``spec`` (default): 202 ``{"status":"accepted","devices_notified":N}`` and no push, as
    the real relay does.  Outside the window: 202 and a push, which starts a new window.
  - ``legacy``: 429 ``{"error":"push window"}`` with ``Retry-After`` (the remaining whole
    seconds, at least 1): the stand-in's earlier answer, for tests of a relay that refuses
    inside the window.

* The per-minute limit (``--per-minute``, default 10, 0 disables; the relay's 10 triggers a
  minute per Device ID, SECURITY.md "Bounds") is a sliding 60 s log of the triggers that passed
  the limiter, so triggers inside the push window count toward it and the 11th in a minute gets
  429.
* ``devices_notified`` is the number of APNs tokens registered for the Device ID (at least 1;
  ``--provision`` and ``--provision-any`` count as one token).
* ``/status`` for a Device ID without a subscription fails closed with 403.
* The stand-in does not verify StoreKit JWS; any non-empty string is accepted.
* A request body over ``MAX_REQUEST_BODY`` gets 413 with ``Connection: close``, then the rest of
  the body is read and discarded (bounded, see ``LINGER_MAX_BYTES``) before the connection closes.
"""

from __future__ import annotations

import argparse
import http.server
import ipaddress
import json
import math
import os
import re
import signal
import socket
import ssl
import sys
import tempfile
import threading
import time
from collections import deque
from datetime import datetime, timezone
from urllib.parse import urlsplit

VERSION = "1.3.2-standin"
API_PREFIX = "/api/v1"
CONTROL_PREFIX = "/_control/"
TRIGGER_PATH = API_PREFIX + "/trigger"

#: What a trigger inside the push window gets: 202 without a push (spec) or 429 (legacy).
WINDOW_MODES = ("spec", "legacy")

#: Syncthing Device ID as shown to users: 8 groups of 7 base32 characters.
DEVICE_ID_RE = re.compile(r"^[A-Z2-7]{7}(?:-[A-Z2-7]{7}){7}$")

#: Request bodies above this size are refused with 413 (the real relay bounds them too).
MAX_REQUEST_BODY = 1 << 20

#: Lingering close after a refused request body (413, or a body whose framing cannot be read): the
#: answer goes out with ``Connection: close``, then at most this many bytes of the rest of the body are
#: read and thrown away, for at most this many seconds, before the connection is closed. Closing with
#: unread data makes the kernel send a reset, which can fail the client's send of its body
#: (EPIPE/ECONNRESET) before it ever reads the answer.
LINGER_MAX_BYTES = 16 << 20
LINGER_SECONDS = 5.0

#: Seconds a client gets to finish the TLS handshake (https mode).
TLS_HANDSHAKE_TIMEOUT = 10.0

#: Placeholder token for devices provisioned from the command line or by --provision-any.
CLI_TOKEN = "standin-cli-token"

# Fields a fault may carry, with the JSON types accepted for each.
_FAULT_FIELDS = {
    "name": (str,),
    "status": (int,),
    "delay": (int, float),
    "retry_after": (str,),
    "oversized_body": (int,),
    "redirect": (str,),
    "drop": (bool,),
    "count": (int,),
    "for_seconds": (int, float),
    "paths": (list,),
}


def rfc3339(ts: float) -> str:
    """Format a Unix timestamp as RFC 3339 UTC with whole seconds, e.g. ``2026-07-12T10:00:00Z``."""
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_device_id(value: object) -> bool:
    """Return True if *value* looks like a Syncthing Device ID (format only, no check digits)."""
    return isinstance(value, str) and DEVICE_ID_RE.match(value) is not None


def is_loopback_host(host: str) -> bool:
    """Return True if *host* is a loopback IP literal or ``localhost``.

    Names are deliberately not resolved, so checking a host never causes a DNS query.
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class FaultError(ValueError):
    """A fault description is malformed."""


class Fault:
    """One injected fault.

    JSON fields (all optional):

    ``status``         answer this status with a small JSON body (no normal processing).
    ``delay``          seconds to sleep before answering (alone: a slow but normal answer).
    ``retry_after``    send this ``Retry-After`` header verbatim.
    ``oversized_body`` send a body of exactly this many bytes (alone: normal status, huge body).
    ``redirect``       answer with ``Location: <url>`` and ``status`` (default 307).
    ``drop``           close the connection without sending any response.
    ``count``          how many matching requests it applies to (default 1, -1 = forever; -1 by
                       default with ``for_seconds``).
    ``for_seconds``    apply to every matching request for this many seconds after the fault list was
                       set (0 < s <= 3600), then drop out (e.g. 404 for a minute: a relay deploy
                       behind a proxy). With ``count`` too, whichever runs out first ends it.
    ``paths``          request paths it applies to (default ``["/api/v1/trigger"]``).
    ``name``           label recorded in the request log (default derived from the fields).
    """

    def __init__(self, spec: dict, now: float | None = None):
        """*now*: the relay's monotonic clock when the fault list is set (``for_seconds`` runs from it)."""
        if not isinstance(spec, dict):
            raise FaultError("each fault must be a JSON object")
        for key, value in spec.items():
            if key not in _FAULT_FIELDS:
                raise FaultError(f"unknown fault field {key!r}")
            # bool is an int subclass; only "drop" may be a bool.
            if not isinstance(value, _FAULT_FIELDS[key]) or (
                isinstance(value, bool) and key != "drop"
            ):
                raise FaultError(f"fault field {key!r} has the wrong type")
        self.status = spec.get("status")
        self.delay = float(spec.get("delay", 0))
        self.retry_after = spec.get("retry_after")
        self.oversized_body = spec.get("oversized_body")
        self.redirect = spec.get("redirect")
        self.drop = bool(spec.get("drop", False))
        self.for_seconds = spec.get("for_seconds")
        self.count = spec.get("count", 1 if self.for_seconds is None else -1)
        if self.for_seconds is not None and not 0 < self.for_seconds <= 3600:
            raise FaultError("for_seconds must be > 0 and <= 3600")
        #: Monotonic time after which the fault no longer applies (None: never expires).
        if now is None:
            now = time.monotonic()
        self.expires = None if self.for_seconds is None else now + self.for_seconds
        self.paths = spec.get("paths", [TRIGGER_PATH])
        if self.status is not None and not 100 <= self.status <= 599:
            raise FaultError("status must be 100..599")
        if self.delay < 0 or self.delay > 3600:
            raise FaultError("delay must be 0..3600 seconds")
        if self.oversized_body is not None and self.oversized_body < 0:
            raise FaultError("oversized_body must be >= 0")
        if self.count == 0 or self.count < -1:
            raise FaultError("count must be positive or -1")
        if not all(isinstance(p, str) for p in self.paths):
            raise FaultError("paths must be a list of strings")
        if self.redirect is not None and self.status is None:
            self.status = 307
        if self.retry_after is not None and ("\r" in self.retry_after or "\n" in self.retry_after):
            raise FaultError("retry_after must not contain line breaks")
        self.name = spec.get("name") or self._default_name()
        self._spec = dict(spec)

    def _default_name(self) -> str:
        parts = []
        if self.drop:
            parts.append("drop")
        if self.redirect is not None:
            parts.append(f"redirect:{self.status}")
        elif self.status is not None:
            parts.append(f"status:{self.status}")
        if self.delay:
            parts.append(f"delay:{self.delay:g}")
        if self.for_seconds is not None:
            parts.append(f"for:{self.for_seconds:g}s")
        if self.retry_after is not None:
            parts.append("retry_after")
        if self.oversized_body is not None:
            parts.append(f"oversized_body:{self.oversized_body}")
        return "+".join(parts) or "noop"

    @property
    def replaces_answer(self) -> bool:
        """True if the normal handler must not run (the fault supplies the whole answer)."""
        return self.drop or self.status is not None

    def to_json(self) -> dict:
        """The fault as given, with the remaining count."""
        out = dict(self._spec)
        out["count"] = self.count
        out["name"] = self.name
        return out


class RelayState:
    """Provisioning, rate-limit, observation, fault and request-log state (thread-safe)."""

    def __init__(self, *, provision_any=False, provisioned=(), window_seconds=30.0,
                 per_minute=10, window_mode="spec", log_path=None, clock=time.monotonic,
                 wall=time.time):
        if window_mode not in WINDOW_MODES:
            raise ValueError(f"window_mode must be one of {WINDOW_MODES}, not {window_mode!r}")
        self.lock = threading.Lock()
        self.provision_any = provision_any
        self.window_mode = window_mode
        self.window_seconds = float(window_seconds)
        self.per_minute = int(per_minute)
        self.clock = clock
        self.wall = wall
        self.tokens: dict[str, set[str]] = {d: {CLI_TOKEN} for d in provisioned}
        self.last_push: dict[str, float] = {}          # monotonic time of the last push
        self.recent: dict[str, deque] = {}              # monotonic times for the per-minute log
        self.observed_at: dict[str, float] = {}         # wall time of the last observed signal
        self.faults: list[Fault] = []
        self.requests: list[dict] = []
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None

    def close(self):
        """Close the request log file."""
        with self.lock:
            if self._log:
                self._log.close()
                self._log = None

    # -- faults ---------------------------------------------------------------------------

    def set_faults(self, specs) -> list[Fault]:
        """Replace the fault queue with *specs* (a list of fault objects); raises FaultError."""
        if not isinstance(specs, list):
            raise FaultError("faults must be a JSON list")
        now = self.clock()
        faults = [Fault(s, now) for s in specs]
        with self.lock:
            self.faults = faults
        return faults

    def take_fault(self, path: str) -> Fault | None:
        """Return the first queued fault that applies to *path* and consume one use of it.

        Faults whose ``for_seconds`` ran out are dropped first."""
        with self.lock:
            now = self.clock()
            self.faults = [f for f in self.faults if f.expires is None or now < f.expires]
            for i, fault in enumerate(self.faults):
                if path in fault.paths:
                    if fault.count > 0:
                        fault.count -= 1
                        if fault.count == 0:
                            del self.faults[i]
                    return fault
        return None

    # -- provisioning -----------------------------------------------------------------------

    def is_provisioned(self, device_id: str) -> bool:
        """True if *device_id* has an active subscription (caller holds no lock)."""
        with self.lock:
            return self.provision_any or bool(self.tokens.get(device_id))

    def provision(self, device_id: str, token: str):
        """Register APNs *token* for *device_id*."""
        with self.lock:
            self.tokens.setdefault(device_id, set()).add(token)

    def deprovision(self, device_id: str, token: str):
        """Remove APNs *token*; the device loses its subscription when no token is left."""
        with self.lock:
            tokens = self.tokens.get(device_id)
            if tokens is not None:
                tokens.discard(token)
                if not tokens:
                    del self.tokens[device_id]

    # -- trigger ----------------------------------------------------------------------------

    def trigger(self, device_id: str) -> tuple[int, dict, dict, bool]:
        """Apply rate limit, subscription, observation and push window to one valid trigger.

        Returns ``(status, json_body, extra_headers, pushed)``.
        """
        with self.lock:
            now = self.clock()
            if self.per_minute > 0:
                log = self.recent.setdefault(device_id, deque())
                while log and now - log[0] >= 60.0:
                    log.popleft()
                if len(log) >= self.per_minute:
                    wait = 60.0 - (now - log[0])
                    headers = {"Retry-After": _whole_seconds(wait)}
                    return 429, {"error": "rate limited"}, headers, False
                log.append(now)
            tokens = self.tokens.get(device_id)
            if not tokens and not self.provision_any:
                return 403, {"error": "no active subscription"}, {}, False
            self.observed_at[device_id] = self.wall()
            accepted = {"status": "accepted", "devices_notified": max(1, len(tokens or ()))}
            last = self.last_push.get(device_id)
            if self.window_seconds > 0 and last is not None and now - last < self.window_seconds:
                if self.window_mode == "spec":
                    return 202, accepted, {}, False
                wait = self.window_seconds - (now - last)
                return 429, {"error": "push window"}, {"Retry-After": _whole_seconds(wait)}, False
            self.last_push[device_id] = now
            return 202, accepted, {}, True

    def status_of(self, device_id: str) -> dict:
        """The ``/status`` answer for *device_id*."""
        with self.lock:
            body = {"v1_trigger_observed": device_id in self.observed_at}
            if device_id in self.observed_at:
                body["last_trigger_observed_at"] = rfc3339(self.observed_at[device_id])
        body["checked_at"] = rfc3339(self.wall())
        return body

    # -- request log --------------------------------------------------------------------------

    def record(self, entry: dict):
        """Append one request record to memory and to the log file (flushed)."""
        line = json.dumps(entry, sort_keys=True)
        with self.lock:
            self.requests.append(entry)
            if self._log:
                self._log.write(line + "\n")
                self._log.flush()

    def recorded(self) -> list[dict]:
        """A copy of all recorded requests."""
        with self.lock:
            return list(self.requests)


def _whole_seconds(seconds: float) -> str:
    """Retry-After value: remaining whole seconds, rounded up, at least 1."""
    return str(max(1, math.ceil(seconds - 1e-9)))


class _BadRequest(Exception):
    """Raised by body validation; carries the 400 message."""


class RelayHandler(http.server.BaseHTTPRequestHandler):
    """Request handler; the server object carries ``state`` (a :class:`RelayState`)."""

    protocol_version = "HTTP/1.1"
    server_version = "VaultSyncRelayStandin/" + VERSION

    def version_string(self):
        return self.server_version

    # Routes: path -> {method: handler name}
    ROUTES = {
        API_PREFIX + "/health": {"GET": "_health"},
        TRIGGER_PATH: {"POST": "_trigger"},
        API_PREFIX + "/provision": {"POST": "_provision", "DELETE": "_deprovision"},
        API_PREFIX + "/status": {"POST": "_status"},
    }

    @property
    def state(self) -> RelayState:
        return self.server.state

    def log_message(self, fmt, *args):  # quiet: the JSON log is the record
        if getattr(self.server, "verbose", False):
            super().log_message(fmt, *args)

    # Every method funnels into _dispatch.
    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    # -- plumbing ---------------------------------------------------------------------------

    #: Set when the request body is refused: the declared bytes not read yet, or -1 when unknown
    #: (chunked, or framing that cannot be parsed). finish() reads and discards them (lingering close).
    _refused_body: int | None = None

    def _read_body(self) -> bytes:
        """Read the request body (Content-Length or chunked); raises _BadRequest when too big."""
        self._refused_body = -1  # until the body has been read, or its unread size is known
        body = self._read_body_framed()
        self._refused_body = None
        return body

    def _read_body_framed(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks, total = [], 0
            while True:
                size_line = self.rfile.readline(1024)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                total += size
                if total > MAX_REQUEST_BODY:
                    self.close_connection = True
                    raise _BadRequest("body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(1024)
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BODY:
            self.close_connection = True
            self._refused_body = length
            raise _BadRequest("body too large")
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status: int, body: bytes, headers: dict | None = None,
              content_type: str = "application/json"):
        """Send a complete response; tolerates a client that has gone away."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                view = memoryview(body)
                for off in range(0, len(body), 65536):
                    self.wfile.write(view[off:off + 65536])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def finish(self):
        if self._refused_body is not None:
            self._linger(self._refused_body)
        super().finish()

    def _linger(self, unread: int):
        """Read and discard what is left of a refused body (*unread* bytes, -1: up to EOF), bounded
        by LINGER_MAX_BYTES and LINGER_SECONDS, so that closing sends FIN rather than a reset."""
        limit = LINGER_MAX_BYTES if unread < 0 else min(unread, LINGER_MAX_BYTES)
        deadline = time.monotonic() + LINGER_SECONDS
        try:
            while limit > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.connection.settimeout(left)
                data = self.rfile.read1(min(limit, 65536))
                if not data:
                    break
                limit -= len(data)
        except OSError:  # timeout, reset, TLS error: stop lingering and close
            pass

    @staticmethod
    def _json(obj) -> bytes:
        return json.dumps(obj).encode()

    def _drop(self):
        """Close the connection without a response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- dispatch ---------------------------------------------------------------------------

    def _dispatch(self):
        received = time.time()
        path = urlsplit(self.path).path
        body_error = None  # (status, message) when the request body could not be read
        try:
            raw = self._read_body()
        except _BadRequest as exc:
            raw, body_error = b"", (413, str(exc))
        except ValueError:
            raw, body_error = b"", (400, "malformed request body")
            self.close_connection = True

        if path.startswith(CONTROL_PREFIX):
            self._control(path, raw)
            return

        fault = self.state.take_fault(path)
        entry = {
            "t": received,
            "method": self.command,
            "path": self.path,
            "headers": _lower_headers(self.headers),
            "body": raw.decode("utf-8", errors="replace"),
            "status": None,
            "fault": fault.name if fault else None,
        }
        self._pushed = False  # set by _trigger when the state counted a push
        try:
            answer = self._answer(path, raw, body_error, fault)
            entry["status"] = answer[0] if answer else None
        finally:
            if path == TRIGGER_PATH:
                entry["pushed"] = self._pushed
            # Record before sending, so a client that has the answer also finds the record.
            self.state.record(entry)
        if answer is None:
            self._drop()
        else:
            self._send(*answer)

    def _answer(self, path: str, raw: bytes, body_error, fault: Fault | None):
        """Decide the response, normal or faulted (sleeping for a delay fault).

        Returns ``(status, body bytes, headers)``, or None to drop the connection.
        """
        if fault and fault.delay:
            time.sleep(fault.delay)
        if fault and fault.drop:
            return None
        if fault and fault.replaces_answer:
            headers = {}
            if fault.redirect is not None:
                headers["Location"] = fault.redirect
            if fault.retry_after is not None:
                headers["Retry-After"] = fault.retry_after
            body = self._json({"error": "injected fault", "status": fault.status})
            if fault.oversized_body is not None:
                body = _padding(fault.oversized_body)
            return fault.status, body, headers

        if body_error:
            status, obj, headers = body_error[0], {"error": body_error[1]}, {}
        else:
            status, obj, headers = self._route(path, raw)
        body = self._json(obj)
        if fault is not None:  # delay / retry_after / oversized_body on a normal answer
            if fault.retry_after is not None:
                headers["Retry-After"] = fault.retry_after
            if fault.oversized_body is not None:
                body = _padding(fault.oversized_body)
        return status, body, headers

    def _route(self, path: str, raw: bytes) -> tuple[int, dict, dict]:
        methods = self.ROUTES.get(path)
        if methods is None:
            return 404, {"error": "not found"}, {}
        name = methods.get(self.command)
        if name is None:
            return 405, {"error": "method not allowed"}, {"Allow": ", ".join(methods)}
        try:
            return getattr(self, name)(raw)
        except _BadRequest as exc:
            return 400, {"error": str(exc)}, {}

    # -- API endpoints ------------------------------------------------------------------------

    @staticmethod
    def _fields(raw: bytes, *names: str) -> dict:
        """Parse a JSON object body and require non-empty string fields *names*."""
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise _BadRequest("invalid JSON") from None
        if not isinstance(obj, dict):
            raise _BadRequest("body must be a JSON object")
        for name in names:
            if not isinstance(obj.get(name), str) or not obj[name]:
                raise _BadRequest(f"missing or invalid {name}")
        if "device_id" in names and not is_device_id(obj["device_id"]):
            raise _BadRequest("invalid device_id")
        return obj

    def _health(self, raw):
        return 200, {"status": "ok", "version": VERSION}, {}

    def _trigger(self, raw):
        obj = self._fields(raw, "device_id")
        status, body, headers, self._pushed = self.state.trigger(obj["device_id"])
        return status, body, headers

    def _provision(self, raw):
        obj = self._fields(raw, "device_id", "apns_token", "transaction_id")
        self.state.provision(obj["device_id"], obj["apns_token"])
        return 200, {"status": "provisioned"}, {}

    def _deprovision(self, raw):
        obj = self._fields(raw, "device_id", "apns_token")
        self.state.deprovision(obj["device_id"], obj["apns_token"])
        return 200, {"status": "deprovisioned"}, {}

    def _status(self, raw):
        obj = self._fields(raw, "device_id", "signed_transaction")
        if not self.state.is_provisioned(obj["device_id"]):
            return 403, {"error": "no active subscription"}, {}
        return 200, self.state.status_of(obj["device_id"]), {}

    # -- control endpoints (not recorded, never faulted) ------------------------------------

    def _control(self, path: str, raw: bytes):
        state = self.state
        if path == "/_control/faults" and self.command == "POST":
            try:
                specs = json.loads(raw.decode("utf-8"))
                faults = state.set_faults(specs)
            except (UnicodeDecodeError, json.JSONDecodeError, FaultError) as exc:
                self._send(400, self._json({"error": str(exc)}))
                return
            self._send(200, self._json([f.to_json() for f in faults]))
        elif path == "/_control/faults" and self.command == "DELETE":
            state.set_faults([])
            self._send(200, self._json([]))
        elif path == "/_control/faults" and self.command == "GET":
            with state.lock:
                current = [f.to_json() for f in state.faults]
            self._send(200, self._json(current))
        elif path == "/_control/requests" and self.command == "GET":
            self._send(200, self._json(state.recorded()))
        elif path == "/_control/requests" and self.command == "DELETE":
            with state.lock:
                state.requests.clear()
            self._send(200, self._json([]))
        else:
            self._send(404, self._json({"error": "unknown control endpoint"}))


def _lower_headers(headers) -> dict:
    """Header map with lower-cased names; repeated headers are joined with ', '."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _padding(size: int) -> bytes:
    """A body of exactly *size* bytes (valid JSON when size >= 10)."""
    if size < 10:
        return b"x" * size
    return b'{"pad":"' + b"x" * (size - 10) + b'"}'


def tls_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """A server context for https mode: this certificate chain and key, TLS 1.2 or later.

    Raises ``OSError`` or ``ssl.SSLError`` when the files are missing or do not match.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    return context


class RelayServer(http.server.ThreadingHTTPServer):
    """ThreadingHTTPServer carrying a :class:`RelayState`; https when given an SSL context."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, state: RelayState, verbose=False,
                 tls: ssl.SSLContext | None = None):
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.address_family = family
        self.state = state
        self.verbose = verbose
        self.tls = tls
        self.tls_failures = 0  # handshakes that failed (e.g. a client that does not trust the cert)
        super().__init__(address, RelayHandler)

    def finish_request(self, request, client_address):
        """In https mode, run the handshake here (the connection's thread), then serve as usual."""
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        try:
            request.settimeout(TLS_HANDSHAKE_TIMEOUT)
            conn = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            with self.state.lock:
                self.tls_failures += 1
            if self.verbose:
                print(f"relay_standin: TLS handshake failed: {exc}", file=sys.stderr, flush=True)
            return
        try:
            conn.settimeout(None)
            super().finish_request(conn, client_address)
        finally:
            conn.close()


class RelayStandin:
    """In-process relay stand-in: ``with RelayStandin(provision_any=True) as r: r.url``.

    Keyword arguments are those of :class:`RelayState` plus ``host``, ``port``, ``faults`` and,
    for https, ``tls_cert`` and ``tls_key`` (PEM files; both or neither).
    """

    def __init__(self, host="127.0.0.1", port=0, faults=None, verbose=False, tls_cert=None,
                 tls_key=None, **state_kwargs):
        if not is_loopback_host(host):
            raise ValueError(f"refusing to bind non-loopback host {host!r}")
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        tls = tls_context(tls_cert, tls_key) if tls_cert is not None else None
        self.state = RelayState(**state_kwargs)
        if faults:
            self.state.set_faults(faults)
        if host == "localhost":
            host = "127.0.0.1"
        try:
            self.server = RelayServer((host, port), self.state, verbose=verbose, tls=tls)
        except BaseException:
            self.state.close()
            raise
        self._thread = None

    @property
    def port(self) -> int:
        """The bound TCP port."""
        return self.server.server_address[1]

    @property
    def scheme(self) -> str:
        """``https`` with a certificate, else ``http``."""
        return "http" if self.server.tls is None else "https"

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:PORT`` (append ``/api/v1/...``).

        In https mode the certificate names a DNS name, not this address: clients connect to the
        address but verify the name (see Tests/Lab/testca.py).
        """
        host = self.server.server_address[0]
        host = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{host}:{self.port}"

    def start(self) -> "RelayStandin":
        """Serve in a background thread."""
        # A short poll interval keeps stop() (and so each test's teardown) fast.
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.1,),
                                        name="relay-standin", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """Stop serving and close the socket and the log."""
        if self._thread:
            self.server.shutdown()
            self._thread.join()
            self._thread = None
        self.server.server_close()
        self.state.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _write_atomically(path: str, text: str):
    """Write *text* to *path* via a temporary file in the same directory and rename."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".port-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def parse_args(argv=None):
    """Command-line options."""
    p = argparse.ArgumentParser(description="VaultSync Cloud Relay v1 stand-in (loopback only).")
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="TCP port, 0 = ephemeral (default 0)")
    p.add_argument("--port-file", help="write the bound port here (atomically) once listening")
    p.add_argument("--log", help="append one JSON line per request to this file")
    p.add_argument("--provision-any", action="store_true",
                   help="treat every well-formed Device ID as having an active subscription")
    p.add_argument("--provision", action="append", default=[], metavar="DEVICE_ID",
                   help="Device ID with an active subscription (repeatable)")
    p.add_argument("--window-seconds", type=float, default=30.0,
                   help="per-Device-ID push window in seconds, 0 disables (default 30)")
    p.add_argument("--per-minute", type=int, default=10,
                   help="triggers per minute per Device ID, 0 disables (default 10)")
    p.add_argument("--window-mode", choices=WINDOW_MODES, default="spec",
                   help="a trigger inside the push window gets 202 without a push (spec, the "
                        "default) or 429 with Retry-After (legacy)")
    p.add_argument("--faults", help="initial fault queue as a JSON list")
    p.add_argument("--tls-cert", metavar="PEM",
                   help="serve https (TLS 1.2+) with this certificate chain; needs --tls-key")
    p.add_argument("--tls-key", metavar="PEM", help="the private key for --tls-cert")
    p.add_argument("--verbose", action="store_true", help="log each request to stderr")
    return p.parse_args(argv)


def main(argv=None) -> int:
    """CLI entry point; returns the exit status."""
    args = parse_args(argv)
    if not is_loopback_host(args.host):
        print(f"relay_standin: refusing to bind non-loopback host {args.host!r}", file=sys.stderr)
        return 2
    for dev in args.provision:
        if not is_device_id(dev):
            print(f"relay_standin: --provision: not a Device ID: {dev!r}", file=sys.stderr)
            return 2
    if (args.tls_cert is None) != (args.tls_key is None):
        print("relay_standin: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    for option, path in (("--tls-cert", args.tls_cert), ("--tls-key", args.tls_key)):
        if path is not None and not os.path.isfile(path):
            print(f"relay_standin: {option}: no such file", file=sys.stderr)
            return 2
    faults = None
    if args.faults:
        try:
            faults = json.loads(args.faults)  # validated by RelayStandin below
        except json.JSONDecodeError as exc:
            print(f"relay_standin: --faults: {exc}", file=sys.stderr)
            return 2
    try:
        relay = RelayStandin(host=args.host, port=args.port, faults=faults, verbose=args.verbose,
                             provision_any=args.provision_any, provisioned=args.provision,
                             window_seconds=args.window_seconds, per_minute=args.per_minute,
                             window_mode=args.window_mode, log_path=args.log,
                             tls_cert=args.tls_cert, tls_key=args.tls_key)
    except FaultError as exc:
        print(f"relay_standin: --faults: {exc}", file=sys.stderr)
        return 2
    except ssl.SSLError as exc:
        print(f"relay_standin: --tls-cert/--tls-key: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"relay_standin: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1

    def _stop(signum, frame):
        # shutdown() blocks until serve_forever returns, so call it from another thread.
        threading.Thread(target=relay.server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    if args.port_file:
        _write_atomically(args.port_file, f"{relay.port}\n")
    print(f"relay_standin: listening on {relay.url}", file=sys.stderr, flush=True)
    try:
        relay.server.serve_forever()
    finally:
        relay.server.server_close()
        relay.state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
