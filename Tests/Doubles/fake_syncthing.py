#!/usr/bin/env python3
"""A scriptable fake of Syncthing 1.19's REST API, for fault-injection tests (Python 3 standard library only).

Real Syncthing cannot be made to send a 20 MiB event body, cut a chunked body after its 200, answer garbage or
answer a long poll at once on demand. This fake can. It serves, on loopback only:

* ``GET /rest/system/status``  -> ``{"myID", "startTime", "uptime", ...}`` (startTime: RFC 3339, whole seconds)
* ``GET /rest/events?events=MASK&since=N&limit=L&timeout=T``: the semantics measured on 1.19.2
  (docs/syncthing-api.md: The event filter; Long-poll and timeouts; Event ids, gaps and the buffer; Restarts):

  - each distinct event mask is one subscription with its own id counter starting at 1; a filtered subscription
    is created by the first request with its mask and holds no history; the default subscription (no
    ``events=``) exists from the start and also carries ``Starting``/``StartupComplete``;
  - the 200 and its headers (``Transfer-Encoding: chunked``, no Content-Length) are flushed at once, then the
    request is held until an event with ``id > since`` exists or ``timeout`` seconds pass (``timeout``: whole
    seconds, ``Atoi``; negative or unparsable -> 60);
  - ``limit=L`` (L > 0) keeps the *last* L events after ``since``, so ``since=0&limit=1`` is the newest event;
  - a negative ``since`` returns 1000 entries padded with ``{"id":0,...,"type":"Unknown"}`` placeholders;
  - 1000 events per subscription are buffered; older ones are dropped (a gap in ids);
  - the body is pretty-printed JSON (2-space indent).
* ``GET /rest/config/devices``, ``GET /rest/config/folders``, ``GET /rest/db/completion?device=D&folder=F``
  (400 for a malformed Device ID, 404 ``no such folder`` / ``folder is paused``; all needs 0 unless set).
* ``GET /rest/system/connections``: the server itself and the peer, both ``connected: false`` (as for a phone that
  is offline; 1.19 lists the local device too: docs/syncthing-api.md, Completion and connections).

Every ``/rest`` request needs ``X-API-Key`` (header names are case-insensitive), else 403 ``CSRF Error``
(text/plain), as with no GUI password. A ``Host`` that is not a loopback name gives 403 ``Host check error``.
Responses that pass the host check carry ``X-Syncthing-Id`` and ``X-Syncthing-Version``, as in 1.19.

Control API (never logged, never faulted, no key needed; JSON bodies):

* ``POST /_control/events``: one event object or a list, e.g. ``{"type": "LocalIndexUpdated", "folder": "vault"}``.
  ``type`` is required; every other field goes into ``data`` over the type's defaults (LocalIndexUpdated:
  ``folder, items, filenames, sequence, version``; FolderCompletion: ``completion, device (the peer), folder,
  globalBytes, globalItems, needBytes, needDeletes, needItems, sequence``). Each event gets the next id of every
  subscription whose mask matches it. Answer: ``[{"globalID": g, "ids": {"<mask>": id, ...}}]`` (``"*"`` is the
  default subscription).
* ``POST /_control/skip``: ``{"count": N}``: the next event of every subscription gets an id N higher (a gap, as
  when the 64-slot channel drops events: docs/syncthing-api.md, Event ids, gaps and the buffer).
* ``POST /_control/restart``: ``{"inflight": "empty"|"cut"|"hold", "down_seconds": S}``: a new ``startTime``
  (always different from the last, even within one second), every subscription gone (ids start at 1 again).
  In-flight long polls are answered ``[]`` (``empty``, a clean shutdown; the default), cut off after their 200
  headers (``cut``, a killed worker), or left waiting on their dead subscription (``hold``). With
  ``down_seconds`` > 0 the listening socket is also closed for that long (connections are refused) and
  ``inflight`` defaults to ``cut``. Either way every connection open at the restart is closed (after the answer a
  held poll gets), as a real restart's exiting process closes them.
* ``POST /_control/faults``: a JSON list that replaces the fault queue; ``DELETE`` clears it, ``GET`` shows it.
  Fields of one fault:

  ``kind``     ``oversized`` (a complete 200 body of ``bytes`` bytes, default 20 MiB, valid JSON),
               ``cut`` (200, ``bytes`` bytes of a JSON array (default 40), then the connection closes without
               the final chunk), ``malformed`` (200, a complete body that is not a valid event array; ``body``
               overrides it), ``early_empty`` (``[]`` at once, ignoring ``timeout``), ``status`` (answer
               ``status`` with ``body``, default ``CSRF Error`` for 403, ``Not Authorized`` for 401), ``hang``
               (200 headers, then nothing for ``seconds`` (default: until the client goes away); with
               ``"headers": false`` not even the headers), ``drop`` (close the connection without an answer),
               ``raw`` (200 with ``body`` as given).
  ``count``    how many requests it applies to (default 1; -1 = forever).
  ``match``    for ``/rest/events``: ``poll`` (a request that is not the head query), ``head`` (``since=0&limit=1``)
               or ``any`` (default).
  ``paths``    request paths it applies to (default ``["/rest/events"]``).
  ``delay``    seconds to wait before the fault's answer.
  ``name``     label for the request log (default: ``kind``).

  A fault is taken by the next matching request when it arrives; a fault that answers after a 200 (everything but
  ``status``, ``drop`` and a header-less ``hang``) is also taken by a long poll already being held, so
  ``oversized``/``cut``/``malformed``/``early_empty`` can answer the poll the client is waiting on right now.
* ``POST /_control/generate``: ``{"rate": R, "names": K, "seconds": S, "type": T, ...}``: emits events at a steady
  ``R`` per second (spread over 5 ms ticks; replaces a running generator) until ``DELETE`` or for ``S`` seconds
  (default: until stopped). ``type`` defaults to ``LocalIndexUpdated``; ``names`` gives each event a ``filenames``
  list of ``K`` names (``items`` follows); other fields go into ``data`` as with ``/_control/events``. ``GET`` and
  ``DELETE`` answer ``{"running", "rate", "emitted"}`` (``DELETE`` after stopping it). For CPU benchmarks of the
  client at a known event rate (bench/run eventrate).
* ``POST /_control/completion``: ``{"device": D, "folder": F, "needItems": …, "needBytes": …, "needDeletes": …}``.
* ``POST /_control/apikey``: ``{"api_key": K}`` replaces the key Syncthing accepts.
* ``GET /_control/state``: ids, startTime, subscriptions, waiting polls, faults, request count.
* ``GET /_control/requests``: the request log (``DELETE`` clears the in-memory copy).

Status-only mode (``--status-only``): the status endpoint alone, for tests that only ask whether Syncthing
answers (``FakeSyncthingStatus`` in Tests/NotifyTestSupport/FakeSyncthingStatus.swift, the ``--healthcheck`` tests).
``GET /rest/system/status`` answers 200 with just ``{"myID", "startTime"}``: myID ``AAAAAAA-BBBBBBB-…-HHHHHHH``
unless ``--device-id`` says otherwise, startTime always ``2024-01-01T00:00:00Z``. A missing or wrong key gets 403
``CSRF Error`` as above; every other path, ``/_control/`` included, is 404 with an empty body whatever the key.
``--api-key`` is required in this mode.

Command line::

    fake_syncthing.py --port 0 --port-file F --api-key K --device-id ID [--peer-id ID] [--folders vault,notes]
                      [--log F] [--listen-on-signal] [--print-port]
    fake_syncthing.py --status-only --api-key K --print-port [--device-id ID]

``--log F`` writes one JSON line per ``/rest`` request, flushed at once, before its answer is sent:
``{"t", "method", "path", "route", "query", "status", "fault"}`` (``fault`` names a fault taken when the request
arrived; one taken later by a held poll shows only in ``/_control/faults``). ``--listen-on-signal`` binds the port and writes
the port file at once but accepts connections (refused until then) only after SIGUSR1: "Syncthing is not up
yet". Without it the port file is written once the port accepts connections. ``--print-port`` prints the port on a
line of its own on stdout when the port file would be written (with or without ``--port-file``).
SIGTERM/SIGINT: exit 0.
"""

