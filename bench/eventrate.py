#!/usr/bin/env python3
"""The sidecar's CPU at a steady event rate (run through `bench/run eventrate`, inside a loopback-only namespace).

Tests/Doubles/fake_syncthing.py emits LocalIndexUpdated events for folder `vault` at --rate events per second, each
listing --names file names (its /_control/generate); the release binary long-polls it with the settings it ships with
(WATCHED_FOLDERS unset, debounce 5 s, relay window 30 s) and wakes the minimal relay of bench/bench.py. After
--warmup seconds, the sidecar's CPU (utime + stime of all its threads, /proc/PID/stat) is read over --seconds.

Reported: CPU seconds, the events generated, the events the sidecar consumed (the advance of the `since` its long-polls
asked for, from the fake's request log), its long-polls, and CPU µs per consumed event (long-poll and status reads
included), plus one machine-readable line (EVENTRATE-JSON).
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
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench import Relay, cpu_seconds, proc_status, stop, wait_until  # noqa: E402

KEY = "eventrate-bench-key"


def control(port, method, path, body=None):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body))
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    if resp.status != 200:
        raise RuntimeError(f"{method} {path}: {resp.status} {data[:200]!r}")
    return json.loads(data)


def polls(log_path):
    """The sidecar's long-polls so far (not the head reads): (time, since) from the fake's request log."""
    out = []
    for line in log_path.read_text().splitlines():
        entry = json.loads(line)
        query = entry["query"]
        if entry["route"] == "/rest/events" and query.get("limit") != "1":
            out.append((entry["t"], int(query.get("since", "0"))))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=180, help="measured window (default 180, as in the issue)")
    ap.add_argument("--rate", type=float, default=400, help="events per second (default 400)")
    ap.add_argument("--names", type=int, default=1, help="file names per LocalIndexUpdated event (default 1)")
    ap.add_argument("--warmup", type=float, default=5, help="seconds of events before the window (default 5)")
    ap.add_argument("--binary", default=str(ROOT / ".build/release/vaultsync-notify"),
                    help="the sidecar to run (default: the release binary bench/run builds)")
    ap.add_argument("--keep", help="copy the sidecar log and the fake's request log to this directory")
    args = ap.parse_args()

    workdir = pathlib.Path(tempfile.mkdtemp(prefix="vsn-eventrate-"))
    fake = relay = sidecar = None
    try:
        port_file, request_log = workdir / "port", workdir / "requests.jsonl"
        fake = subprocess.Popen([sys.executable, str(ROOT / "Tests/Doubles/fake_syncthing.py"), "--port", "0",
                                 "--port-file", str(port_file), "--api-key", KEY, "--folders", "vault,notes",
                                 "--log", str(request_log)])
        assert wait_until(port_file.exists, 10), "the fake did not start"
        port = int(port_file.read_text())
        relay = Relay(workdir)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "RELAY_URL": relay.url,
               "SYNCTHING_API_URL": f"http://127.0.0.1:{port}", "SYNCTHING_API_KEY": KEY,
               "STARTUP_ANNOUNCE": "false", "LOG_LEVEL": "info"}
        sidecar = subprocess.Popen([args.binary], env=env, stderr=open(workdir / "sidecar.log", "w"))
        assert wait_until(lambda: "connected to Syncthing" in (workdir / "sidecar.log").read_text(), 30), \
            "the sidecar did not connect"
        assert wait_until(lambda: polls(request_log), 10), "no long-poll"

        control(port, "POST", "/_control/generate", {"rate": args.rate, "names": args.names, "folder": "vault"})
        time.sleep(args.warmup)
        emitted0 = control(port, "GET", "/_control/generate")["emitted"]
        since0, cpu0, t0 = polls(request_log)[-1][1], cpu_seconds(sidecar.pid), time.time()
        fake_cpu0 = cpu_seconds(fake.pid)
        time.sleep(args.seconds)
        cpu, t1 = cpu_seconds(sidecar.pid) - cpu0, time.time()
        fake_cpu = cpu_seconds(fake.pid) - fake_cpu0
        window = [p for p in polls(request_log) if t0 <= p[0] <= t1]
        emitted = control(port, "GET", "/_control/generate")["emitted"] - emitted0
        control(port, "DELETE", "/_control/generate")
        consumed = (window[-1][1] if window else since0) - since0
        status = proc_status(sidecar.pid)
        per_event = cpu * 1e6 / consumed if consumed else float("nan")
        print(f"event rate {args.rate:g}/s, {args.names} file name(s) per event, {t1 - t0:.1f} s measured "
              f"after {args.warmup:g} s of warm-up ({args.binary})")
        print(f"  sidecar CPU {cpu:.2f} s; events generated {emitted}, consumed {consumed}; {len(window)} long-polls "
              f"({consumed / max(1, len(window)):.1f} events each); {per_event:.1f} µs CPU per event; "
              f"VmHWM {status['VmHWM']}, triggers {len(relay.triggers())}")
        # A fake near one full core may fall behind the rate; the events generated per second show it.
        print(f"  the fake: {emitted / (t1 - t0):.0f} events/s generated, {fake_cpu:.2f} CPU s")
        print("EVENTRATE-JSON " + json.dumps({
            "rate": args.rate, "names": args.names, "seconds": round(t1 - t0, 3), "cpu_s": cpu,
            "events_generated": emitted, "events_consumed": consumed, "polls": len(window),
            "cpu_us_per_event": per_event, "vmhwm": status["VmHWM"], "fake_cpu_s": fake_cpu,
            "binary": args.binary}))
    finally:
        stop(sidecar, relay)
        if fake:
            fake.send_signal(signal.SIGTERM)
            fake.wait(10)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for name in ("sidecar.log", "requests.jsonl"):
                if (workdir / name).exists():
                    shutil.copy(workdir / name, args.keep)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
