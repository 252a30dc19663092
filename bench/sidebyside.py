#!/usr/bin/env python3
"""Two sidecars side by side in one lab: CPU per event and idle memory, and their ratio (`bench/run sidebyside`).

Runs inside a loopback-only namespace. Each binary long-polls its own Tests/Doubles/fake_syncthing.py (two fakes,
so that two builds of this project, which send the same requests, are told apart), both fakes emit the same
LocalIndexUpdated events at --rate per second with --names file names each, started in the same instant, and both
sidecars wake one minimal relay (bench/bench.py). After --warmup seconds, each sidecar's CPU (utime + stime of all its
threads) is read over the same --seconds window and divided by the events it consumed (the advance of the `since` its
long-polls asked for, from its fake's request log). Then the events stop and, after --idle-seconds, each one's VmRSS
is read.

The first binary is this checkout's release build (--binary, default .build/release/vaultsync-notify); the second
(--against) is the Go reference helper 2.0.2 by default (../shared/reference/, beside the checkout), or any other
build, e.g. a previous release's, to show that nothing crept up. Printed: one line per binary, the ratios
("first/second"), and one machine-readable line (SIDEBYSIDE-JSON). Exit status 0; the figures are for reading, as
every benchmark's here (docs/benchmarks.md).
"""
import argparse
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench import Relay, cpu_seconds, proc_status, wait_until  # noqa: E402
from eventrate import KEY, control, polls  # noqa: E402

REFERENCE_PLACES = [ROOT.parent / "shared/reference/vaultsync-notify-go-linux-amd64",
                    pathlib.Path("/work/shared/reference/vaultsync-notify-go-linux-amd64")]


class Side:
    """One binary with its own fake Syncthing."""

    def __init__(self, name, binary, workdir, relay_url):
        self.name, self.binary = name, binary
        self.dir = workdir / name
        self.dir.mkdir()
        port_file, self.requests = self.dir / "port", self.dir / "requests.jsonl"
        self.fake = subprocess.Popen([sys.executable, str(ROOT / "Tests/Doubles/fake_syncthing.py"), "--port", "0",
                                      "--port-file", str(port_file), "--api-key", KEY, "--folders", "vault,notes",
                                      "--log", str(self.requests)])
        self.sidecar = None
        assert wait_until(port_file.exists, 10), f"{name}: the fake did not start"
        self.port = int(port_file.read_text())
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.dir), "RELAY_URL": relay_url,
               "SYNCTHING_API_URL": f"http://127.0.0.1:{self.port}", "SYNCTHING_API_KEY": KEY,
               "STARTUP_ANNOUNCE": "false", "LOG_LEVEL": "info"}
        self.sidecar = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL,
                                        stderr=open(self.dir / "sidecar.log", "w"))

    def polling(self):
        return bool(polls(self.requests))

    def stop(self):
        for proc in (self.sidecar, self.fake):
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def kib(text):
    return int(text.split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=str(ROOT / ".build/release/vaultsync-notify"),
                    help="the first sidecar (default: the release binary bench/run builds)")
    ap.add_argument("--against", help="the second sidecar (default: the Go reference helper in ../shared/reference)")
    ap.add_argument("--seconds", type=float, default=60, help="measured window (default 60)")
    ap.add_argument("--rate", type=float, default=380, help="events per second, each fake (default 380)")
    ap.add_argument("--names", type=int, default=1, help="file names per event (default 1)")
    ap.add_argument("--warmup", type=float, default=5, help="seconds of events before the window (default 5)")
    ap.add_argument("--idle-seconds", type=float, default=20, help="seconds after the events before VmRSS is read")
    args = ap.parse_args()
    against = args.against
    if against is None:
        against = next((str(p) for p in REFERENCE_PLACES if p.is_file()), None)
        if against is None:
            sys.exit("bench/run sidebyside: no reference helper in ../shared/reference; name one with --against PATH")

    workdir = pathlib.Path(tempfile.mkdtemp(prefix="vsn-sidebyside-"))
    relay, sides = None, []
    try:
        relay = Relay(workdir)
        sides = [Side("first", args.binary, workdir, relay.url), Side("second", against, workdir, relay.url)]
        for side in sides:
            assert wait_until(side.polling, 30), f"{side.name} ({side.binary}) never long-polled its fake"
        spec = {"rate": args.rate, "names": args.names, "folder": "vault"}
        for side in sides:
            control(side.port, "POST", "/_control/generate", spec)
        time.sleep(args.warmup)
        start = [(polls(s.requests)[-1][1], cpu_seconds(s.sidecar.pid)) for s in sides]
        t0 = time.time()
        time.sleep(args.seconds)
        cpu = [cpu_seconds(s.sidecar.pid) - start[i][1] for i, s in enumerate(sides)]
        t1 = time.time()
        for side in sides:
            control(side.port, "DELETE", "/_control/generate")
        results = []
        for i, side in enumerate(sides):
            window = [p for p in polls(side.requests) if t0 <= p[0] <= t1]
            consumed = (window[-1][1] if window else start[i][0]) - start[i][0]
            results.append({"binary": side.binary, "cpu_s": cpu[i], "events_consumed": consumed,
                            "polls": len(window), "cpu_us_per_event": cpu[i] * 1e6 / consumed if consumed else None,
                            "vmhwm_kb": kib(proc_status(side.sidecar.pid)["VmHWM"])})
        time.sleep(args.idle_seconds)
        for i, side in enumerate(sides):
            status = proc_status(side.sidecar.pid)
            results[i]["idle_vmrss_kb"] = kib(status["VmRSS"])
            # Where it is: the heap and stacks (anonymous), or pages of the binary (file-backed).
            results[i]["idle_rss_anon_kb"] = kib(status["RssAnon"])
            results[i]["idle_rss_file_kb"] = kib(status["RssFile"])

        print(f"side by side: {args.rate:g} events/s each, {args.names} file name(s) per event, "
              f"{t1 - t0:.1f} s measured after {args.warmup:g} s of warm-up; VmRSS {args.idle_seconds:g} s after")
        for name, r in zip(("first ", "second"), results):
            per = r["cpu_us_per_event"]
            print(f"  {name} {r['cpu_s']:.2f} CPU s for {r['events_consumed']} events in {r['polls']} long-polls: "
                  f"{per:.1f} µs per event; idle VmRSS {r['idle_vmrss_kb']} kB ({r['idle_rss_anon_kb']} anonymous, "
                  f"{r['idle_rss_file_kb']} of the binary), VmHWM {r['vmhwm_kb']} kB "
                  f"({r['binary']})" if per else f"  {name} {r['events_consumed']} events, less CPU than one "
                  f"clock tick ({r['binary']})")
        a, b = results
        ratio = {}
        if a["cpu_us_per_event"] and b["cpu_us_per_event"]:  # both measurable (a tick is 10 ms of CPU)
            ratio["cpu_per_event"] = a["cpu_us_per_event"] / b["cpu_us_per_event"]
        ratio["idle_vmrss"] = a["idle_vmrss_kb"] / b["idle_vmrss_kb"]
        print("  first/second: " + ", ".join(f"{k.replace('_', ' ')} {v:.2f}×" for k, v in ratio.items()))
        print("SIDEBYSIDE-JSON " + json.dumps({"rate": args.rate, "names": args.names, "seconds": round(t1 - t0, 3),
                                               "first": a, "second": b, "ratio": ratio}))
    finally:
        for side in sides:
            side.stop()
        if relay:
            relay.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