from __future__ import annotations

import argparse
import http.server
import ipaddress
import json
import os
import re
import select
import signal
import socket
import sys
import tempfile
import threading
import time
from collections import deque
from datetime import datetime, timezone
from urllib.parse import parse_qsl, urlsplit

VERSION = "v1.19.2-fake"
BUFFER_SIZE = 1000  # EventSubBufferSize
DEFAULT_TIMEOUT = 60
DEVICE_ID_RE = re.compile(r"^[A-Z2-7]{7}(?:-[A-Z2-7]{7}){7}$")
DEFAULT_DEVICE = "FAKEAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
DEFAULT_PEER = "PEERAAA-2222222-3333333-4444444-5555555-6666666-7777777-ZZZZZZZ"
STATUS_ONLY_DEVICE = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
# Fixed, so that a test may compare it; the status-only mode has no restarts to change it.
STATUS_ONLY_START_TIME = "2024-01-01T00:00:00Z"
MIB = 1 << 20

#: Event types Syncthing 1.19 knows (a mask made only of unknown names matches nothing).
KNOWN_EVENTS = {
    "Starting", "StartupComplete", "DeviceDiscovered", "DeviceConnected", "DeviceDisconnected", "DeviceRejected",
    "PendingDevicesChanged", "DevicePaused", "DeviceResumed", "ClusterConfigReceived", "LocalChangeDetected",
    "RemoteChangeDetected", "LocalIndexUpdated", "RemoteIndexUpdated", "ItemStarted", "ItemFinished",
    "StateChanged", "FolderRejected", "PendingFoldersChanged", "ConfigSaved", "DownloadProgress",
    "RemoteDownloadProgress", "FolderSummary", "FolderCompletion", "FolderErrors", "FolderScanProgress",
    "FolderPaused", "FolderResumed", "FolderWatchStateChanged", "ListenAddressesChanged", "LoginAttempt",
    "Failure",
}
#: Not in the default subscription (only on /rest/events/disk).
DISK_EVENTS = {"LocalChangeDetected", "RemoteChangeDetected"}

