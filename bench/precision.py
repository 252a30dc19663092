#!/usr/bin/env python3
"""vaultsync-notify precision benchmark (run through `bench/run precision`, inside a loopback-only network
namespace).

How many wake-ups the sidecar sends, how many of them the relay turns into pushes, how many its push window
swallows, and how many changes are left without a push after them, in four scenarios against a real two-node
Syncthing lab (Tests/Lab/stlab.py), the relay stand-in in spec mode (30 s push window, 10 triggers/min: a trigger
inside the window gets 202 without a push) and the release binary:

  a. three edits 12 s apart, the first 1 s after the startup announce was delivered (DEBOUNCE_SECONDS=2);
  b. many small files trickling to a connected peer B whose receive rate is limited (transfer 30-60 s);
  c. one change in a folder shared with no one (created on A through the REST config API);
  d. a stopped peer that needs data, stale-peer sweep every 10 s (STALE_RETRIGGER_SECONDS=10), for ~75 s.

Each scenario runs with the sidecar's RELAY_WINDOW_SECONDS at each value of --windows (default 30, its default,
and 0, which approximates the sidecar before it knew the window), each on a fresh lab and a fresh relay. Before
each scenario, one file in vault is synced to B (so B's index for vault is not empty; --empty-vault skips it).

Definitions: a change is when the test wrote it (a file's write time); a change is "pushed" when a trigger that
caused a push (the stand-in's record has pushed=true) was received after it. Only triggers received before the
scenario's end count (the sidecar's shutdown flush afterwards is not part of the scenario).
"""
import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "Tests" / "Lab"))  # stlab
sys.path.insert(0, str(ROOT / "Tests" / "Doubles"))  # relay_standin
sys.path.insert(0, str(ROOT / "bench"))
import stlab  # noqa: E402
from bench import BINARY, wait_until  # noqa: E402
from relay_standin import RelayStandin  # noqa: E402

RELAY_WINDOW = 30.0   # the stand-in's push window (the real relay's)
PER_MINUTE = 10       # the stand-in's per-minute limit (the real relay's)
DEBOUNCE = 2.0
LEAD = 1.0 + DEBOUNCE  # the lab's fsWatcherDelayS plus the debounce: a change's earliest trigger
TAIL = RELAY_WINDOW + LEAD + 7  # quiet time after a scenario's last action, so a held wake-up can go out
EVENT_MASK = "LocalIndexUpdated,FolderCompletion,DeviceConnected,DeviceDisconnected"


