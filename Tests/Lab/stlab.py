#!/usr/bin/env python3
"""stlab: a two-node real-Syncthing lab (A and B sharing ``vault`` and ``notes``) on loopback.

For end-to-end tests and demos of vaultsync-notify.  Python 3 standard library only.

Safety
------
stlab refuses to do anything (exit status 2) unless it runs in a network namespace whose only
interface is ``lo``.  It checks both ``/sys/class/net`` and ``/proc/self/net/dev``:
``/sys/class/net`` shows the namespace that *mounted* sysfs, not the caller's, so under a plain
``unshare --net`` it still lists the host's interfaces and stlab refuses.  Open a session shell
with sysfs remounted and run every stlab command from it::

    unshare --net --mount --pid --fork --mount-proc bash -c 'mount -t sysfs sysfs /sys && exec bash'
    python3 Tests/Lab/stlab.py up --dir /tmp/lab
    eval "$(python3 Tests/Lab/stlab.py env --dir /tmp/lab)"
    ...
    python3 Tests/Lab/stlab.py down --dir /tmp/lab
    exit

The PID namespace is optional but recommended: its init (that bash) reaps the Syncthing
monitors once ``up`` has exited (this machine's PID 1 does not reap orphans, so without it
``down`` from a later command leaves ``<defunct>`` entries), and leaving the shell kills any
Syncthing that is still running.  REST calls only reach the lab from the namespace it was
brought up in, so stlab records the network and PID namespaces in lab.json and refuses to act
on the lab from any other.

Before the first start, every node gets a config.xml of stlab's own with global and local
discovery, relays, NAT, usage reporting, crash reporting, upgrades, startBrowser,
announceLANAddresses, restartOnWakeup and STUN off, a loopback listen address, loopback
addresses for both devices and a loopback GUI with a known API key.  Every Syncthing process
(including ``syncthing generate``) runs with a clean environment in its own session/process
group; stlab only ever signals process groups it recorded in ``DIR/lab.json``, after checking
``/proc/PID/cmdline`` holds this lab's ``--home``.

Layout under ``--dir DIR``::

    DIR/lab.json                   state: ports, keys, IDs, PIDs
    DIR/a/home/config.xml          node A (and its keys and database)
    DIR/a/vault  DIR/a/notes       A's folders
    DIR/a/syncthing.log            A's stdout+stderr (appended across restarts)
    DIR/b/...                      node B

Ports: with ``--base-port P``, A uses GUI P and listen P+1, B uses GUI P+2 and listen P+3;
with 0 (the default) four free loopback ports are picked.

Importable: ``Lab(dir).up()`` returns the same document the ``up`` command prints.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from datetime import datetime

NODES = ("a", "b")
FOLDERS = ("vault", "notes")
CONFIG_VERSION = "36"  # Syncthing 1.19; up() writes the version the binary's own generate wrote
UP_TIMEOUT = 60.0
# Syncthing 2.1.3 stopped within about a second of (re)connecting to its peer takes 10 s to exit (its further
# connections to the peer are still being set up); 1.x and a settled 2.x exit in well under a second.
STOP_GRACE = 20.0
CLEAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
SESSION_HINT = ("unshare --net --mount --pid --fork --mount-proc "
                "bash -c 'mount -t sysfs sysfs /sys && exec bash'")

#: <options> written before the first start.  Everything that could reach beyond loopback is
#: off; reconnectionIntervalS is short so restarts and resumes reconnect quickly.
LOCKDOWN_OPTIONS = (
    ("globalAnnounceEnabled", "false"),
    ("localAnnounceEnabled", "false"),
    ("relaysEnabled", "false"),
    ("natEnabled", "false"),
    ("urAccepted", "-1"),
    ("urSeen", "3"),
    ("crashReportingEnabled", "false"),
    ("autoUpgradeIntervalH", "0"),
    ("startBrowser", "false"),
    ("announceLANAddresses", "false"),
    ("restartOnWakeup", "false"),
    ("stunKeepaliveStartS", "0"),
    ("reconnectionIntervalS", "5"),
    ("setLowPriority", "false"),
)


class LabError(Exception):
    """A lab operation failed; ``exit_status`` is what the CLI exits with."""

    exit_status = 1


class NamespaceError(LabError):
    """Not running in a loopback-only network namespace."""

    exit_status = 2


def _connection_lost(exc: BaseException) -> bool:
    """Whether *exc* is a connection that ended without an answer (urllib raises some wrapped)."""
    return (isinstance(exc, ConnectionError)
            or isinstance(getattr(exc, "reason", None), ConnectionError))


def _gui_move_outcome(new_answers, old_address, new_address: str, deadline: float) -> bool:
    """After a GUI change whose answer was lost: True once the GUI answers at its new address,
    False when the old address still serves a config with the old GUI address (the change never
    arrived).  While the old address serves the new config, the GUI server's restart is pending.

    *new_answers* () -> bool probes the new address with the new key; *old_address* () -> str |
    None reads the GUI address the old one serves.  Raises LabError at *deadline*.
    """
    while True:
        if new_answers():
            return True
        served = old_address()
        if served is not None and served != new_address:
            return False
        if time.monotonic() > deadline:
            raise LabError("timed out waiting for the GUI to answer at its new address")
        time.sleep(0.1)


# --------------------------------------------------------------------------------------------
# Namespace checks


def namespace_problem() -> str | None:
    """Return why this is not a loopback-only network namespace, or None if it is.

    Both views must list only ``lo``: ``/sys/class/net`` (as the lab contract asks) and
    ``/proc/self/net/dev`` (always the calling process's namespace).
    """
    try:
        sys_ifaces = sorted(os.listdir("/sys/class/net"))
    except OSError as exc:
        return f"cannot list /sys/class/net: {exc}"
    try:
        with open("/proc/self/net/dev") as f:
            proc_ifaces = sorted(line.split(":", 1)[0].strip() for line in f.readlines()[2:])
    except OSError as exc:
        return f"cannot read /proc/self/net/dev: {exc}"
    if proc_ifaces != ["lo"]:
        return ("this network namespace has interfaces " + ", ".join(proc_ifaces) +
                "; open a loopback-only shell first: " + SESSION_HINT)
    if sys_ifaces != ["lo"]:
        return ("/sys/class/net lists " + ", ".join(sys_ifaces) + " although this namespace has "
                "only lo: sysfs was mounted by another namespace (plain 'unshare --net' does "
                "this). Remount it in a private mount namespace: " + SESSION_HINT)
    return None


def namespace_ids() -> dict:
    """Identities of the caller's network and PID namespaces, e.g. ``net:[4026532305]``."""
    return {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in ("net", "pid")}


def require_loopback_namespace():
    """Raise NamespaceError unless loopback-only; then bring ``lo`` up."""
    problem = namespace_problem()
    if problem:
        raise NamespaceError("stlab refuses to run: " + problem)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


# --------------------------------------------------------------------------------------------
# Processes (only ever by recorded PID / process group, never by name)


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, pgrp, starttime in clock ticks) of *pid*, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # comm (field 2) is in parentheses and may contain spaces: split after the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[0], int(fields[2]), int(fields[19])


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except (FileNotFoundError, ProcessLookupError):
        return []


