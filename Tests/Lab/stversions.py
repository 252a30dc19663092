#!/usr/bin/env python3
"""stversions: record what one Syncthing release puts on the wire, in the stlab two-node lab.

Runs the measurements behind docs/syncthing-api.md that matter to vaultsync-notify against one
binary and writes raw captures plus a summary, so that releases can be compared
(docs/syncthing-versions.md)::

    scripts/lib/in-loopback-namespace python3 Tests/Lab/stversions.py \\
        --syncthing /usr/bin/syncthing --out /tmp/st-1.19.2
    scripts/lib/in-loopback-namespace python3 Tests/Lab/stversions.py \\
        --syncthing /var/cache/vaultsync-notify/syncthing-1.29.5/syncthing --out /tmp/st-1.29.5
    scripts/lib/in-loopback-namespace python3 Tests/Lab/stversions.py \\
        --syncthing "$VAULTSYNC_SYNCTHING_2" --out /tmp/st-2.1.3

1.x and 2.x take different ``generate``/``serve``/``paths`` arguments; stlab picks them by the
binary's ``--version``.  Like stlab it refuses to run outside a loopback-only network namespace
(``in-loopback-namespace`` makes one).  It takes about two minutes.  Scenarios, in order (A is
the server, B the peer; "completion" is A's ``/rest/db/completion?device=B&folder=F``):

* ``paths``: where ``syncthing generate`` puts config.xml for a fresh $HOME (no --home), which files
  it writes there, and what ``serve --paths`` (2.x: ``paths``) shows when
  ``~/.config/syncthing/config.xml`` already exists.
* ``rest``: ``/rest/system/status``, ``/rest/config/devices``, ``/rest/config/folders``,
  ``/rest/system/connections``, ``/rest/noauth/health`` (without a key), ``Authorization: Bearer``.
* ``connected``, ``remote-folder-paused`` (B pauses ``notes``), ``not-sharing``
  (A shares ``solo`` with B, B never accepts it), ``not-sharing-reconnected`` (the same after B
  reconnected), ``not-shared`` (A's ``private`` lists only A), ``paused-on-a`` (A pauses B),
  ``b-pauses-a`` (B pauses A: A sees a disconnected, unpaused peer), ``stopped`` (B's Syncthing
  stopped): completion before and after a change made on A in that state.
  ``connected`` also asks ``/rest/system/connections`` again once the number of connections to B
  has stopped changing (2.x opens more connections per device pair a few seconds after the
  first), saved as ``raw/system-connections-settled.json``.
* ``aggregate-with-paused-folder``: ``?device=B`` while A's ``notes`` is paused.
* ``remote-removed-folder`` (after the trickle): B deletes ``notes`` from its config; A still
  holds B's index for it.
* ``trickle``: B limited with ``PATCH /rest/config/options {"maxRecvKbps": …,
  "limitBandwidthInLan": true}``, A writes one large file; completion on A and B's own
  ``/rest/db/status`` every second until B has it.

A background thread long-polls A's events with one mask for the whole run (which also keeps
1.19 computing FolderCompletion: docs/syncthing-api.md, Completion and connections); every event
is tagged with the scenario step that was current when it was logged.  Output in ``--out``:
``events.json`` (A's events), ``steps.json`` (every request and answer, in order),
``summary.json``, and ``raw/`` (REST bodies byte for byte, and ``events-FolderCompletion.json``:
A's FolderCompletion events, re-indented).  The summary also lists what A's ``--home`` holds after
the run, and whether the real user's ``~/.config/syncthing``, ``~/.local/state/syncthing`` or
``~/.local/share/syncthing`` changed during it (every Syncthing here gets a $HOME of its own, so
none should).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stlab  # noqa: E402

MASK = ("LocalIndexUpdated,FolderCompletion,ConfigSaved,DeviceConnected,DeviceDisconnected,"
        "DevicePaused,DeviceResumed,RemoteDownloadProgress,FolderPaused,FolderResumed")
TRICKLE_BYTES = 16 * 1000 * 1000
TRICKLE_KBPS = 2000


def event_time(value: str) -> float:
    """Unix time of an event ``time`` (1-9 fractional digits, Z or an offset)."""
    value = value.replace("Z", "+00:00")
    if "." in value:
        head, rest = value.split(".", 1)
        digits = rest[:len(rest) - 6] if rest[-6] in "+-" else rest
        value = head + "." + digits[:6].ljust(6, "0") + rest[len(digits):]
    return datetime.fromisoformat(value).timestamp()


class Recorder:
    """Runs requests against the lab and keeps every step, plus A's event stream."""

    def __init__(self, lab: stlab.Lab, out: str):
        self.lab, self.out = lab, out
        self.a, self.b = lab.state["nodes"]["a"], lab.state["nodes"]["b"]
        self.steps: list[dict] = []
        self.marks: list[tuple[float, str]] = []
        self.events: list[dict] = []
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)

    # -- events -------------------------------------------------------------------------------

    def start_events(self):
        self.lab.api("a", "GET", f"/rest/events?events={MASK}&since=0&timeout=0")
        self._poller.start()

    def _poll(self):
        cursor = 0
        while not self._stop.is_set():
            try:
                status, body = self.lab.api(
                    "a", "GET", f"/rest/events?events={MASK}&since={cursor}&timeout=2", timeout=10)
            except OSError:
                time.sleep(0.2)
                continue
            if status != 200:
                time.sleep(0.2)
                continue
            for ev in json.loads(body):
                ev["_t"] = event_time(ev["time"])
                ev["_step"] = self.step_at(ev["_t"])
                self.events.append(ev)
                cursor = ev["id"]

    def stop_events(self):
        time.sleep(3)
        self._stop.set()
        self._poller.join(timeout=15)

    # -- steps --------------------------------------------------------------------------------

    def mark(self, name: str):
        self.marks.append((time.time(), name))
        print(f"stversions: {name}", file=sys.stderr)

    def step_at(self, t: float) -> str:
        current = "start"
        for at, name in self.marks:
            if at <= t:
                current = name
        return current

    def call(self, node: str, method: str, path: str, body=None, key: bool = True,
             headers: dict | None = None, note: str = "", raw: str = "") -> tuple[int, object]:
        """One request; the answer is recorded and returned as (status, JSON or text).

        With *raw*, the body is also saved byte for byte as ``raw/<raw>.json``.
        """
        n = self.a if node == "a" else self.b
        data = None if body is None else json.dumps(body).encode()
        hdrs = {"Content-Type": "application/json"}
        if key:
            hdrs["X-API-Key"] = n["api_key"]
        hdrs.update(headers or {})
        req = urllib.request.Request(f"http://127.0.0.1:{n['gui_port']}{path}", data=data,
                                     method=method, headers=hdrs)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(req, timeout=30) as resp:
                status, data_in = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, data_in = exc.code, exc.read()
        if raw:
            os.makedirs(os.path.join(self.out, "raw"), exist_ok=True)
            with open(os.path.join(self.out, "raw", raw + ".json"), "wb") as f:
                f.write(data_in)
        try:
            parsed = json.loads(data_in) if data_in.strip() else None
        except ValueError:
            parsed = data_in.decode(errors="replace").strip()
        self.steps.append({"t": round(time.time(), 3), "step": self.marks[-1][1] if self.marks
                           else "start", "node": node.upper(), "request": f"{method} {path}",
                           "key": key, "note": note, "status": status, "body": parsed})
        return status, parsed

    def completion(self, folder: str, note: str, raw: str = "") -> dict:
        status, body = self.call("a", "GET",
                                 f"/rest/db/completion?device={self.b['id']}&folder={folder}",
                                 note=note, raw=raw)
        return {"status": status, "body": body}

    def write(self, node: str, folder: str, name: str, data: bytes = b"hello\n"):
        n = self.a if node == "a" else self.b
        path = os.path.join(n["folders"].get(folder) or os.path.join(os.path.dirname(n["home"]),
                                                                     folder), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def connected(self) -> bool:
        _, conns = self.call("a", "GET", "/rest/system/connections", note="poll")
        self.steps.pop()  # polls are not worth keeping
        return bool(conns["connections"].get(self.b["id"], {}).get("connected"))

    def connection_count(self) -> int:
        """How many connections A has to B: 2.x lists the ones after the first under ``secondary``."""
        _, conns = self.call("a", "GET", "/rest/system/connections", note="poll")
        self.steps.pop()
        entry = conns["connections"].get(self.b["id"], {})
        if not entry.get("connected"):
            return 0
        return 1 + len(entry.get("secondary") or [])

    def connections_settled(self, quiet: float = 4, timeout: float = 30) -> dict:
        """``/rest/system/connections`` once the count to B has not changed for *quiet* seconds.

        2.x opens its further connections a few seconds after the first, so the answer right after
        ``up`` shows one; the count over time is kept, to compare releases.
        """
        start = time.monotonic()
        samples, last_change, count = [], start, None
        while time.monotonic() - start < timeout:
            now_count = self.connection_count()
            if now_count != count:
                samples.append({"t": round(time.monotonic() - start, 1), "connections": now_count})
                count, last_change = now_count, time.monotonic()
            if count and time.monotonic() - last_change >= quiet:
                break
            time.sleep(0.5)
        _, body = self.call("a", "GET", "/rest/system/connections", note="settled",
                            raw="system-connections-settled")
        return {"connections_to_b": count, "changes": samples,
                "entry_keys": sorted(body["connections"].get(self.b["id"], {}))}

    def wait_connected(self, timeout: float = 60):
        deadline = time.monotonic() + timeout
        while not self.connected():
            if time.monotonic() > deadline:
                raise stlab.LabError("B did not reconnect")
            time.sleep(0.3)
        time.sleep(1)

    def save(self, name: str, obj):
        with open(os.path.join(self.out, name), "w") as f:
            json.dump(obj, f, indent=2, sort_keys=True)
            f.write("\n")


def tree(top: str, shown_as: str) -> list[str]:
    """Every file and directory under *top*, relative, with *shown_as* for *top* (dirs end in /)."""
    out = []
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        prefix = shown_as + "/" + ("" if rel == "." else rel + "/")
        out += [prefix + d + "/" for d in dirs] + [prefix + f for f in files]
    return sorted(out)


# Where a Syncthing run without --home would write for the real user: a lab must not touch them.
REAL_HOME_DIRS = ("~/.config/syncthing", "~/.local/state/syncthing", "~/.local/share/syncthing")


def real_home_snapshot() -> dict:
    """For each of REAL_HOME_DIRS: its files with size and mtime, or None when it does not exist."""
    snap = {}
    for shown in REAL_HOME_DIRS:
        path = os.path.expanduser(shown)
        if not os.path.isdir(path):
            snap[shown] = None
            continue
        entries = {}
        for name in tree(path, shown):
            try:
                st = os.stat(os.path.join(path, name[len(shown) + 1:]))
            except FileNotFoundError:  # gone between the walk and the stat: that is a change too
                entries[name] = None
                continue
            entries[name] = [st.st_size, st.st_mtime_ns]
        snap[shown] = entries
    return snap


# ------------------------------------------------------------------------------------------------
# Scenarios


def scenario_paths(syncthing: str) -> dict:
    """Default config dir for a fresh $HOME, and --paths with a legacy ~/.config/syncthing."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="stversions-home-") as tmp:
        env = {"PATH": stlab.CLEAN_PATH, "HOME": os.path.join(tmp, "fresh")}
        os.makedirs(env["HOME"])
        version = stlab.syncthing_version(syncthing)
        subprocess.run([syncthing] + stlab.generate_args(version, None), env=env, capture_output=True,
                       timeout=60, stdin=subprocess.DEVNULL)
        found = []
        for root, _dirs, files in os.walk(env["HOME"]):
            if "config.xml" in files:
                found.append(os.path.relpath(root, env["HOME"]))
        out["generate_fresh_home_config_dir"] = ["~/" + p for p in found]
        out["generate_fresh_home_files"] = tree(env["HOME"], "~")
        paths = subprocess.run([syncthing] + stlab.paths_args(version), env=env, capture_output=True,
                               text=True, timeout=60, stdin=subprocess.DEVNULL)
        out["paths_fresh_home"] = paths.stdout.replace(env["HOME"], "~").splitlines()
        legacy = {"PATH": stlab.CLEAN_PATH, "HOME": os.path.join(tmp, "legacy")}
        legacy_dir = os.path.join(legacy["HOME"], ".config", "syncthing")
        os.makedirs(legacy_dir)
        subprocess.run([syncthing] + stlab.generate_args(version, legacy_dir), env=legacy,
                       capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        paths = subprocess.run([syncthing] + stlab.paths_args(version), env=legacy, capture_output=True,
                               text=True, timeout=60, stdin=subprocess.DEVNULL)
        out["paths_with_legacy_config"] = paths.stdout.replace(legacy["HOME"], "~").splitlines()
    return out


def scenario_rest(r: Recorder) -> dict:
    r.mark("rest")
    out = {}
    for path in ("/rest/system/status", "/rest/config/devices", "/rest/config/folders",
                 "/rest/system/connections"):
        _, body = r.call("a", "GET", path, raw=path.replace("/rest/", "").replace("/", "-"))
        out[path] = body
    out["health_no_key"] = r.call("a", "GET", "/rest/noauth/health", key=False,
                                  raw="noauth-health")
    out["status_bearer"] = r.call("a", "GET", "/rest/system/status", key=False,
                                  headers={"Authorization": "Bearer " + r.a["api_key"]})[0]
    out["status_no_key"] = r.call("a", "GET", "/rest/system/status", key=False)
    return out


def before_after_change(r: Recorder, folder: str, name: str, settle: float = 5) -> dict:
    """Completion, a change on A, completion again (saved raw as completion-<step>)."""
    before = r.completion(folder, "before change")
    r.write("a", folder, name, f"{name}\n".encode())
    time.sleep(settle)
    after = r.completion(folder, f"after writing {name} on A",
                         raw="completion-" + r.marks[-1][1])
    return {"before": before, "after": after}


def scenario_completions(r: Recorder) -> dict:
    a_id, b_id = r.a["id"], r.b["id"]
    out = {}

    r.mark("connected")
    out["connected"] = before_after_change(r, "vault", "connected.md")
    out["connected-aggregate"] = r.call("a", "GET", f"/rest/db/completion?device={b_id}")
    out["connections-settled"] = r.connections_settled()

    r.mark("remote-folder-paused")
    r.write("a", "notes", "before-remote-pause.md")  # so that A knows an index of B's for notes
    time.sleep(4)
    r.call("b", "PATCH", "/rest/config/folders/notes", {"paused": True})
    time.sleep(3)
    out["remote-folder-paused"] = before_after_change(r, "notes", "remote-paused.md")
    r.call("b", "PATCH", "/rest/config/folders/notes", {"paused": False})
    time.sleep(4)
    out["remote-folder-resumed"] = r.completion("notes", "after B resumed notes")

    r.mark("not-sharing")
    solo = os.path.join(os.path.dirname(r.a["home"]), "solo")
    os.makedirs(os.path.join(solo, ".stfolder"), exist_ok=True)
    r.call("a", "POST", "/rest/config/folders", {
        "id": "solo", "label": "solo", "path": solo, "type": "sendreceive",
        "fsWatcherEnabled": True, "fsWatcherDelayS": 1,
        "devices": [{"deviceID": a_id}, {"deviceID": b_id}]})
    time.sleep(4)
    out["not-sharing"] = before_after_change(r, "solo", "solo.md")
    out["not-sharing-aggregate"] = r.call("a", "GET", f"/rest/db/completion?device={b_id}")
    r.mark("not-sharing-reconnected")  # B's next ClusterConfig lacks solo
    r.call("a", "PATCH", f"/rest/config/devices/{b_id}", {"paused": True})
    time.sleep(2)
    r.call("a", "PATCH", f"/rest/config/devices/{b_id}", {"paused": False})
    r.wait_connected()
    time.sleep(3)
    out["not-sharing-reconnected"] = before_after_change(r, "solo", "solo-2.md")

    r.mark("not-shared")
    private = os.path.join(os.path.dirname(r.a["home"]), "private")
    os.makedirs(os.path.join(private, ".stfolder"), exist_ok=True)
    r.call("a", "POST", "/rest/config/folders", {
        "id": "private", "label": "private", "path": private, "type": "sendreceive",
        "fsWatcherEnabled": True, "fsWatcherDelayS": 1, "devices": [{"deviceID": a_id}]})
    time.sleep(3)
    out["not-shared"] = before_after_change(r, "private", "private.md")
    for fid in ("solo", "private"):
        r.call("a", "DELETE", f"/rest/config/folders/{fid}")
    time.sleep(2)

    r.mark("aggregate-with-paused-folder")
    r.call("a", "PATCH", "/rest/config/folders/notes", {"paused": True})
    time.sleep(2)
    out["aggregate-with-paused-folder"] = r.call("a", "GET", f"/rest/db/completion?device={b_id}")
    out["paused-folder"] = r.completion("notes", "A's notes paused")
    r.call("a", "PATCH", "/rest/config/folders/notes", {"paused": False})
    time.sleep(2)
    r.wait_connected()

    r.mark("paused-on-a")
    r.call("a", "PATCH", f"/rest/config/devices/{b_id}", {"paused": True})
    time.sleep(3)
    out["paused-on-a"] = before_after_change(r, "vault", "paused-on-a.md")
    out["paused-on-a-connections"] = r.call("a", "GET", "/rest/system/connections")[1][
        "connections"][b_id]
    r.mark("resume-on-a")
    r.call("a", "PATCH", f"/rest/config/devices/{b_id}", {"paused": False})
    r.wait_connected()
    time.sleep(3)
    out["resumed-on-a"] = r.completion("vault", "after resume and reconnect")

    r.mark("b-pauses-a")
    r.call("b", "PATCH", f"/rest/config/devices/{a_id}", {"paused": True})
    time.sleep(3)
    out["b-pauses-a"] = before_after_change(r, "vault", "b-pauses-a.md")
    time.sleep(10)  # does anything repeat while nothing changes?
    out["b-pauses-a-later"] = r.completion("vault", "10 s later, no change")
    r.mark("b-resumes-a")
    r.call("b", "PATCH", f"/rest/config/devices/{a_id}", {"paused": False})
    r.wait_connected()
    time.sleep(3)

    r.mark("stopped")
    r.lab.stop("b")
    time.sleep(2)
    out["stopped"] = before_after_change(r, "vault", "stopped.md")
    out["stopped-connections"] = r.call("a", "GET", "/rest/system/connections")[1][
        "connections"][b_id]
    r.mark("restarted")
    r.lab.start("b")
    r.wait_connected()
    time.sleep(4)
    out["restarted"] = r.completion("vault", "after B came back")
    return out


def scenario_remote_removed(r: Recorder) -> dict:
    """B removes notes (which it had an index for): A keeps B's index, remoteState notSharing."""
    r.mark("remote-removed-folder")
    r.call("b", "DELETE", "/rest/config/folders/notes")
    time.sleep(4)
    return before_after_change(r, "notes", "after-remote-removed.md")


def scenario_trickle(r: Recorder, size: int, kbps: int) -> dict:
    r.mark("trickle")
    r.call("b", "PATCH", "/rest/config/options",
           {"maxRecvKbps": kbps, "limitBandwidthInLan": True})
    time.sleep(2)
    target = os.path.join(r.b["folders"]["vault"], "big.bin")
    start = time.time()
    r.write("a", "vault", "big.bin", os.urandom(size))
    samples = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, comp = r.call("a", "GET", f"/rest/db/completion?device={r.b['id']}&folder=vault",
                         note="trickle sample")
        _, bstat = r.call("b", "GET", "/rest/db/status?folder=vault", note="trickle sample")
        on_b = os.path.getsize(target) if os.path.exists(target) else None
        samples.append({"t": round(time.time() - start, 1), "a_completion": comp,
                        "b_state": bstat.get("state"), "b_needBytes": bstat.get("needBytes"),
                        "b_has_file_bytes": on_b})
        if on_b == size and bstat.get("needBytes") == 0 and bstat.get("state") == "idle":
            break
        time.sleep(1)
    r.call("b", "PATCH", "/rest/config/options", {"maxRecvKbps": 0, "limitBandwidthInLan": False})
    return {"bytes": size, "maxRecvKbps": kbps, "samples": samples}


# ------------------------------------------------------------------------------------------------


def summarize(r: Recorder, syncthing: str, paths: dict, rest: dict, comps: dict,
              trickle: dict, home_layout: list[str], real_home: dict) -> dict:
    """What docs/syncthing-versions.md compares: shapes, completions, FolderCompletion events."""
    shapes = {}
    for ev in r.events:
        data = ev["data"]
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        shapes.setdefault(ev["type"], [])
        if keys not in shapes[ev["type"]]:
            shapes[ev["type"]].append(keys)
    completions = [
        {"id": ev["id"], "step": ev["_step"], "folder": ev["data"]["folder"],
         "device": "B" if ev["data"]["device"] == r.b["id"] else ev["data"]["device"][:7],
         "remoteState": ev["data"].get("remoteState", "(absent)"),
         "completion": ev["data"]["completion"], "needItems": ev["data"]["needItems"],
         "needBytes": ev["data"]["needBytes"], "needDeletes": ev["data"]["needDeletes"]}
        for ev in r.events if ev["type"] == "FolderCompletion"]
    steps_with_events = {}
    for ev in r.events:
        steps_with_events.setdefault(ev["_step"], []).append(ev["type"])

    def keys(obj):
        return sorted(obj) if isinstance(obj, dict) else None

    status = rest["/rest/system/status"]
    conns = rest["/rest/system/connections"]
    return {
        "version": stlab.run_version(syncthing).stdout.strip(),
        "config_version_generated": r.a["config_version"],
        "paths": paths,
        "home_layout": home_layout,
        "real_home": real_home,
        "shapes": {
            "events": shapes,
            "system_status": keys(status),
            "config_devices_entry": keys(rest["/rest/config/devices"][0]),
            "config_folders_entry": keys(rest["/rest/config/folders"][0]),
            "system_connections": keys(conns),
            "system_connections_entry": keys(conns["connections"][r.b["id"]]),
            "system_connections_entry_settled": comps["connections-settled"]["entry_keys"],
            "completion": keys(comps["connected"]["after"]["body"]),
        },
        "health_no_key": rest["health_no_key"],
        "status_bearer": rest["status_bearer"],
        "status_no_key": rest["status_no_key"],
        "completions_rest": {name: value for name, value in comps.items()},
        "folder_completion_events": completions,
        "event_types_per_step": steps_with_events,
        "trickle": trickle,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="stversions.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--syncthing", required=True, help="the Syncthing binary to measure")
    p.add_argument("--out", required=True, help="directory for the captures")
    p.add_argument("--trickle-bytes", type=int, default=TRICKLE_BYTES)
    p.add_argument("--trickle-kbps", type=int, default=TRICKLE_KBPS, help="B's maxRecvKbps")
    args = p.parse_args(argv)
    try:
        stlab.require_loopback_namespace()  # before any Syncthing process starts
    except stlab.NamespaceError as exc:
        print(f"stversions: {exc}", file=sys.stderr)
        return exc.exit_status
    os.makedirs(args.out, exist_ok=True)
    # raw/ is copied into the fixtures as a whole: no body from an earlier run may linger in it.
    shutil.rmtree(os.path.join(args.out, "raw"), ignore_errors=True)
    lab_dir = tempfile.mkdtemp(prefix="stversions-lab-")
    real_before = real_home_snapshot()
    try:
        paths = scenario_paths(args.syncthing)
        lab = stlab.Lab(lab_dir, syncthing=args.syncthing)
        lab.up()
        r = Recorder(lab, args.out)
        try:
            r.start_events()
            rest = scenario_rest(r)
            comps = scenario_completions(r)
            trickle = scenario_trickle(r, args.trickle_bytes, args.trickle_kbps)
            comps["remote-removed-folder"] = scenario_remote_removed(r)
            r.mark("end")
            r.stop_events()
        finally:
            lab.down()
        home_layout = tree(r.a["home"], "--home")
        real_after = real_home_snapshot()
        real_home = {"unchanged": real_after == real_before, "before": real_before,
                     "after": real_after}
        if not real_home["unchanged"]:
            print("stversions: warning: the real user's Syncthing directories changed during the run "
                  "(summary.json real_home)", file=sys.stderr)
        r.save("events.json", r.events)
        with open(os.path.join(args.out, "raw", "events-FolderCompletion.json"), "w") as f:
            # Each event as Syncthing sent it, re-indented: id, globalID, time, type, data.
            json.dump([{k: v for k, v in ev.items() if not k.startswith("_")}
                       for ev in r.events if ev["type"] == "FolderCompletion"], f, indent=2)
            f.write("\n")
        r.save("steps.json", r.steps)
        r.save("summary.json", summarize(r, args.syncthing, paths, rest, comps, trickle,
                                         home_layout, real_home))
        print(f"stversions: wrote {args.out}/summary.json, events.json, steps.json",
              file=sys.stderr)
    except stlab.LabError as exc:
        print(f"stversions: {exc}", file=sys.stderr)
        return exc.exit_status
    finally:
        shutil.rmtree(lab_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