class Run:
    """One scenario at one RELAY_WINDOW_SECONDS: a fresh lab, relay and sidecar, and what they recorded."""

    def __init__(self, args, workdir, scenario, window):
        self.args, self.scenario, self.window = args, scenario, window
        self.dir = workdir / f"{scenario}-window{window}"
        self.dir.mkdir(parents=True)
        self.lab = stlab.Lab(str(self.dir / "lab"), syncthing=args.syncthing)
        self.relay = self.sidecar = self.recorder = None
        self.changes = []   # write times
        self.end = None     # only triggers received before this count
        self.notes = []     # scenario facts for the report (transfer time, ...)
        self.events = []    # A's events of EVENT_MASK, for the diagnosis of a result off its ideal
        self._stop_events = threading.Event()

    # -- plumbing ------------------------------------------------------------------------------------------------

    def up(self):
        self.info = self.lab.up()
        if not self.args.empty_vault:
            self._seed()
        self.relay = RelayStandin(provision_any=True, window_seconds=RELAY_WINDOW, per_minute=PER_MINUTE,
                                  window_mode="spec", log_path=str(self.dir / "relay.jsonl")).start()
        self.recorder = threading.Thread(target=self._record_events, daemon=True)
        self.recorder.start()

    def _seed(self):
        """One file in vault, synced to B before the scenario: B's index for vault is then not empty. (While it is
        empty, A's completion for B reports nothing needed, whatever A has: see docs/benchmarks.md, Precision.)"""
        (pathlib.Path(self.folder("a", "vault")) / "seed.md").write_text("seed\n")
        b_id = self.info["b"]["id"]

        def b_has_it():
            c = self.lab.api_json("a", "GET", f"/rest/db/completion?device={b_id}&folder=vault", timeout=5)
            return c["sequence"] > 0 and c["needItems"] == 0 and c["globalItems"] == 1
        assert wait_until(b_has_it, 60, 0.2), "the seed file did not reach B"

    def start_sidecar(self, **extra):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.dir), "RELAY_URL": self.relay.url,
               "SYNCTHING_CONFIG": self.info["a"]["config_path"], "DEBOUNCE_SECONDS": f"{DEBOUNCE:g}",
               "RELAY_WINDOW_SECONDS": str(self.window), "LOG_LEVEL": "debug"}
        env.update({k: str(v) for k, v in extra.items()})
        self.log_path = self.dir / "sidecar.log"
        self.sidecar = subprocess.Popen([str(BINARY)], env=env, stdin=subprocess.DEVNULL,
                                        stderr=open(self.log_path, "w"))
        assert wait_until(lambda: "connected to Syncthing" in self.log_path.read_text(), 30), "sidecar not connected"
        time.sleep(1)  # its startup snapshot (config, peers) is read right after connecting

    def _record_events(self):
        since = 0
        while not self._stop_events.is_set():
            try:
                batch = self.lab.api_json("a", "GET", f"/rest/events?events={EVENT_MASK}&since={since}&timeout=2",
                                          timeout=10)
            except Exception:  # the lab is going down
                time.sleep(0.2)
                continue
            for e in batch or []:
                since = max(since, e["id"])
                d = e.get("data") or {}
                keep = {k: d[k] for k in ("folder", "device", "id", "items", "needItems", "needBytes",
                                          "needDeletes", "completion", "remoteState", "sequence",
                                          "globalItems", "globalBytes") if k in d}
                self.events.append({"t": time.time(), "time": e["time"], "type": e["type"], **keep})

    def write(self, directory, name, data):
        """Writes one file and records the change's time."""
        (pathlib.Path(directory) / name).write_bytes(data)
        self.changes.append(time.time())

    def folder(self, node, folder):
        return self.info[node]["folders"][folder]

    def finish(self):
        self.end = self.end or time.time()

    def down(self):
        if self.sidecar:
            self.sidecar.send_signal(signal.SIGTERM)
            try:
                self.sidecar.wait(15)
            except subprocess.TimeoutExpired:
                self.sidecar.kill()
                self.sidecar.wait()
        self._stop_events.set()
        if self.recorder:
            self.recorder.join(15)
        if self.relay:
            self.relay.stop()
        try:
            self.lab.down()
        except stlab.LabError as exc:
            print(f"precision: lab down: {exc}", file=sys.stderr)
        (self.dir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in self.events))

    # -- results -------------------------------------------------------------------------------------------------

    def triggers(self):
        return [r for r in self.relay.state.recorded()
                if r["path"].startswith("/api/v1/trigger") and r["t"] <= self.end]

    def result(self):
        trig = self.triggers()
        pushes = [r["t"] for r in trig if r.get("pushed")]
        reasons = []
        for line in self.log_path.read_text().splitlines():
            if 'msg="sending wake-up"' in line:
                reasons.append(line.rsplit("reason=", 1)[-1].split()[0])
        return {
            "scenario": self.scenario, "window": self.window,
            "triggers": len(trig),
            "pushed": len(pushes),
            "swallowed": sum(1 for r in trig if r["status"] == 202 and not r.get("pushed")),
            "refused": sum(1 for r in trig if r["status"] != 202),
            "changes": len(self.changes),
            "unpushed": sum(1 for c in self.changes if not any(p > c for p in pushes)),
            "reasons": reasons[:len(trig)],
            "trigger_offsets": [round(r["t"] - self.t0, 1) for r in trig],
            "pushed_flags": [bool(r.get("pushed")) for r in trig],
            "notes": self.notes,
            "ideal": IDEALS[self.scenario](self),
        }


# ---------------------------------------------------------------------------------------------------------------
# Scenarios. Each sets run.t0 (the origin of the printed trigger offsets) and run.end.