def _has_home(pid: int, home: str) -> bool:
    """True if *pid*'s command line contains ``--home HOME`` or ``--home=HOME``."""
    argv = _cmdline(pid)
    return any(a == "--home" and b == home for a, b in zip(argv, argv[1:])) or (
        f"--home={home}" in argv)


def is_alive(pid: int) -> bool:
    """True if *pid* exists and is not a zombie."""
    st = _proc_stat(pid)
    return st is not None and st[0] != "Z"


def _group_alive(pgid: int) -> bool:
    """True while any non-zombie process is in process group *pgid*.

    Used only for *waiting*: a process that is exiting may already show an empty cmdline, so
    this does not require the --home check that signalling does.
    """
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st and st[1] == pgid and st[0] != "Z":
                return True
    return False


def _group_members(pgid: int, home: str) -> list[int]:
    """Live processes in process group *pgid* whose command line holds this lab's --home."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st and st[1] == pgid and st[0] != "Z" and _has_home(int(entry), home):
                members.append(int(entry))
    return members


# --------------------------------------------------------------------------------------------
# config.xml


def build_config(*, name: str, device_id: str, listen_port: int, gui_port: int, api_key: str,
                 peer_name: str, peer_id: str, peer_listen_port: int,
                 folders: dict[str, str], config_version: str = CONFIG_VERSION) -> bytes:
    """Return a complete, locked-down config.xml for one lab node.

    The elements are those of Syncthing 1.19 (config version 36), which 1.29 (version 37) reads
    unchanged: its only migration from 36 renames a folder's scanOwnership to sendOwnership, which
    the lab does not set.  So *config_version* is the version the binary's ``generate`` wrote, and
    no release migrates (or archives as ``config.xml.v36``) the lab's file at its first start.
    """
    root = ET.Element("configuration", version=config_version)
    for folder_id, path in folders.items():
        f = ET.SubElement(root, "folder", {
            "id": folder_id, "label": folder_id, "path": path, "type": "sendreceive",
            "rescanIntervalS": "3600", "fsWatcherEnabled": "true", "fsWatcherDelayS": "1",
            "ignorePerms": "false", "autoNormalize": "true"})
        ET.SubElement(f, "filesystemType").text = "basic"
        for dev in (device_id, peer_id):
            ET.SubElement(f, "device", id=dev, introducedBy="")
        ET.SubElement(f, "minDiskFree", unit="%").text = "0"
        ET.SubElement(f, "markerName").text = ".stfolder"
    # Both devices get explicit loopback addresses (no "dynamic" anywhere).
    for dev_name, dev_id, port in ((name, device_id, listen_port),
                                   (peer_name, peer_id, peer_listen_port)):
        d = ET.SubElement(root, "device", {"id": dev_id, "name": dev_name,
                                           "compression": "metadata", "introducer": "false"})
        ET.SubElement(d, "address").text = f"tcp://127.0.0.1:{port}"
        ET.SubElement(d, "paused").text = "false"
        ET.SubElement(d, "autoAcceptFolders").text = "false"
    gui = ET.SubElement(root, "gui", enabled="true", tls="false", debugging="false")
    ET.SubElement(gui, "address").text = f"127.0.0.1:{gui_port}"
    ET.SubElement(gui, "apikey").text = api_key
    ET.SubElement(gui, "theme").text = "default"
    options = ET.SubElement(root, "options")
    ET.SubElement(options, "listenAddress").text = f"tcp://127.0.0.1:{listen_port}"
    for key, value in LOCKDOWN_OPTIONS:
        ET.SubElement(options, key).text = value
    ET.indent(root, space="    ")
    return ET.tostring(root, encoding="utf-8") + b"\n"


def run_version(binary: str) -> subprocess.CompletedProcess:
    """``binary --version`` run to completion (text output captured), with a clean environment.

    2.x panics without $HOME even for --version; an empty one of its own keeps the real one untouched.
    Raises LabError when it cannot be started or takes more than 30 s.
    """
    try:
        with tempfile.TemporaryDirectory(prefix="stlab-version-") as home:
            return subprocess.run([binary, "--version"], env={"PATH": CLEAN_PATH, "HOME": home},
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"cannot run {binary} --version: {exc}") from exc


def syncthing_version(binary: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a Syncthing binary, from ``syncthing --version`` (``run_version``).

    Raises LabError when the binary does not run or does not print ``syncthing vX.Y.Z``.
    """
    proc = run_version(binary)
    words = proc.stdout.split()
    if proc.returncode != 0 or len(words) < 2 or words[0] != "syncthing" or not words[1].startswith("v"):
        raise LabError(f"{binary} --version did not name a Syncthing release: "
                       f"{(proc.stdout + proc.stderr).strip()[:200]!r}")
    parts = (words[1][1:].split("-", 1)[0].split(".") + ["0", "0"])[:3]
    try:
        return tuple(int(p) for p in parts)  # type: ignore[return-value]
    except ValueError as exc:
        raise LabError(f"{binary} --version: unreadable release {words[1]!r}") from exc


