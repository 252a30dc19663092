#!/usr/bin/env python3
"""vaultsync-notify benchmark (run through bench/run, inside a loopback-only network namespace).

Measures, against a real two-node Syncthing lab and the relay stand-in:
  1. wake latency beyond the debounce: Syncthing's LocalIndexUpdated event time -> relay receipt, minus
     DEBOUNCE_SECONDS, over N single-file changes (p50, p99, max);
  2. idle memory after M seconds: VmRSS and RssAnon (the process's own private memory) from /proc/PID/status,
     plus the largest file-backed mappings (what dominates VmRSS);
  3. CPU seconds (utime + stime) over S seconds while Syncthing is busy with events that must not wake anyone
     (changes in a folder outside WATCHED_FOLDERS), and how many triggers that caused (must be 0);
  4. the stripped release binary's size.
"""
import argparse
import datetime
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
sys.path.insert(0, str(ROOT / "Tests" / "Lab"))
import stlab  # noqa: E402

BINARY = ROOT / ".build/release/vaultsync-notify"


def parse_time(text):
    """RFC 3339 with 1-9 fractional digits and Z or an offset -> unix seconds (float)."""
    main, frac = text, ""
    if "." in text:
        main, rest = text.split(".", 1)
        i = 0
        while i < len(rest) and rest[i].isdigit():
            i += 1
        frac, tz = rest[:i], rest[i:]
    else:
        tz = text[19:]
        main = text[:19]
    tz = "+00:00" if tz == "Z" else tz
    base = datetime.datetime.fromisoformat(main + tz).timestamp()
    return base + (float("0." + frac) if frac else 0.0)


def proc_status(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def cpu_seconds(pid):
    parts = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(parts[11]) + int(parts[12])) / ticks


def top_mappings(pid, n=6):
    """Largest contributors to RSS by backing file, from /proc/PID/smaps."""
    sizes, current = {}, None
    for line in open(f"/proc/{pid}/smaps"):
        head = line.split()
        if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
            current = head[5] if len(head) >= 6 else "[anon]"
        elif line.startswith("Rss:"):
            sizes[current] = sizes.get(current, 0) + int(head[1])
    return sorted(sizes.items(), key=lambda kv: -kv[1])[:n]