FAULT_KINDS = {"oversized", "cut", "malformed", "early_empty", "status", "hang", "drop", "raw"}
_FAULT_FIELDS = {
    "kind": (str,), "count": (int,), "match": (str,), "paths": (list,), "delay": (int, float),
    "name": (str,), "bytes": (int,), "body": (str,), "status": (int,), "seconds": (int, float),
    "headers": (bool,),
}


def rfc3339_seconds(ts: float) -> str:
    return datetime.fromtimestamp(int(ts), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_nanos(ts: float) -> str:
    """Syncthing's event time: nanoseconds with trailing zeros trimmed."""
    whole = int(ts)
    frac = f"{int((ts - whole) * 1e9):09d}".rstrip("0")
    base = datetime.fromtimestamp(whole, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{frac}Z" if frac else f"{base}Z"


def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, ``*.localhost`` and loopback IP literals (names are never resolved)."""
    host = host.strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_of(header: str) -> str:
    """The host part of a Host header (IPv6 literals keep no brackets)."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def atoi(value, default):
    """Go's strconv.Atoi: an optional sign and decimal digits, else the default."""
    if value is None or not re.fullmatch(r"[+-]?\d+", value):
        return default
    return int(value)


class FaultError(ValueError):
    pass


class Fault:
    def __init__(self, spec):
        if not isinstance(spec, dict):
            raise FaultError("each fault must be a JSON object")
        for key, value in spec.items():
            if key not in _FAULT_FIELDS:
                raise FaultError(f"unknown fault field {key!r}")
            if not isinstance(value, _FAULT_FIELDS[key]) or (isinstance(value, bool) and key != "headers"):
                raise FaultError(f"fault field {key!r} has the wrong type")
        self.kind = spec.get("kind")
        if self.kind not in FAULT_KINDS:
            raise FaultError(f"kind must be one of {sorted(FAULT_KINDS)}")
        self.count = spec.get("count", 1)
        if self.count == 0 or self.count < -1:
            raise FaultError("count must be positive or -1")
        self.match = spec.get("match", "any")
        if self.match not in ("any", "poll", "head"):
            raise FaultError("match must be any, poll or head")
        self.paths = spec.get("paths", ["/rest/events"])
        if not all(isinstance(p, str) for p in self.paths):
            raise FaultError("paths must be a list of strings")
        self.delay = float(spec.get("delay", 0))
        self.bytes = spec.get("bytes")
        self.body = spec.get("body")
        self.status = spec.get("status", 403 if self.kind == "status" else None)
        if self.status is not None and not 100 <= self.status <= 599:
            raise FaultError("status must be 100..599")
        self.seconds = spec.get("seconds")
        self.headers = spec.get("headers", True)
        self.name = spec.get("name") or self.kind
        self._spec = dict(spec)

    @property
    def after_headers(self) -> bool:
        """True when the fault can answer a long poll whose 200 headers are already out."""
        return self.kind not in ("status", "drop") and not (self.kind == "hang" and not self.headers)

    def applies(self, path: str, head: bool) -> bool:
        if path not in self.paths:
            return False
        if path == "/rest/events" and self.match != "any":
            return head == (self.match == "head")
        return True

    def to_json(self):
        out = dict(self._spec)
        out["count"] = self.count
        out["name"] = self.name
        return out


class Generator:
    """Emits one kind of event at a steady rate on its own thread: at each 5 ms tick, as many as are due since it
    started (so a late tick catches up instead of lowering the rate)."""

    TICK = 0.005

    def __init__(self, state, spec):
        if not isinstance(spec, dict):
            raise ValueError("generate takes a JSON object")
        fields = dict(spec)
        self.rate = fields.pop("rate", None)
        if not isinstance(self.rate, (int, float)) or isinstance(self.rate, bool) or not 0 < self.rate <= 100000:
            raise ValueError("rate must be a number of events per second, 0 < rate <= 100000")
        self.seconds = fields.pop("seconds", None)
        if self.seconds is not None and (not isinstance(self.seconds, (int, float)) or isinstance(self.seconds, bool)
                                         or self.seconds <= 0):
            raise ValueError("seconds must be a positive number")
        self.event_type = fields.pop("type", "LocalIndexUpdated")
        if not isinstance(self.event_type, str) or not self.event_type:
            raise ValueError("type must be a non-empty string")
        names = fields.pop("names", None)
        if names is not None:
            if not isinstance(names, int) or isinstance(names, bool) or not 0 <= names <= 100000:
                raise ValueError("names must be an integer, 0..100000")
            # The same names in every event: what the client does with them does not depend on their text.
            fields["filenames"] = [f"generated/dir-{i % 17}/note-{i}.md" for i in range(names)]
        self.fields = fields
        self.state = state
        self.emitted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)

    def snapshot(self):
        return {"running": self._thread.is_alive() and not self._stop.is_set(), "rate": self.rate,
                "emitted": self.emitted}

    def _run(self):
        state = self.state
        start = time.monotonic()
        while not self._stop.is_set() and not state.stopping:
            elapsed = time.monotonic() - start
            if self.seconds is not None:
                elapsed = min(elapsed, self.seconds)
            due = int(elapsed * self.rate)
            if due > self.emitted:
                with state.cond:
                    for _ in range(due - self.emitted):
                        state._emit(self.event_type, state.default_data(self.event_type, self.fields))
                    state.cond.notify_all()
                self.emitted = due
            if self.seconds is not None and elapsed >= self.seconds:
                break
            self._stop.wait(self.TICK)


class Subscription:
    """One event mask's buffer and id counter. ``mask`` is None for the default subscription."""

    def __init__(self, mask):
        self.mask = mask
        self.next_id = 1
        self.events = deque(maxlen=BUFFER_SIZE)

    @property
    def label(self):
        return "*" if self.mask is None else ",".join(sorted(self.mask))

    def matches(self, event_type):
        if self.mask is None:
            return event_type not in DISK_EVENTS
        return event_type in self.mask

    @property
    def newest(self):
        return self.events[-1]["id"] if self.events else 0


class State:
    """Everything the fake knows; one lock and one condition for the held long polls."""

    def __init__(self, device_id, api_key, peer_id, folders, log_path=None, clock=time.time, status_only=False):
        self.cond = threading.Condition()
        self.status_only = status_only
        self.clock = clock
        self.device_id = device_id
        self.peer_id = peer_id
        self.api_key = api_key
        self.folders = list(folders)
        self.paused_folders = set()
        self.completion = {}  # (device, folder) -> dict of needs
        self.faults: list[Fault] = []
        self.requests: list[dict] = []
        self.request_count = 0
        self.waiting = 0
        self.generation = 0  # bumped by every restart
        self.inflight_mode = {}  # generation that ended -> "empty" | "cut" | "hold"
        self.start_epoch = 0
        self.global_id = 0
        self.subscriptions: dict = {}
        self.stopping = False
        self.down_seconds = 0.0
        self.closed = threading.Event()  # set by the main thread once the listening socket is closed
        self.server = None
        self.generator = None
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None
        self._boot()

    # -- lifecycle ----------------------------------------------------------------------------------

    def close(self):
        """Closes the request log."""
        with self.cond:
            if self._log:
                self._log.close()
                self._log = None

    def _boot(self):
        """(Re)start: a new startTime (always a new whole second), fresh subscriptions, startup events."""
        now = int(self.clock())
        self.start_epoch = max(now, self.start_epoch + 1)
        self.global_id = 0
        self.subscriptions = {None: Subscription(None)}
        self._emit("Starting", {"home": "/fake/home", "myID": self.device_id})
        self._emit("StartupComplete", {"myID": self.device_id})

    def restart(self, inflight="empty"):
        with self.cond:
            self.inflight_mode[self.generation] = inflight
            self.generation += 1
            self._boot()
            self.cond.notify_all()

    @property
    def start_time(self):
        return rfc3339_seconds(self.start_epoch)

    # -- events --------------------------------------------------------------------------------------

    def subscription(self, mask):
        """The subscription for *mask* (None = default), created empty on first use. Caller holds the lock."""
        sub = self.subscriptions.get(mask)
        if sub is None:
            sub = self.subscriptions[mask] = Subscription(mask)
        return sub

    def _emit(self, event_type, data):
        self.global_id += 1
        ids = {}
        when = rfc3339_nanos(self.clock())
        for sub in self.subscriptions.values():
            if sub.matches(event_type):
                event = {"id": sub.next_id, "globalID": self.global_id, "time": when, "type": event_type,
                         "data": data}
                sub.next_id += 1
                sub.events.append(event)
                ids[sub.label] = event["id"]
        return {"globalID": self.global_id, "ids": ids}

    def default_data(self, event_type, fields):
        if event_type == "LocalIndexUpdated":
            name = f"file-{self.global_id + 1}.md"
            data = {"folder": self.folders[0] if self.folders else "default", "items": 1, "filenames": [name],
                    "sequence": self.global_id + 1, "version": self.global_id + 1}
            data.update(fields)
            if "filenames" in fields and "items" not in fields and isinstance(fields["filenames"], list):
                data["items"] = len(fields["filenames"])
            return data
        if event_type == "FolderCompletion":
            data = {"completion": 100, "device": self.peer_id,
                    "folder": self.folders[0] if self.folders else "default", "globalBytes": 12,
                    "globalItems": 1, "needBytes": 0, "needDeletes": 0, "needItems": 0, "sequence": 1}
            data.update(fields)
            return data
        return dict(fields)

    def append(self, specs):
        if isinstance(specs, dict):
            specs = [specs]
        if not isinstance(specs, list) or not all(isinstance(s, dict) for s in specs):
            raise ValueError("events must be an object or a list of objects")
        out = []
        with self.cond:
            for spec in specs:
                fields = dict(spec)
                event_type = fields.pop("type", None)
                if not isinstance(event_type, str) or not event_type:
                    raise ValueError("every event needs a type")
                out.append(self._emit(event_type, self.default_data(event_type, fields)))
            self.cond.notify_all()
        return out

    def skip(self, count):
        with self.cond:
            for sub in self.subscriptions.values():
                sub.next_id += count
            self.global_id += count

    # -- generated events ------------------------------------------------------------------------------

    def generate(self, spec):
        """Starts a Generator for *spec* (the body of ``POST /_control/generate``), stopping a running one."""
        generator = Generator(self, spec)
        self.stop_generator()
        with self.cond:
            self.generator = generator
        generator.start()
        return generator.snapshot()

    def stop_generator(self):
        with self.cond:
            generator = self.generator
        if generator is not None:
            generator.stop()
        return generator.snapshot() if generator else {"running": False, "rate": 0, "emitted": 0}

    # -- faults --------------------------------------------------------------------------------------

    def set_faults(self, specs):
        if not isinstance(specs, list):
            raise FaultError("faults must be a JSON list")
        faults = [Fault(s) for s in specs]
        with self.cond:
            self.faults = faults
            self.cond.notify_all()
        return faults

    def take_fault(self, path, head, after_headers=False):
        """The first queued fault for this request (consuming one use). Caller holds the lock."""
        for i, fault in enumerate(self.faults):
            if fault.applies(path, head) and (not after_headers or fault.after_headers):
                if fault.count > 0:
                    fault.count -= 1
                    if fault.count == 0:
                        del self.faults[i]
                return fault
        return None

    # -- request log ---------------------------------------------------------------------------------

    def record(self, entry):
        line = json.dumps(entry, sort_keys=True)
        with self.cond:
            self.request_count += 1
            self.requests.append(entry)
            if self._log:
                self._log.write(line + "\n")
                self._log.flush()

    def snapshot(self):
        with self.cond:
            return {
                "myID": self.device_id, "startTime": self.start_time, "generation": self.generation,
                "subscriptions": [{"mask": s.label, "next_id": s.next_id, "newest": s.newest,
                                   "buffered": len(s.events)} for s in self.subscriptions.values()],
                "waiting": self.waiting, "faults": [f.to_json() for f in self.faults],
                "requests": self.request_count,
            }


class Cut(Exception):
    """Close the connection now, mid-answer."""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-syncthing"
    sys_version = ""
    # TCP_NODELAY, as Syncthing's Go server has on every connection (docs/benchmarks.md, CPU at a steady event
    # rate): with Nagle on, a chunked answer's small writes on a kept-alive connection wait for the client's
    # delayed ACK (about 40 ms each), which no real Syncthing does.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    @property
    def state(self) -> State:
        return self.server.state

    # A restart closes every connection, as real Syncthing's does (its process exits): a connection opened before
    # the last restart is closed instead of read from, and one whose request the restart ended (a held poll answered
    # by it) is closed after that answer. A client can therefore tell a restart from a kept-alive connection.
    def setup(self):
        super().setup()
        self.generation_at_accept = self.state.generation

    def handle_one_request(self):
        if self.generation_at_accept != self.state.generation:
            self.close_connection = True
            return
        super().handle_one_request()
        if self.generation_at_accept != self.state.generation:
            self.close_connection = True

    def do_GET(self):
        try:
            self._dispatch()
        except (Cut, BrokenPipeError, ConnectionResetError, TimeoutError, OSError):
            self._close()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    # -- plumbing -----------------------------------------------------------------------------------

    def _close(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _body(self):
        length = atoi(self.headers.get("Content-Length"), 0)
        if length < 0 or length > MIB:
            raise ValueError("body too large")
        return self.rfile.read(length) if length else b""

    def _syncthing_headers(self):
        self.send_header("X-Syncthing-Id", self.state.device_id)
        self.send_header("X-Syncthing-Version", VERSION)

    def _send(self, status, body, content_type="application/json; charset=utf-8", syncthing=True):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if syncthing:
            self._syncthing_headers()
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def _start_chunked(self, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self._syncthing_headers()
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data: bytes):
        view = memoryview(data)
        for off in range(0, len(data), 65536):
            part = view[off:off + 65536]
            self.wfile.write(b"%x\r\n" % len(part))
            self.wfile.write(part)
            self.wfile.write(b"\r\n")
        self.wfile.flush()

    def _end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _client_gone(self, wait):
        """Waits up to *wait* seconds; True when the client closed the connection (EOF or reset)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], wait)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    # -- dispatch -----------------------------------------------------------------------------------

    def _dispatch(self):
        parts = urlsplit(self.path)
        path = parts.path
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        state = self.state
        if path.startswith("/_control/") and not state.status_only:
            try:
                raw = self._body()
                self._control(path, raw)
            except (ValueError, FaultError) as exc:
                self._send(400, json.dumps({"error": str(exc)}), syncthing=False)
            return
        head = path == "/rest/events" and atoi(query.get("since"), 0) == 0 and atoi(query.get("limit"), 0) == 1
        entry = {"t": time.time(), "method": self.command, "path": self.path, "route": path, "query": query,
                 "status": None, "fault": None}
        if state.status_only and path != "/rest/system/status":
            # In this mode nothing else exists, so neither the Host nor the key is looked at.
            entry["status"] = 404
            state.record(entry)
            self._send(404, b"", "text/plain; charset=utf-8", syncthing=False)
            return
        if not is_loopback_host(host_of(self.headers.get("Host", ""))):
            entry["status"] = 403
            state.record(entry)
            self._send(403, "Host check error\n", "text/plain; charset=utf-8", syncthing=False)
            return
        if self.headers.get("X-API-Key") != state.api_key:
            entry["status"] = 403
            state.record(entry)
            self._send(403, "CSRF Error\n", "text/plain; charset=utf-8")
            return
        with state.cond:
            fault = state.take_fault(path, head)
        if fault is not None:
            entry["fault"] = fault.name
            entry["status"] = fault.status if fault.kind == "status" else (None if fault.kind == "drop" else 200)
            state.record(entry)
            self._fault(fault, headers_sent=False)
            return
        if path == "/rest/events" and self.command == "GET":
            entry["status"] = 200
            state.record(entry)
            self._events(query, head)
            return
        status, body = self._route(path, query)
        entry["status"] = status
        state.record(entry)
        if isinstance(body, str):
            self._send(status, body, "text/plain; charset=utf-8")
        else:
            self._send(status, json.dumps(body, indent=2))

    def _route(self, path, query):
        state = self.state
        if self.command != "GET":
            return 405, "method not allowed\n"
        if path == "/rest/system/status":
            if state.status_only:
                return 200, {"myID": state.device_id, "startTime": STATUS_ONLY_START_TIME}
            with state.cond:
                uptime = max(0, int(state.clock()) - state.start_epoch)
                return 200, {
                    "alloc": 12345678, "connectionServiceStatus": {}, "discoveryEnabled": False,
                    "goroutines": 42, "guiAddressOverridden": False, "guiAddressUsed": "127.0.0.1:0",
                    "lastDialStatus": {}, "myID": state.device_id, "pathSeparator": "/",
                    "startTime": state.start_time, "sys": 23456789, "tilde": "/fake/home", "uptime": uptime,
                    "urVersionMax": 3,
                }
        if path == "/rest/system/connections":
            offline = {"connected": False, "paused": False, "address": "", "type": ""}
            return 200, {"connections": {state.device_id: dict(offline), state.peer_id: dict(offline)}, "total": {}}
        if path == "/rest/config/devices":
            return 200, [self._device(state.device_id, "server"), self._device(state.peer_id, "phone")]
        if path == "/rest/config/folders":
            return 200, [{
                "id": f, "label": f, "path": f"/fake/{f}", "type": "sendreceive", "paused": f in state.paused_folders,
                "devices": [{"deviceID": state.device_id, "introducedBy": "", "encryptionPassword": ""},
                            {"deviceID": state.peer_id, "introducedBy": "", "encryptionPassword": ""}],
            } for f in state.folders]
        if path == "/rest/db/completion":
            device = query.get("device", "")
            folder = query.get("folder", "")
            if device and not DEVICE_ID_RE.match(device):
                return 400, f'"{device}": device ID invalid: incorrect length\n'
            if folder and folder not in state.folders:
                return 404, "no such folder\n"
            if folder in state.paused_folders:
                return 404, "folder is paused\n"
            with state.cond:
                needs = dict(state.completion.get((device, folder), {}))
            need_items = int(needs.get("needItems", 0))
            need_bytes = int(needs.get("needBytes", 0))
            need_deletes = int(needs.get("needDeletes", 0))
            global_bytes = max(12, need_bytes)
            if need_bytes == 0 and need_deletes > 0:
                completion = 95
            else:
                completion = 100 * (global_bytes - need_bytes) / global_bytes
            return 200, {"completion": completion, "globalBytes": global_bytes, "globalItems": 1,
                         "needBytes": need_bytes, "needDeletes": need_deletes, "needItems": need_items,
                         "sequence": 1}
        return 404, "404 page not found\n"

    @staticmethod
    def _device(device_id, name):
        return {"deviceID": device_id, "name": name, "addresses": ["dynamic"], "compression": "metadata",
                "certName": "", "introducer": False, "skipIntroductionRemovals": False, "introducedBy": "",
                "paused": False, "allowedNetworks": [], "autoAcceptFolders": False, "maxSendKbps": 0,
                "maxRecvKbps": 0, "ignoredFolders": [], "maxRequestKiB": 0, "untrusted": False,
                "remoteGUIPort": 0}

    # -- /rest/events --------------------------------------------------------------------------------

    @staticmethod
    def _mask(value):
        """The subscription key of an ``events=`` value: None (default) or a frozenset of known names."""
        if value is None or value == "":
            return None
        return frozenset(n for n in value.split(",") if n in KNOWN_EVENTS)

    def _events(self, query, head):
        state = self.state
        since = atoi(query.get("since"), 0)
        limit = atoi(query.get("limit"), 0)
        timeout = atoi(query.get("timeout"), DEFAULT_TIMEOUT)
        if timeout < 0:
            timeout = DEFAULT_TIMEOUT
        mask = self._mask(query.get("events"))
        deadline = time.monotonic() + timeout
        # Syncthing flushes the 200 and its headers before it blocks (docs/syncthing-api.md, Long-poll and
        # timeouts).
        self._start_chunked()
        with state.cond:
            generation = state.generation
            sub = state.subscription(mask)
            state.waiting += 1
            try:
                while True:
                    if state.stopping:
                        raise Cut()
                    fault = state.take_fault("/rest/events", head, after_headers=True)
                    if fault is not None:
                        break
                    if generation != state.generation:
                        mode = state.inflight_mode.get(generation, "empty")
                        if mode == "cut":
                            raise Cut()
                        if mode == "empty":
                            events = []
                            break
                    if since < 0:
                        events = self._placeholders(sub)
                        break
                    events = [e for e in sub.events if e["id"] > since]
                    if events:
                        break
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    # Wake at least every 0.2 s to notice a client that went away.
                    state.cond.wait(min(remaining, 0.2))
                    if self._client_gone(0):
                        raise Cut()
            finally:
                state.waiting -= 1
        if fault is not None:
            self._fault(fault, headers_sent=True)
            return
        if limit > 0:
            events = events[-limit:]
        self._chunk(json.dumps(events, indent=2).encode())
        self._end_chunked()

    @staticmethod
    def _placeholders(sub):
        real = list(sub.events)
        filler = {"id": 0, "globalID": 0, "time": "0001-01-01T00:00:00Z", "type": "Unknown", "data": None}
        return [dict(filler) for _ in range(BUFFER_SIZE - len(real))] + real

    # -- faults --------------------------------------------------------------------------------------

    def _fault(self, fault: Fault, headers_sent: bool):
        if fault.delay:
            if self._client_gone(fault.delay):
                raise Cut()
        kind = fault.kind
        if kind == "drop":
            raise Cut()
        if kind == "status":
            body = fault.body
            if body is None:
                body = {401: "Not Authorized\n", 403: "CSRF Error\n"}.get(fault.status, "injected fault\n")
            self._send(fault.status, body, "text/plain; charset=utf-8", syncthing=fault.status != 401)
            return
        if kind == "hang":
            if fault.headers and not headers_sent:
                self._start_chunked()
            deadline = None if fault.seconds is None else time.monotonic() + fault.seconds
            while deadline is None or time.monotonic() < deadline:
                if self.state.stopping or self._client_gone(0.2):
                    raise Cut()
            raise Cut()
        if not headers_sent:
            self._start_chunked()
        if kind == "early_empty":
            self._chunk(b"[]")
        elif kind == "oversized":
            self._chunk_padded(fault.bytes if fault.bytes is not None else 20 * MIB)
        elif kind == "cut":
            sample = json.dumps([{"id": 1, "globalID": 1, "time": rfc3339_nanos(time.time()),
                                  "type": "LocalIndexUpdated", "data": {"folder": "x", "items": 1}}] * 4,
                                indent=2).encode()
            size = fault.bytes if fault.bytes is not None else 40
            if size:
                self._chunk(sample[:size])
            raise Cut()
        elif kind == "malformed":
            body = fault.body if fault.body is not None else '[{"id": 1, "type": "LocalIndexUpdated", "data": {]'
            self._chunk(body.encode())
        elif kind == "raw":
            self._chunk((fault.body or "").encode())
        self._end_chunked()

    def _chunk_padded(self, size):
        """A complete, valid JSON event array of exactly *size* bytes (for size >= 128), sent in chunks."""
        head = (b'[\n  {\n    "id": 1,\n    "globalID": 1,\n    "time": "2026-01-01T00:00:00Z",\n'
                b'    "type": "LocalIndexUpdated",\n    "data": {\n      "folder": "x",\n      "filenames": ["')
        tail = b'"]\n    }\n  }\n]'
        pad = max(0, size - len(head) - len(tail))
        self._chunk(head)
        block = b"x" * 65536
        while pad > 0:
            n = min(pad, len(block))
            self._chunk(block[:n])
            pad -= n
        self._chunk(tail)

    # -- control ------------------------------------------------------------------------------------

    def _control(self, path, raw):
        state = self.state
        method = self.command
        payload = json.loads(raw.decode("utf-8")) if raw.strip() else None

        def ok(obj):
            self._send(200, json.dumps(obj), syncthing=False)

        if path == "/_control/events" and method == "POST":
            ok(state.append(payload))
        elif path == "/_control/skip" and method == "POST":
            count = (payload or {}).get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise ValueError("count must be a positive integer")
            state.skip(count)
            ok(state.snapshot())
        elif path == "/_control/restart" and method == "POST":
            payload = payload or {}
            down = payload.get("down_seconds", 0)
            # A process that goes away cuts its held polls; an in-process restart may end them cleanly.
            inflight = payload.get("inflight", "cut" if down else "empty")
            if inflight not in ("empty", "cut", "hold"):
                raise ValueError("inflight must be empty, cut or hold")
            if not isinstance(down, (int, float)) or isinstance(down, bool) or not 0 <= down <= 600:
                raise ValueError("down_seconds must be 0..600")
            if down > 0:
                # As when the process dies: the listening socket closes first (the main thread does it), then
                # the held polls are cut.
                state.closed.clear()
                state.down_seconds = float(down)
                state.closed.wait(5)
            state.restart(inflight)
            ok(state.snapshot())
        elif path == "/_control/faults" and method == "POST":
            ok([f.to_json() for f in state.set_faults(payload)])
        elif path == "/_control/faults" and method == "DELETE":
            state.set_faults([])
            ok([])
        elif path == "/_control/faults" and method == "GET":
            ok(state.snapshot()["faults"])
        elif path == "/_control/generate" and method == "POST":
            ok(state.generate(payload))
        elif path == "/_control/generate" and method == "DELETE":
            ok(state.stop_generator())
        elif path == "/_control/generate" and method == "GET":
            with state.cond:
                generator = state.generator
            ok(generator.snapshot() if generator else {"running": False, "rate": 0, "emitted": 0})
        elif path == "/_control/completion" and method == "POST":
            if not isinstance(payload, dict):
                raise ValueError("completion must be an object")
            key = (payload.get("device", state.peer_id), payload.get("folder", ""))
            with state.cond:
                state.completion[key] = {k: payload.get(k, 0) for k in ("needItems", "needBytes", "needDeletes")}
            ok({"device": key[0], "folder": key[1], **state.completion[key]})
        elif path == "/_control/apikey" and method == "POST":
            key = (payload or {}).get("api_key")
            if not isinstance(key, str) or not key:
                raise ValueError("api_key must be a non-empty string")
            with state.cond:
                state.api_key = key
            ok({})
        elif path == "/_control/state" and method == "GET":
            ok(state.snapshot())
        elif path == "/_control/requests" and method == "GET":
            with state.cond:
                ok(list(state.requests))
        elif path == "/_control/requests" and method == "DELETE":
            with state.cond:
                state.requests.clear()
            ok([])
        else:
            self._send(404, json.dumps({"error": "unknown control endpoint"}), syncthing=False)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address, state, bind_and_activate=True):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.state = state
        super().__init__(address, Handler, bind_and_activate=bind_and_activate)


def write_port_file(path, port):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".port-")
    with os.fdopen(fd, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--api-key", help="default: fake-syncthing-api-key (required with --status-only)")
    parser.add_argument("--device-id", help=f"default: {DEFAULT_DEVICE} ({STATUS_ONLY_DEVICE} with --status-only)")
    parser.add_argument("--peer-id", default=DEFAULT_PEER)
    parser.add_argument("--folders", default="vault,notes", help="comma-separated folder IDs")
    parser.add_argument("--log", help="JSON lines, one per /rest request")
    parser.add_argument("--listen-on-signal", action="store_true",
                        help="bind and write the port file, but accept connections only after SIGUSR1")
    parser.add_argument("--print-port", action="store_true", help="print the port on stdout when it is announced")
    parser.add_argument("--status-only", action="store_true",
                        help="serve GET /rest/system/status alone, with a fixed document; every other path is 404")
    args = parser.parse_args(argv)
    if not is_loopback_host(args.host):
        parser.error(f"refusing to bind non-loopback host {args.host!r}")
    if args.status_only and args.api_key is None:
        parser.error("--status-only needs --api-key")
    api_key = args.api_key if args.api_key is not None else "fake-syncthing-api-key"
    device_id = args.device_id
    if device_id is None:
        device_id = STATUS_ONLY_DEVICE if args.status_only else DEFAULT_DEVICE
    folders = [f for f in args.folders.split(",") if f]
    state = State(device_id, api_key, args.peer_id, folders, log_path=args.log, status_only=args.status_only)

    def announce(port):
        if args.port_file:
            write_port_file(args.port_file, port)
        if args.print_port:
            print(port, flush=True)

    # Signal handlers only set plain flags: taking a lock in a handler (Event.set, Condition) can deadlock the
    # main thread when the signal lands while it holds that lock. The main thread polls the flags.
    flags = {"listen": not args.listen_on_signal}

    def on_term(signum, frame):
        state.stopping = True

    def on_usr1(signum, frame):
        flags["listen"] = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    signal.signal(signal.SIGUSR1, on_usr1)
    # A parent may have spawned us with signals blocked (its threads' mask is inherited).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGUSR1})

    port = args.port
    first = True
    while not state.stopping:
        server = Server((args.host, port), state, bind_and_activate=False)
        server.server_bind()
        port = server.server_address[1]
        if first and args.listen_on_signal:
            announce(port)
            # Bound but not listening: connections are refused until SIGUSR1.
            while not flags["listen"] and not state.stopping:
                time.sleep(0.05)
        if state.stopping:
            server.server_close()
            break
        server.server_activate()
        if first and not args.listen_on_signal:
            # Only once listening: a client may connect as soon as it reads the port.
            announce(port)
        first = False
        state.server = server
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        thread.start()
        while not state.stopping and not state.down_seconds:
            time.sleep(0.05)
        server.shutdown()
        server.server_close()
        state.closed.set()
        with state.cond:
            state.cond.notify_all()  # held polls notice stopping
        if state.stopping:
            break
        # A restart with down_seconds: connections are refused for that long.
        deadline = time.monotonic() + state.down_seconds
        state.down_seconds = 0.0
        while time.monotonic() < deadline and not state.stopping:
            time.sleep(0.05)
    state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