def generate_args(version: tuple[int, ...], home: str | None) -> list[str]:
    """Arguments after the binary for ``syncthing generate`` without a default folder or port probing.

    1.x: ``--no-default-folder --skip-port-probing``; 2.x has neither (it creates no default folder at
    all) and takes ``--no-port-probing`` instead.
    """
    args = ["generate"] + (["--home", home] if home else [])
    if version[0] >= 2:
        return args + ["--no-port-probing"]
    return args + ["--no-default-folder", "--skip-port-probing"]


def serve_args(version: tuple[int, ...], home: str) -> list[str]:
    """Arguments after the binary for a lab node's ``syncthing serve``.

    1.x logs without date prefixes with ``--logflags=0``; 2.x has no such flag (its log lines keep their
    timestamps), and ``--no-upgrade``, ``--no-restart`` and ``--no-browser`` are common to both.
    """
    args = ["serve", "--home", home, "--no-browser", "--no-restart", "--no-upgrade"]
    return args if version[0] >= 2 else args + ["--logflags=0"]


def _resolve_binary(binary: str) -> str:
    """An absolute path for a Syncthing binary given as a path (relative to here) or a name on the caller's PATH.

    Nodes run in their own directories with a clean PATH, so a relative path or a bare name would not be found
    there. An empty value is refused: it would silently start the default Syncthing instead of the one meant.
    """
    if not binary.strip():
        raise LabError("--syncthing is empty (an unset variable?); name a Syncthing binary")
    found = os.path.abspath(binary) if os.sep in binary else shutil.which(binary)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise LabError(f"--syncthing {binary}: not an executable file")
    return found


def paths_args(version: tuple[int, ...]) -> list[str]:
    """Arguments after the binary that print where config.xml, keys and database live, then exit.

    1.x: ``serve --paths``; 2.x moved it to its own subcommand, ``paths``.
    """
    return ["paths"] if version[0] >= 2 else ["serve", "--paths"]


def _write_atomically(path: str, data: bytes):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _free_ports(n: int) -> list[int]:
    """*n* distinct free loopback TCP ports (all held open at once while choosing)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _parse_start_time(value: str) -> float:
    """Unix time of a ``startTime`` such as ``2026-11-30T00:47:14Z`` or ``...+01:00``."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


# --------------------------------------------------------------------------------------------
# The lab