def percentile(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Relay:
    """A minimal relay for timing: a single-threaded selector loop that timestamps each request when its first
    bytes arrive and answers 202 (health: 200 ok). The full stand-in (Tests/Doubles/relay_standin.py) spawns a thread
    per connection and writes a log line before answering, which adds its own milliseconds to what is measured."""

    def __init__(self, workdir):
        import selectors
        import socket
        import threading
        self.sel = selectors.DefaultSelector()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.sel.register(self.listener, selectors.EVENT_READ)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.records = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        import selectors
        buffers, first_seen = {}, {}
        while self.running:
            for key, _ in self.sel.select(timeout=0.2):
                sock = key.fileobj
                if sock is self.listener:
                    conn, _ = sock.accept()
                    conn.setblocking(False)
                    self.sel.register(conn, selectors.EVENT_READ)
                    buffers[conn] = b""
                    continue
                data = sock.recv(65536)
                now = time.time()
                if not data:
                    self.sel.unregister(sock)
                    sock.close()
                    buffers.pop(sock, None)
                    first_seen.pop(sock, None)
                    continue
                first_seen.setdefault(sock, now)
                buffers[sock] += data
                head, sep, rest = buffers[sock].partition(b"\r\n\r\n")
                if not sep:
                    continue
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if len(rest) < length:
                    continue
                path = head.split(b" ")[1].decode()
                with self.lock:
                    self.records.append({"t": first_seen[sock], "path": path, "body": rest[:length].decode()})
                body = b'{"status":"ok","version":"bench"}' if path.endswith("/health") else b'{"status":"accepted"}'
                status = b"200 OK" if path.endswith("/health") else b"202 Accepted"
                sock.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                self.sel.unregister(sock)
                sock.close()
                buffers.pop(sock, None)
                first_seen.pop(sock, None)

    def triggers(self):
        with self.lock:
            return [r for r in self.records if r["path"] == "/api/v1/trigger"]

    def stop(self):
        self.running = False
        self.thread.join(2)


def stop(sidecar, relay):
    """Stops the sidecar (SIGTERM, waiting for its exit) and then the relay; either may be None."""
    if sidecar:
        sidecar.send_signal(signal.SIGTERM)
        sidecar.wait(10)
    if relay:
        relay.stop()


def wait_until(predicate, timeout, interval=0.01):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def breakdown(log_path, triggers, debounce):
    """Splits each wake-up into: wake scheduled -> trigger sent (debounce + timer), trigger sent -> relay receipt."""
    received, sending = [], []
    for line in log_path.read_text().splitlines():
        stamp = parse_time(line.split(" ", 1)[0])
        if 'msg="wake-up scheduled" reason=change' in line:
            received.append(stamp)
        elif 'msg="sending wake-up" reason=change' in line:
            sending.append(stamp)
    timer = [(s - r - debounce) * 1000 for r, s in zip(received, sending)]
    post = [(t["t"] - s) * 1000 for s, t in zip(sending, triggers)]
    if timer and post:
        print(f"  leg: wake scheduled -> trigger sent, beyond the debounce: p50 {percentile(timer, 50):.2f} ms, "
              f"p99 {percentile(timer, 99):.2f} ms (log timestamps have 1 ms resolution)")
        print(f"  leg: trigger sent -> relay receipt: p50 {percentile(post, 50):.2f} ms, p99 {percentile(post, 99):.2f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=50)
    ap.add_argument("--debounce", type=float, default=0.5)
    ap.add_argument("--idle-seconds", type=float, default=60)
    ap.add_argument("--busy-seconds", type=float, default=300)
    ap.add_argument("--breakdown", action="store_true",
                    help="run the sidecar at LOG_LEVEL=debug and split the latency into its legs")
    ap.add_argument("--binary", default=str(BINARY),
                    help="the sidecar to run (default: this checkout's release build); e.g. the arm64 cross build, "
                    "which runs under qemu-user once scripts/lib/qemu-aarch64-binfmt has registered it")
    args = ap.parse_args()
    binary = pathlib.Path(args.binary)

    workdir = pathlib.Path(tempfile.mkdtemp(prefix="vsn-bench-"))
    lab = stlab.Lab(str(workdir / "lab"))
    relay = sidecar = None
    try:
        info = lab.up()
        a = info["a"]
        relay = Relay(workdir)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "RELAY_URL": relay.url,
               "SYNCTHING_CONFIG": a["config_path"], "DEBOUNCE_SECONDS": str(args.debounce),
               "DEBOUNCE_MAX_SECONDS": "30", "STARTUP_ANNOUNCE": "false", "WATCHED_FOLDERS": "vault",
               # This relay has no push window; with the default 30 s window every change after the first would
               # wait for it, and the figure would be the window, not the sidecar (bench/run precision covers it).
               "RELAY_WINDOW_SECONDS": "0",
               "LOG_LEVEL": "debug" if args.breakdown else "info"}
        sidecar = subprocess.Popen([str(binary)], env=env, stderr=open(workdir / "sidecar.log", "w"))
        assert wait_until(lambda: "connected to Syncthing" in (workdir / "sidecar.log").read_text(), 30)

        # 1. Wake latency. A separate subscription (its own mask) reads Syncthing's event times.
        lab.api_json("a", "GET", "/rest/events?events=LocalIndexUpdated&since=0&timeout=0")
        since = 0
        latencies = []
        vault = pathlib.Path(a["folders"]["vault"])
        for i in range(args.changes):
            before = len(relay.triggers())
            (vault / f"bench-{i}.md").write_text(f"change {i}\n")
            assert wait_until(lambda: len(relay.triggers()) > before, 30), "no wake-up"
            receipt = relay.triggers()[-1]["t"]
            events = lab.api_json("a", "GET", f"/rest/events?events=LocalIndexUpdated&since={since}&timeout=5")
            since = events[-1]["id"]
            event_time = parse_time([e for e in events if e["data"]["folder"] == "vault"][-1]["time"])
            latencies.append((receipt - event_time - args.debounce) * 1000)
            time.sleep(args.debounce + 0.3)  # let the trailing debounce close before the next change
        if args.breakdown:
            breakdown(workdir / "sidecar.log", relay.triggers(), args.debounce)
        print(f"wake latency beyond the {args.debounce:g} s debounce over {len(latencies)} changes: "
              f"p50 {percentile(latencies, 50):.2f} ms, p99 {percentile(latencies, 99):.2f} ms, "
              f"max {max(latencies):.2f} ms")

        # 2. Idle memory.
        time.sleep(args.idle_seconds)
        st = proc_status(sidecar.pid)
        print(f"idle after {args.idle_seconds:g} s: VmRSS {st['VmRSS']}, RssAnon {st['RssAnon']}, "
              f"RssFile {st['RssFile']}, VmHWM {st['VmHWM']}")
        print("largest RSS by mapping: " + ", ".join(f"{os.path.basename(k or '?')} {v} kB"
                                                     for k, v in top_mappings(sidecar.pid)))

        # 3. CPU while Syncthing is busy with events that must not wake anyone (folder 'notes' is not watched).
        notes = pathlib.Path(a["folders"]["notes"])
        before_triggers = len(relay.triggers())
        cpu0, t0, n = cpu_seconds(sidecar.pid), time.time(), 0
        while time.time() - t0 < args.busy_seconds:
            for j in range(20):
                (notes / f"noise-{n % 200}.md").write_text(f"noise {n}\n")
                n += 1
            time.sleep(1)
        cpu = cpu_seconds(sidecar.pid) - cpu0
        time.sleep(3)
        print(f"busy {args.busy_seconds:g} s ({n} unwatched changes): {cpu:.2f} CPU seconds, "
              f"{len(relay.triggers()) - before_triggers} triggers (expected 0)")
        st = proc_status(sidecar.pid)
        print(f"after busy: VmRSS {st['VmRSS']}, RssAnon {st['RssAnon']}, VmHWM {st['VmHWM']}")

        # 4. Binary size.
        print(f"release binary: {binary.stat().st_size / 1e6:.2f} MB ({binary.stat().st_size} bytes, stripped)")
    finally:
        stop(sidecar, relay)
        lab.down()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