def scenario_a(run):
    """Three edits 12 s apart, the first 1 s after the startup announce was delivered."""
    run.start_sidecar(STARTUP_ANNOUNCE="true", STALE_RETRIGGER_SECONDS=0)
    assert wait_until(lambda: 'msg="wake-up delivered"' in run.log_path.read_text(), 30), "no announce"
    run.t0 = run.relay.state.recorded()[-1]["t"]
    time.sleep(1)
    for i in range(3):
        if i:
            time.sleep(12)
        run.write(run.folder("a", "vault"), f"edit-{i}.md", f"edit {i}\n".encode())
    time.sleep(TAIL)
    run.finish()


def scenario_b(run):
    """Small files to a connected, rate-limited peer B: one wake-up for the whole transfer."""
    run.lab.api_json("b", "PATCH", "/rest/config/options",
                     {"maxRecvKbps": run.args.b_kbps, "limitBandwidthInLan": True})
    run.start_sidecar(STARTUP_ANNOUNCE="false", STALE_RETRIGGER_SECONDS=0)
    run.t0 = time.time()
    size, vault = run.args.b_size, run.folder("a", "vault")
    for i in range(run.args.b_files):
        run.write(vault, f"trickle-{i:03d}.bin", os.urandom(size))
    b_vault = pathlib.Path(run.folder("b", "vault"))
    done = wait_until(lambda: len(list(b_vault.glob("trickle-*.bin"))) >= run.args.b_files, 240, 0.2)
    took = time.time() - run.t0
    run.notes.append(f"transfer {took:.0f} s" + ("" if done else " (not finished)"))
    time.sleep(TAIL)
    run.finish()


def scenario_c(run):
    """One change in a folder that A shares with no one (created through the REST config API)."""
    run.start_sidecar(STARTUP_ANNOUNCE="false", STALE_RETRIGGER_SECONDS=0)
    run.t0 = time.time()
    solo = run.dir / "lab/a/solo"
    solo.mkdir(parents=True)
    run.lab.api_json("a", "POST", "/rest/config/folders",
                     {"id": "solo", "label": "solo", "path": str(solo), "type": "sendreceive",
                      "fsWatcherEnabled": True, "fsWatcherDelayS": 1, "rescanIntervalS": 3600,
                      "devices": [{"deviceID": run.info["a"]["id"]}]})
    assert wait_until(lambda: _folder_idle(run, "solo"), 30, 0.2), "folder solo never became idle"
    time.sleep(2)
    run.write(solo, "alone.md", b"nobody to tell\n")
    time.sleep(TAIL)
    run.finish()


def _folder_idle(run, folder):
    try:
        return run.lab.api_json("a", "GET", f"/rest/db/status?folder={folder}", timeout=5).get("state") == "idle"
    except (OSError, stlab.LabError, ValueError):
        return False


def scenario_d(run):
    """B stopped, then a change B needs; the sweep (every 10 s) wakes for it; observed for --d-seconds."""
    run.start_sidecar(STARTUP_ANNOUNCE="false", STALE_RETRIGGER_SECONDS=10)
    run.lab.stop("b")
    assert wait_until(lambda: not run.lab._connected("a"), 30, 0.2), "A still sees B"
    run.t0 = time.time()
    run.write(run.folder("a", "vault"), "while-away.md", b"B needs this\n")
    time.sleep(run.args.d_seconds)
    run.finish()


SCENARIOS = {"a": scenario_a, "b": scenario_b, "c": scenario_c, "d": scenario_d}
TITLES = {"a": "a. 3 edits 12 s apart (announce on)", "b": "b. small files to a slow, connected peer",
          "c": "c. change in an unshared folder", "d": "d. stopped peer, sweep every 10 s"}