class Lab:
    """A two-node Syncthing lab whose state lives in ``DIR/lab.json``.

    Construction checks the network namespace (NamespaceError) and brings ``lo`` up.
    """

    def __init__(self, directory: str, syncthing: str | None = None):
        require_loopback_namespace()
        self.dir = os.path.abspath(directory)
        self.state_path = os.path.join(self.dir, "lab.json")
        self._procs: dict[int, subprocess.Popen] = {}  # children of this process, for reaping
        self.state = self._load()
        # A lab keeps the binary it was brought up with (start/restart from a later command too).
        if syncthing is not None:
            syncthing = _resolve_binary(syncthing)
        self.syncthing = (syncthing or self.state.get("syncthing") or shutil.which("syncthing")
                          or "/usr/bin/syncthing")
        self._version: tuple[int, int, int] | None = None

    @property
    def version(self) -> tuple[int, int, int]:
        """The lab binary's release, read once (``syncthing --version``); its flags depend on it."""
        if self._version is None:
            self._version = syncthing_version(self.syncthing)
        return self._version

    # -- state --------------------------------------------------------------------------------

    def _load(self) -> dict:
        try:
            with open(self.state_path) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def _save(self):
        os.makedirs(self.dir, exist_ok=True)
        _write_atomically(self.state_path, json.dumps(self.state, indent=2).encode() + b"\n")

    def _check_namespaces(self, signals_only: bool = False):
        """Refuse to act on a lab that was brought up in other namespaces.

        REST calls only reach the lab from its own network namespace, and recorded PIDs only
        mean something in its own PID namespace.  *signals_only* operations (down, stop) need
        just the PID namespace.
        """
        recorded = self.state.get("namespaces")
        if not recorded:
            return
        current = namespace_ids()
        kinds = ("pid",) if signals_only else ("net", "pid")
        wrong = [k for k in kinds if recorded.get(k) != current[k]]
        if wrong:
            raise LabError(
                f"this lab was brought up in {', '.join(recorded[k] for k in wrong)}, but this "
                f"process is in {', '.join(current[k] for k in wrong)}; run stlab from the shell "
                f"that ran 'up' (or enter its namespaces with nsenter). If that namespace has "
                f"ended, its Syncthing processes ended with it: remove {self.state_path}")

    def _node(self, node: str) -> dict:
        key = node.lower()
        if key not in NODES:
            raise LabError(f"unknown node {node!r} (use a or b)")
        if key not in self.state.get("nodes", {}):
            raise LabError(f"no lab in {self.dir} (run up first)")
        return self.state["nodes"][key]

    @staticmethod
    def _peer(node: str) -> str:
        return "b" if node.lower() == "a" else "a"

    # -- REST -----------------------------------------------------------------------------------

    def api(self, node: str, method: str, path: str, body=None, timeout: float = 30.0):
        """One REST call to *node*; returns ``(status, body bytes)``.

        *body* may be bytes, str or a JSON-serialisable object.  HTTP errors are returned, not
        raised; connection errors raise OSError (urllib.error.URLError is one).
        """
        n = self._node(node)
        return self._request(n["gui_port"], n["api_key"], method, path, body, timeout)

    def _request(self, port: int, api_key: str, method: str, path: str, body=None,
                 timeout: float = 30.0):
        """:meth:`api` at 127.0.0.1:*port* with *api_key*, whatever the state records."""
        self._check_namespaces()
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else (
                body.encode() if isinstance(body, str) else json.dumps(body).encode())
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                     method=method.upper(),
                                     headers={"X-API-Key": api_key,
                                              "Content-Type": "application/json"})
        # No proxies: an inherited http_proxy must never redirect lab traffic.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(req, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def api_json(self, node: str, method: str, path: str, body=None, timeout: float = 30.0):
        """Like :meth:`api` but requires 2xx and returns the parsed JSON body."""
        status, raw = self.api(node, method, path, body, timeout)
        if not 200 <= status < 300:
            raise LabError(f"{method} {path} on {node.upper()}: HTTP {status}: "
                           f"{raw[:200].decode(errors='replace')}")
        return json.loads(raw) if raw.strip() else None

    def _try_status(self, node: str) -> dict | None:
        try:
            status, raw = self.api(node, "GET", "/rest/system/status", timeout=2)
        except (OSError, ValueError):
            return None
        return json.loads(raw) if status == 200 else None

    # -- processes ------------------------------------------------------------------------------

    def _clean_env(self, n: dict) -> dict:
        """The whole environment a Syncthing process gets (the equivalent of ``env -i``).

        STHASHING=minio names the SHA-256 implementation that auto-detection picks anyway on
        amd64; naming it skips the startup benchmark and saves ~0.8 s per start.
        """
        return {"HOME": n["home"], "PATH": CLEAN_PATH, "STNOUPGRADE": "1", "STNORESTART": "1",
                "STNODEFAULTFOLDER": "1", "STHASHING": "minio"}

    def _running_pids(self, n: dict) -> list[int]:
        """Live processes of a node: its recorded group, verified by cmdline --home."""
        if not n.get("pgid"):
            return []
        return _group_members(n["pgid"], n["home"])

    def _spawn(self, node: str):
        """Start ``syncthing serve`` for *node* in a new session and record it."""
        self._check_namespaces()  # never start a node in a different namespace
        n = self._node(node)
        if self._running_pids(n):
            raise LabError(f"node {node.upper()} is already running")
        argv = [self.syncthing] + serve_args(self.version, n["home"])
        with open(n["log"], "ab") as log:
            log.write(f"--- stlab: starting {node.upper()} at {time.ctime()} ---\n".encode())
            log.flush()
            # start_new_session=True is setsid(): the monitor and its worker child form a
            # process group of their own, whose id is the monitor's PID.
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, env=self._clean_env(n),
                                    cwd=os.path.dirname(n["home"]), start_new_session=True,
                                    close_fds=True)
        self._procs[proc.pid] = proc
        st = _proc_stat(proc.pid)
        n.update(pid=proc.pid, pgid=proc.pid, proc_start=st[2] if st else None)
        self._save()

    def _wait_status(self, node: str, deadline: float, not_start_time: str | None = None) -> dict:
        """Poll /rest/system/status until it answers (with a startTime != not_start_time)."""
        n = self._node(node)
        while True:
            status = self._try_status(node)
            if status and status.get("myID") == n["id"] and status.get("startTime") != not_start_time:
                return status
            # Alive by process group, not by --home in /proc/PID/cmdline: that reads empty for a moment while
            # the just-spawned process is still inside execve (seen in 3 of 8 lab starts in a PID namespace).
            if n.get("pid") and not _group_alive(n["pgid"]):
                # The status tells a real exit (a number; negative: the signal) from a group that is gone
                # without an exit status of ours (None).
                proc = self._procs.get(n["pid"])
                code = proc.poll() if proc else "unknown"
                raise LabError(f"Syncthing {node.upper()} exited during startup (status {code}); "
                               f"see {n['log']}")
            if time.monotonic() > deadline:
                raise LabError(f"timed out waiting for {node.upper()}'s /rest/system/status; "
                               f"see {n['log']}")
            time.sleep(0.1)

    def _signal_node(self, n: dict, sig: int):
        """Send *sig* to the node's recorded process group after verifying it is this lab's."""
        pid, pgid = n.get("pid"), n.get("pgid")
        st = _proc_stat(pid) if pid else None
        leader_ok = (st is not None and st[0] != "Z" and st[1] == pgid and _has_home(pid, n["home"])
                     and (n.get("proc_start") is None or st[2] == n["proc_start"]))
        if leader_ok:
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                pass
            return
        # The recorded monitor is gone: signal only verified members of its group.
        for member in _group_members(pgid, n["home"]) if pgid else []:
            try:
                os.kill(member, sig)
            except ProcessLookupError:
                pass

    def _reap(self):
        """Collect exit statuses of our own children that have ended (no zombies)."""
        for pid, proc in list(self._procs.items()):
            if proc.poll() is not None:
                del self._procs[pid]

    def stop(self, node: str, grace: float = STOP_GRACE):
        """Stop *node*: SIGTERM to its process group, then SIGKILL after *grace* seconds."""
        n = self._node(node)
        pgid = n.get("pgid")
        if pgid:
            self._check_namespaces(signals_only=True)
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                if not _group_alive(pgid):
                    break
                self._signal_node(n, sig)
                deadline = time.monotonic() + wait
                while _group_alive(pgid) and time.monotonic() < deadline:
                    self._reap()
                    time.sleep(0.05)
            if _group_alive(pgid):
                raise LabError(f"node {node.upper()} (pgid {pgid}) did not stop")
        # The group is gone or a zombie: if the monitor is our child, collect it now.
        proc = self._procs.pop(n.get("pid"), None)
        if proc is not None:
            proc.wait(timeout=5)
        self._reap()
        n.update(pid=None, pgid=None, proc_start=None)
        self._save()

    def start(self, node: str, timeout: float = UP_TIMEOUT) -> dict:
        """Start *node* and wait for its /rest/system/status; returns that status."""
        self._spawn(node)
        return self._wait_status(node, time.monotonic() + timeout)

    def restart(self, node: str, timeout: float = UP_TIMEOUT, while_stopped=None) -> dict:
        """Stop and start *node*; returns the new status, whose startTime differs from the old.

        *while_stopped*, if given, is called between the stop and the start.
        """
        old = self._try_status(node)
        old_start = old.get("startTime") if old else None
        self.stop(node)
        if while_stopped:
            while_stopped()
        if old_start:
            # startTime has 1 s resolution: start in a later second so it must change.
            delay = _parse_start_time(old_start) + 1.05 - time.time()
            if delay > 0:
                time.sleep(delay)
        self._spawn(node)
        return self._wait_status(node, time.monotonic() + timeout, not_start_time=old_start)

    # -- lifecycle --------------------------------------------------------------------------------

    def _generate(self, node: str, n: dict) -> tuple[str, str]:
        """Run ``syncthing generate`` for node *n* (keys are reused).

        Returns its Device ID and the config version that this Syncthing writes.
        """
        config_path = n["config_path"]
        if os.path.exists(config_path):
            os.unlink(config_path)  # so the generated config lists only this device
        proc = subprocess.run([self.syncthing] + generate_args(self.version, n["home"]),
                              env=self._clean_env(n), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60, start_new_session=True)
        if proc.returncode != 0:
            raise LabError(f"syncthing generate for {node.upper()} failed: "
                           f"{proc.stdout}{proc.stderr}")
        root = ET.parse(config_path).getroot()
        devices = root.findall("device")
        if len(devices) != 1:
            raise LabError(f"generated config for {node.upper()} has {len(devices)} devices")
        return devices[0].get("id"), root.get("version") or CONFIG_VERSION

    def up(self, base_port: int = 0, timeout: float = UP_TIMEOUT) -> dict:
        """Create (or reuse) the lab, start A and B, wait until both answer and A sees B.

        On any failure everything this call started is stopped again before the error is raised.
        Returns :meth:`info`.
        """
        for n in self.state.get("nodes", {}).values():
            if n.get("pgid"):
                self._check_namespaces(signals_only=True)
                if self._running_pids(n):
                    raise LabError(f"lab in {self.dir} is already up (run down first)")
        started = time.monotonic()
        deadline = started + timeout
        ports = ([base_port + i for i in range(4)] if base_port else _free_ports(4))
        nodes = {}
        for i, key in enumerate(NODES):
            node_dir = os.path.join(self.dir, key)
            home = os.path.join(node_dir, "home")
            os.makedirs(home, exist_ok=True)
            os.chmod(home, 0o700)
            nodes[key] = {
                "name": key.upper(),
                "home": home,
                "config_path": os.path.join(home, "config.xml"),
                "log": os.path.join(node_dir, "syncthing.log"),
                "gui_port": ports[2 * i],
                "listen_port": ports[2 * i + 1],
                "api_key": f"stlab-apikey-{key.upper()}-{secrets.token_hex(8)}",
                "folders": {f: os.path.join(node_dir, f) for f in FOLDERS},
                "pid": None, "pgid": None, "proc_start": None,
            }
        self.state = {"version": 1, "dir": self.dir, "syncthing": self.syncthing,
                      "namespaces": namespace_ids(), "nodes": nodes}
        self._save()
        try:
            for key, n in nodes.items():
                n["id"], n["config_version"] = self._generate(key, n)
            for key, n in nodes.items():
                peer = nodes[self._peer(key)]
                for path in n["folders"].values():
                    os.makedirs(os.path.join(path, ".stfolder"), exist_ok=True)
                _write_atomically(n["config_path"], build_config(
                    name=n["name"], device_id=n["id"], listen_port=n["listen_port"],
                    gui_port=n["gui_port"], api_key=n["api_key"], peer_name=peer["name"],
                    peer_id=peer["id"], peer_listen_port=peer["listen_port"],
                    folders=n["folders"], config_version=n["config_version"]))
            self._save()
            # Start A, and B only once A answers (its BEP listener is up by then), so that B
            # connects to A before A's next redial.  Syncthing 1.19 exchanges Hello messages
            # on new connections one at a time, so when both dial at the same moment each side
            # waits for the other's Hello on a different connection until the 20 s Hello
            # deadline expires (seen as 1 "up" in 6 taking ~21.5 s instead of ~1.5 s).
            for key in NODES:
                self._spawn(key)
                self._wait_status(key, deadline)
            self.wait_connected(max(0.0, deadline - time.monotonic()))
        except BaseException:
            try:
                self.down()
            except Exception as exc:  # report, but keep the original error
                print(f"stlab: teardown after failed up: {exc}", file=sys.stderr)
            raise
        self.state["up_seconds"] = round(time.monotonic() - started, 3)
        self._save()
        return self.info()

    def down(self):
        """Stop both nodes (only this lab's recorded, verified process groups).

        The state is read again first: another stlab process (a CLI ``start`` or ``move-gui
        --offline``) may have started a node since this object last looked.
        """
        self.state = self._load() or self.state
        if any(n.get("pgid") for n in self.state.get("nodes", {}).values()):
            self._check_namespaces(signals_only=True)
        errors = []
        for key in NODES:
            if key in self.state.get("nodes", {}):
                try:
                    self.stop(key)
                except LabError as exc:
                    errors.append(str(exc))
        if errors:
            raise LabError("; ".join(errors))

    # -- peer and connection ----------------------------------------------------------------------

    def _connected(self, node: str) -> bool:
        peer_id = self._node(self._peer(node))["id"]
        try:
            conns = self.api_json(node, "GET", "/rest/system/connections", timeout=5)
        except (OSError, ValueError, LabError):
            return False
        return bool(conns["connections"].get(peer_id, {}).get("connected"))

    def wait_connected(self, timeout: float = UP_TIMEOUT):
        """Wait until A reports B as connected (raises LabError after *timeout* seconds)."""
        deadline = time.monotonic() + timeout
        while not self._connected("a"):
            if time.monotonic() > deadline:
                raise LabError(f"timed out after {timeout:.0f} s waiting for A to see B connected; "
                               f"see {self._node('a')['log']} and {self._node('b')['log']}")
            time.sleep(0.2)

    def set_peer_paused(self, paused: bool):
        """On A, ``PATCH /rest/config/devices/<B>`` with ``{"paused": paused}``."""
        b_id = self._node("b")["id"]
        self.api_json("a", "PATCH", f"/rest/config/devices/{b_id}", {"paused": paused})

    def pause_peer(self):
        """Pause B on A."""
        self.set_peer_paused(True)

    def resume_peer(self):
        """Resume B on A (use :meth:`wait_connected` to wait for the reconnect)."""
        self.set_peer_paused(False)

    # -- GUI ----------------------------------------------------------------------------------------

    def move_gui(self, node: str, port: int = 0, api_key: str | None = None,
                 offline: bool = False, timeout: float = UP_TIMEOUT) -> dict:
        """Move *node*'s GUI to 127.0.0.1:*port* (0: a free port) and optionally give it *api_key*.

        Online (the default) it is done the way the web GUI's Settings dialog does it:
        ``GET /rest/config``, edit ``gui``, ``PUT /rest/config``.  Syncthing restarts only its GUI
        server (same processes, same ``startTime``, event ids continue), writes config.xml and
        answers 200; the old port refuses connections from then on.  Syncthing backs off
        restarting its GUI server after five changes in quick succession (the sixth took ~17 s),
        hence the generous *timeout*.  *offline* instead stops the node, edits ``<gui>`` in
        config.xml and starts it again, as a user who edits the file does: no ConfigSaved event,
        and a new ``startTime``.  (Only while it is stopped: a running Syncthing writes its own
        config over the file at its next save, e.g. the second save that sometimes follows a GUI
        change within a second.)  Either way it waits until the new address
        answers with the new key and returns the node's :meth:`info`.
        """
        key = node.lower()
        n = self._node(key)
        before = self._try_status(key)
        if not before:
            raise LabError(f"node {key.upper()} does not answer on its GUI")
        port = port or next(p for p in _free_ports(2) if p != n["gui_port"])

        def record():
            n["gui_port"] = port
            if api_key is not None:
                n["api_key"] = api_key
            self._save()

        def edit_file():
            root = ET.parse(n["config_path"]).getroot()
            gui = root.find("gui")
            gui.find("address").text = f"127.0.0.1:{port}"
            if api_key is not None:
                gui.find("apikey").text = api_key
            _write_atomically(n["config_path"], ET.tostring(root, encoding="utf-8") + b"\n")
            record()

        if offline:
            self.restart(key, timeout, while_stopped=edit_file)
            return self.info()[key]
        deadline = time.monotonic() + timeout
        old_port, old_key = n["gui_port"], n["api_key"]
        new_key = old_key if api_key is None else api_key
        config = self.api_json(key, "GET", "/rest/config")
        config["gui"]["address"] = f"127.0.0.1:{port}"
        if api_key is not None:
            config["gui"]["apiKey"] = api_key
        for attempt in (1, 2):
            try:
                self.api_json(key, "PUT", "/rest/config", config)
                break
            except OSError as exc:
                # Syncthing applies the change by restarting its GUI server, and now and then (1.19.2, once in
                # CI) that closes this connection before the 200 is written: read back whether it took.
                if not _connection_lost(exc):
                    raise
                took = _gui_move_outcome(
                    lambda: self._answers_as(key, port, new_key),
                    lambda: self._gui_address_at(old_port, old_key),
                    f"127.0.0.1:{port}", deadline)
                if took:
                    break
                if attempt == 2:
                    raise LabError(f"node {key.upper()} closed the connection twice and kept its GUI "
                                   "where it was") from exc
        record()
        after = self._wait_status(key, deadline)
        if after.get("startTime") != before.get("startTime"):
            raise LabError(f"node {key.upper()} restarted while its GUI moved")
        return self.info()[key]

    def _answers_as(self, node: str, port: int, api_key: str) -> bool:
        """Whether 127.0.0.1:*port* answers /rest/system/status with *api_key* as *node*."""
        try:
            status, raw = self._request(port, api_key, "GET", "/rest/system/status", timeout=2)
            return status == 200 and json.loads(raw).get("myID") == self._node(node)["id"]
        except (OSError, ValueError):
            return False

    def _gui_address_at(self, port: int, api_key: str) -> str | None:
        """The GUI address in the config served at 127.0.0.1:*port*, or None when it does not answer."""
        try:
            status, raw = self._request(port, api_key, "GET", "/rest/config", timeout=2)
            return json.loads(raw)["gui"]["address"] if status == 200 else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    # -- reports ------------------------------------------------------------------------------------

    def info(self) -> dict:
        """Per node: id, gui_url, api_key, config_path, home, folders."""
        out = {}
        for key in NODES:
            n = self._node(key)
            out[key] = {"id": n["id"], "gui_url": f"http://127.0.0.1:{n['gui_port']}",
                        "api_key": n["api_key"], "config_path": n["config_path"],
                        "home": n["home"], "folders": dict(n["folders"])}
        return out

    def status(self) -> dict:
        """Per node: recorded PID, live PIDs, REST status summary and peer connection."""
        out = {}
        for key in NODES:
            n = self._node(key)
            st = self._try_status(key)
            out[key] = {"pid": n.get("pid"), "running_pids": self._running_pids(n),
                        "api": bool(st), "startTime": st and st.get("startTime"),
                        "uptime": st and st.get("uptime"),
                        "peer_connected": bool(st) and self._connected(key)}
        return out

    def env(self) -> str:
        """Shell ``export`` lines for both nodes (STLAB_A_URL, _APIKEY, _ID, _CONFIG, ...)."""
        lines = []
        for key, i in self.info().items():
            p = f"STLAB_{key.upper()}_"
            pairs = {p + "URL": i["gui_url"], p + "APIKEY": i["api_key"], p + "ID": i["id"],
                     p + "CONFIG": i["config_path"], p + "HOME": i["home"],
                     p + "VAULT": i["folders"]["vault"], p + "NOTES": i["folders"]["notes"]}
            lines.append("export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in pairs.items()))
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# CLI


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="stlab.py", description="Two-node Syncthing lab on loopback (run inside "
        "unshare --net --mount, with sysfs remounted).")
    p.add_argument("--syncthing", help="syncthing binary (default: syncthing on PATH)")
    sub = p.add_subparsers(dest="cmd", required=True)

    def add(name, help_):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--dir", required=True, help="lab directory (state in DIR/lab.json)")
        return sp

    sp = add("up", "create and start A and B; print node info as JSON")
    sp.add_argument("--base-port", type=int, default=0,
                    help="A gui/listen = P/P+1, B = P+2/P+3 (default 0: free ports)")
    sp.add_argument("--timeout", type=float, default=UP_TIMEOUT)
    add("down", "stop both nodes")
    for name in ("stop", "start", "restart"):
        add(name, f"{name} one node").add_argument("node", choices=["a", "b", "A", "B"])
    add("pause-peer", "pause B on A")
    add("resume-peer", "resume B on A")
    add("wait-connected", "wait until A sees B connected").add_argument(
        "--timeout", type=float, default=UP_TIMEOUT)
    sp = add("move-gui", "move a node's GUI to a new port (and API key) as the web GUI does; "
             "print its info as JSON")
    sp.add_argument("node", choices=["a", "b", "A", "B"])
    sp.add_argument("--port", type=int, default=0, help="new GUI port (default 0: a free one)")
    sp.add_argument("--api-key", help="new API key (default: keep the key)")
    sp.add_argument("--offline", action="store_true",
                    help="stop the node, edit config.xml, start it (default: PUT /rest/config)")
    sp.add_argument("--timeout", type=float, default=UP_TIMEOUT)
    add("status", "print process and REST status as JSON")
    add("env", "print shell export lines")
    add("info", "print node info as JSON (as up does)")
    sp = add("api", "one REST call; print the body")
    sp.add_argument("node", choices=["a", "b", "A", "B"])
    sp.add_argument("method")
    sp.add_argument("path")
    sp.add_argument("body", nargs="?", help="JSON request body")
    return p