def _ideal_d(run):
    # One push per relay window, the first one LEAD after the change: no more, no fewer, none swallowed.
    pushes = 1 + int((run.end - run.changes[0] - LEAD) // RELAY_WINDOW)
    return {"triggers": pushes, "pushed": pushes, "swallowed": 0, "unpushed": 0}


IDEALS = {
    # The announce and one wake-up after the edits (the window allows no second push before the third edit).
    "a": lambda run: {"triggers": 2, "pushed": 2, "swallowed": 0, "unpushed": 0},
    "b": lambda run: {"triggers": 1, "pushed": 1, "swallowed": 0, "unpushed": 0},
    # Nobody to wake: the change rightly stays without a push.
    "c": lambda run: {"triggers": 0, "pushed": 0, "swallowed": 0, "unpushed": 1},
    "d": _ideal_d,
}


def print_table(version, results):
    print(f"\nSyncthing {version}; relay stand-in spec mode ({RELAY_WINDOW:g} s window, {PER_MINUTE}/min); "
          f"measured [ideal]")
    head = f"{'scenario':42} {'RELAY_WINDOW':>12} {'triggers':>9} {'pushed':>9} {'swallowed':>10} " \
           f"{'unpushed':>12}  notes"
    print(head)
    print("-" * len(head))
    for r in results:
        i = r["ideal"]
        cells = [f"{r[k]} [{i[k]}]" for k in ("triggers", "pushed", "swallowed")]
        unpushed = f"{r['unpushed']}/{r['changes']} [{i['unpushed']}]"
        notes = list(r["notes"])
        if r["refused"]:
            notes.append(f"{r['refused']} refused (not 202)")
        timeline = " ".join(f"{o:+.1f}{'P' if p else 's'}" for o, p in zip(r["trigger_offsets"], r["pushed_flags"]))
        notes.append(f"triggers at {timeline or '-'}; reasons {','.join(r['reasons']) or '-'}")
        print(f"{TITLES[r['scenario']]:42} {r['window']:>12} {cells[0]:>9} {cells[1]:>9} {cells[2]:>10} "
              f"{unpushed:>12}  {'; '.join(notes)}")
    print("(triggers at: seconds after the scenario's origin, P pushed, s swallowed; a: origin = the announce, "
          "b-d: the first write)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--syncthing", help="Syncthing binary for both nodes (default: syncthing on PATH)")
    ap.add_argument("--scenarios", default="abcd", help="which scenarios, e.g. 'ad' (default abcd)")
    ap.add_argument("--windows", default="30,0", help="RELAY_WINDOW_SECONDS values to run (default 30,0)")
    ap.add_argument("--b-files", type=int, default=120)
    ap.add_argument("--b-size", type=int, default=8192, help="bytes per file in b (default 8192)")
    ap.add_argument("--b-kbps", type=int, default=10,
                    help="B's maxRecvKbps in b, KiB/s (default 10; the first 512 KiB pass unthrottled, Syncthing's "
                         "limiter burst)")
    ap.add_argument("--d-seconds", type=float, default=75, help="how long d observes after its change (default 75)")
    ap.add_argument("--empty-vault", action="store_true",
                    help="skip the seed file: B's index for vault starts empty (shows Syncthing's need-0 report)")
    ap.add_argument("--keep", help="copy each run's sidecar log, relay log and A's events into this directory")
    ap.add_argument("--json", help="also write the results here as JSON")
    args = ap.parse_args()
    windows = [int(w) for w in args.windows.split(",")]

    syncthing = args.syncthing or shutil.which("syncthing") or "/usr/bin/syncthing"
    args.syncthing = syncthing
    version = subprocess.run([syncthing, "--version"], capture_output=True, text=True).stdout.split()[1]
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="vsn-precision-"))
    results = []
    try:
        for scenario in args.scenarios:
            for window in windows:
                run = Run(args, workdir, scenario, window)
                print(f"precision: {syncthing} {version}: scenario {scenario}, RELAY_WINDOW_SECONDS={window}",
                      file=sys.stderr, flush=True)
                try:
                    run.up()
                    SCENARIOS[scenario](run)
                    results.append(run.result())
                finally:
                    run.down()
                if args.keep:
                    dest = pathlib.Path(args.keep) / version / run.dir.name
                    dest.mkdir(parents=True, exist_ok=True)
                    for name in ("sidecar.log", "relay.jsonl", "events.jsonl"):
                        if (run.dir / name).exists():
                            shutil.copy(run.dir / name, dest / name)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print_table(version, results)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"syncthing": version, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