def main(argv=None) -> int:
    """CLI entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        lab = Lab(args.dir, syncthing=args.syncthing)
        if args.cmd == "up":
            info = lab.up(base_port=args.base_port, timeout=args.timeout)
            print(json.dumps(info, indent=2))
            print(f"stlab: up in {lab.state['up_seconds']:.2f} s", file=sys.stderr)
        elif args.cmd == "down":
            lab.down()
        elif args.cmd == "stop":
            lab.stop(args.node)
        elif args.cmd == "start":
            print(json.dumps(lab.start(args.node)))
        elif args.cmd == "restart":
            print(json.dumps(lab.restart(args.node)))
        elif args.cmd == "pause-peer":
            lab.pause_peer()
        elif args.cmd == "resume-peer":
            lab.resume_peer()
        elif args.cmd == "wait-connected":
            lab.wait_connected(args.timeout)
        elif args.cmd == "move-gui":
            print(json.dumps(lab.move_gui(args.node, args.port, args.api_key, args.offline,
                                           args.timeout),
                             indent=2))
        elif args.cmd == "status":
            print(json.dumps(lab.status(), indent=2))
        elif args.cmd == "env":
            print(lab.env())
        elif args.cmd == "info":
            print(json.dumps(lab.info(), indent=2))
        elif args.cmd == "api":
            status, body = lab.api(args.node, args.method, args.path, args.body)
            sys.stdout.write(body.decode(errors="replace"))
            if not 200 <= status < 300:
                print(f"stlab: HTTP {status}", file=sys.stderr)
                return 1
    except LabError as exc:
        print(f"stlab: {exc}", file=sys.stderr)
        return exc.exit_status
    except OSError as exc:
        print(f"stlab: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
