"""Tests for stlab.py, against the real Syncthing binary.

Run: python3 -m unittest discover -s Tests/Lab

The end-to-end tests must run in a loopback-only network namespace.  When they are started
anywhere else they re-execute this module under

    unshare --net --mount --pid --fork --mount-proc sh -c 'mount -t sysfs sysfs /sys && ...'

(a private network namespace with only ``lo``, sysfs remounted so ``/sys/class/net`` shows that
namespace, and a PID namespace whose init, ``sh``, reaps orphans and whose end kills anything
left).  If unshare is not permitted, they are skipped with a message saying so.

Set STLAB_KEEP=1 to keep the lab directory for inspection, and VAULTSYNC_SYNCTHING=/path/to/syncthing
to test another Syncthing binary than the one on PATH (scripts/test also runs them against 1.29.5).
"""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import uuid
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stlab  # noqa: E402

INNER_ENV = "STLAB_TEST_IN_NAMESPACE"
# --kill-child: when the timeout below kills unshare, its namespace (PID 1 and all below) goes too.
UNSHARE = ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc", "--kill-child"]
NS_SETUP = "mount -t sysfs sysfs /sys && ip link set lo up"
SYNCTHING = os.environ.get("VAULTSYNC_SYNCTHING") or shutil.which("syncthing")

ID_A = "27CDMTM-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQA"
ID_B = "3QS6B4R-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"


def in_namespace_command(argv):
    """*argv* wrapped to run in a fresh loopback-only network (and PID) namespace."""
    return UNSHARE + ["sh", "-c", NS_SETUP + ' && "$@"', "sh", *argv]


def run_here_or_in_namespace(test: unittest.TestCase):
    """Return True if the caller should run its body now; otherwise re-run it in a namespace.

    Outside a loopback-only namespace this re-executes exactly this test under unshare and
    asserts it passed (its output goes straight to our stderr), or skips if unshare is refused.
    """
    problem = stlab.namespace_problem()
    if problem is None:
        return True
    if os.environ.get(INNER_ENV):
        test.fail(f"re-executed under unshare but still not loopback-only: {problem}")
    if SYNCTHING is None:
        test.skipTest("syncthing is not installed")
    probe = subprocess.run(in_namespace_command(["true"]), capture_output=True, text=True)
    if probe.returncode != 0:
        test.skipTest("cannot create a loopback-only namespace (unshare --net --mount --pid "
                      f"needs root or user namespaces): {probe.stderr.strip()}")
    env = dict(os.environ, **{INNER_ENV: "1"})
    cmd = in_namespace_command([sys.executable, "-m", "unittest", "-v", test.id()])
    sys.stderr.write(f"\n[re-running {test.id()} in a loopback-only namespace]\n")
    sys.stderr.flush()
    rc = subprocess.run(cmd, cwd=HERE, env=env, timeout=600).returncode
    test.assertEqual(rc, 0, f"{test.id()} failed inside the namespace (output above)")
    return False


def parent_of_zombie(pid):
    """The parent PID of *pid* if it is a zombie, else None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(fields[1]) if fields[0] == "Z" else None


class BuildConfig(unittest.TestCase):
    """config.xml content (no Syncthing needed)."""

    def setUp(self):
        xml = stlab.build_config(name="A", device_id=ID_A, listen_port=22001, gui_port=18384,
                                 api_key="stlab-apikey-A-00", peer_name="B", peer_id=ID_B,
                                 peer_listen_port=22002,
                                 folders={"vault": "/lab/a/vault", "notes": "/lab/a/notes"})
        self.root = ET.fromstring(xml)

    def test_lockdown_options(self):
        opts = {e.tag: e.text for e in self.root.find("options")}
        expected = {
            "globalAnnounceEnabled": "false", "localAnnounceEnabled": "false",
            "relaysEnabled": "false", "natEnabled": "false", "urAccepted": "-1",
            "crashReportingEnabled": "false", "autoUpgradeIntervalH": "0",
            "startBrowser": "false", "announceLANAddresses": "false",
            "restartOnWakeup": "false", "stunKeepaliveStartS": "0",
            "listenAddress": "tcp://127.0.0.1:22001",
        }
        for key, value in expected.items():
            self.assertEqual(opts.get(key), value, key)

    def test_gui_devices_folders(self):
        gui = self.root.find("gui")
        self.assertEqual(gui.get("tls"), "false")
        self.assertEqual(gui.find("address").text, "127.0.0.1:18384")
        self.assertEqual(gui.find("apikey").text, "stlab-apikey-A-00")
        addrs = {d.get("id"): d.find("address").text for d in self.root.findall("device")}
        self.assertEqual(addrs, {ID_A: "tcp://127.0.0.1:22001", ID_B: "tcp://127.0.0.1:22002"})
        self.assertNotIn(b"dynamic", ET.tostring(self.root))
        folders = {f.get("id"): f for f in self.root.findall("folder")}
        self.assertEqual(set(folders), {"vault", "notes"})
        for fid, f in folders.items():
            self.assertEqual(f.get("path"), f"/lab/a/{fid}")
            self.assertEqual((f.get("fsWatcherEnabled"), f.get("fsWatcherDelayS"),
                              f.get("rescanIntervalS")), ("true", "1", "3600"))
            self.assertEqual({d.get("id") for d in f.findall("device")}, {ID_A, ID_B})

    def test_config_version(self):
        self.assertEqual(self.root.get("version"), stlab.CONFIG_VERSION)
        xml = stlab.build_config(name="A", device_id=ID_A, listen_port=1, gui_port=2, api_key="k",
                                 peer_name="B", peer_id=ID_B, peer_listen_port=3, folders={},
                                 config_version="37")
        self.assertEqual(ET.fromstring(xml).get("version"), "37")


class FlagsByVersion(unittest.TestCase):
    """The generate and serve flags follow the binary's release (no Syncthing needed)."""

    def fake_binary(self, output: str, status: int = 0) -> str:
        d = tempfile.mkdtemp(prefix="stlab-fake-")
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, "syncthing")
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\n[ -n \"$HOME\" ] || exit 3\nprintf '%s\\n' '{output}'\nexit {status}\n")
        os.chmod(path, 0o755)
        return path

    def test_version_of_each_release_line(self):
        for line, expected in (
                ('syncthing v1.19.2-ds1 "Fermium Flea" (go1.19.8 linux-amd64) debian@debian 2023-05-07', (1, 19, 2)),
                ('syncthing v1.29.5 "Gold Grasshopper" (go1.24.4 linux-amd64) debian@debian', (1, 29, 5)),
                ('syncthing v2.1.3 "Hafnium Hornet" (go1.26.6 linux-amd64) unknown@unknown', (2, 1, 3))):
            self.assertEqual(stlab.syncthing_version(self.fake_binary(line)), expected)

    def test_version_refuses_what_is_not_syncthing(self):
        for line, status in (("hello", 0), ("syncthing v2.1.3", 1), ("syncthing vX.Y", 0)):
            with self.assertRaises(stlab.LabError):
                stlab.syncthing_version(self.fake_binary(line, status))
        with self.assertRaises(stlab.LabError):
            stlab.syncthing_version("/nonexistent/syncthing")

    def test_binary_resolved_to_an_absolute_path(self):
        fake = self.fake_binary('syncthing v2.1.3 "Hafnium Hornet"')
        here = os.getcwd()
        try:
            os.chdir(os.path.dirname(os.path.dirname(fake)))
            relative = os.path.join(os.path.basename(os.path.dirname(fake)), "syncthing")
            self.assertEqual(stlab._resolve_binary(relative), fake)  # nodes run elsewhere: made absolute
        finally:
            os.chdir(here)
        old_path = os.environ.get("PATH", "")
        os.environ["PATH"] = os.path.dirname(fake) + os.pathsep + old_path
        try:
            self.assertEqual(stlab._resolve_binary("syncthing"), fake)  # a name: the caller's PATH
        finally:
            os.environ["PATH"] = old_path
        for bad in ("", "  ", os.path.dirname(fake), "/nonexistent/syncthing"):
            with self.assertRaises(stlab.LabError, msg=repr(bad)):
                stlab._resolve_binary(bad)

    def test_generate_and_serve_flags(self):
        self.assertEqual(stlab.generate_args((1, 19, 2), "/h"),
                         ["generate", "--home", "/h", "--no-default-folder", "--skip-port-probing"])
        self.assertEqual(stlab.generate_args((2, 1, 3), "/h"), ["generate", "--home", "/h", "--no-port-probing"])
        self.assertEqual(stlab.generate_args((2, 0, 0), None), ["generate", "--no-port-probing"])
        self.assertIn("--logflags=0", stlab.serve_args((1, 29, 5), "/h"))
        two = stlab.serve_args((2, 1, 3), "/h")
        self.assertNotIn("--logflags=0", two)
        self.assertEqual(two[:3], ["serve", "--home", "/h"])
        self.assertTrue({"--no-browser", "--no-restart", "--no-upgrade"} <= set(two))
        self.assertEqual(stlab.paths_args((1, 19, 2)), ["serve", "--paths"])
        self.assertEqual(stlab.paths_args((2, 1, 3)), ["paths"])


class NamespaceRefusal(unittest.TestCase):
    def test_refuses_outside_loopback_namespace(self):
        if stlab.namespace_problem() is None:
            self.skipTest("already in a loopback-only namespace")
        with tempfile.TemporaryDirectory() as d:
            proc = subprocess.run([sys.executable, os.path.join(HERE, "stlab.py"), "up",
                                   "--dir", d], capture_output=True, text=True, timeout=30)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("refuses", proc.stderr)
            self.assertEqual(os.listdir(d), [])  # did nothing


class LostGUIAnswer(unittest.TestCase):
    """A GUI change whose 200 never came: read back whether it took (``move_gui``)."""

    NEW = "127.0.0.1:40002"

    def outcome(self, new_answers, old_serves, timeout=5.0):
        news, olds = iter(new_answers), iter(old_serves)
        return stlab._gui_move_outcome(lambda: next(news), lambda: next(olds), self.NEW,
                                       time.monotonic() + timeout)

    def test_took_once_the_new_address_answers(self):
        # The old address first serves the new config (its restart pending), then nothing.
        self.assertTrue(self.outcome([False, False, False, True], [self.NEW, None, None]))

    def test_never_arrived_when_the_old_address_serves_the_old_config(self):
        self.assertFalse(self.outcome([False, False], [None, "127.0.0.1:40001"]))

    def test_times_out_when_neither_answers(self):
        with self.assertRaises(stlab.LabError):
            self.outcome(iter(lambda: False, None), iter(lambda: None, 1), timeout=0.3)

    def test_only_a_lost_connection_counts(self):
        self.assertTrue(stlab._connection_lost(http.client.RemoteDisconnected("closed")))
        self.assertTrue(stlab._connection_lost(urllib.error.URLError(ConnectionResetError())))
        self.assertFalse(stlab._connection_lost(urllib.error.URLError(TimeoutError())))
        self.assertFalse(stlab._connection_lost(TimeoutError()))


class EndToEnd(unittest.TestCase):
    """Real Syncthing A and B (re-executed in a namespace when needed)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="stlab-test-")
        self.seen_pids = set()

    def tearDown(self):
        if os.environ.get("STLAB_KEEP"):
            sys.stderr.write(f"\nkept lab directory {self.dir}\n")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def remember_pids(self, lab):
        """Note every live PID (monitor and worker) of both nodes."""
        for key in stlab.NODES:
            self.seen_pids.update(lab._running_pids(lab.state["nodes"][key]))
            if lab.state["nodes"][key].get("pid"):
                self.seen_pids.add(lab.state["nodes"][key]["pid"])

    def assert_all_gone(self):
        self.assertTrue(self.seen_pids)
        for pid in self.seen_pids:
            self.assertFalse(stlab.is_alive(pid), f"PID {pid} still alive")
            # A zombie of ours is a child the lab did not reap. A worker whose monitor ended first belongs to init
            # (PID 1 here: no PID namespace), which reaps it in its own time, later on a busy machine.
            self.assertNotEqual(parent_of_zombie(pid), os.getpid(), f"PID {pid} is a zombie the lab did not reap")

    def wait_for(self, what, predicate, timeout):
        deadline = time.monotonic() + timeout
        while not predicate():
            self.assertLess(time.monotonic(), deadline, f"timed out waiting for {what}")
            time.sleep(0.2)

    def test_two_node_lab(self):
        if not run_here_or_in_namespace(self):
            return
        lab = stlab.Lab(self.dir, syncthing=SYNCTHING)
        started = time.monotonic()
        try:
            info = lab.up()
            sys.stderr.write(f"\n[stlab up took {time.monotonic() - started:.2f} s]\n")
            self.remember_pids(lab)
            self.check_info(lab, info)
            self.check_local_index_updated(lab, info)
            self.check_pause_resume(lab, info)
            self.check_move_gui(lab, info)
            self.check_restart(lab)
            self.check_cli(info)
        except BaseException:
            self.dump_logs(lab)
            raise
        finally:
            lab.down()
        self.assert_all_gone()

    @staticmethod
    def dump_logs(lab, lines=40):
        """Write the tail of each node's Syncthing log to stderr (for failures in CI)."""
        for key in stlab.NODES:
            node = lab.state.get("nodes", {}).get(key)
            if node and os.path.exists(node["log"]):
                with open(node["log"], errors="replace") as f:
                    tail = f.readlines()[-lines:]
                sys.stderr.write(f"\n--- last {len(tail)} lines of {node['log']} ---\n")
                sys.stderr.writelines(tail)

    def check_info(self, lab, info):
        self.assertEqual(set(info), {"a", "b"})
        for key, node in info.items():
            self.assertRegex(node["id"], r"^[A-Z2-7]{7}(-[A-Z2-7]{7}){7}$")
            self.assertTrue(node["gui_url"].startswith("http://127.0.0.1:"))
            self.assertTrue(node["api_key"].startswith(f"stlab-apikey-{key.upper()}-"))
            self.assertTrue(os.path.isfile(node["config_path"]))
            self.assertEqual(set(node["folders"]), {"vault", "notes"})
            status = lab.api_json(key, "GET", "/rest/system/status")
            self.assertEqual(status["myID"], node["id"])
        # Syncthing re-saves config.xml; the lock-down must survive that.
        opts = {e.tag: e.text for e in ET.parse(info["a"]["config_path"]).getroot().find("options")}
        for key in ("globalAnnounceEnabled", "localAnnounceEnabled", "relaysEnabled",
                    "natEnabled", "crashReportingEnabled", "startBrowser"):
            self.assertEqual(opts[key], "false", key)
        self.assertEqual((opts["urAccepted"], opts["autoUpgradeIntervalH"]), ("-1", "0"))
        # stlab writes the config version this binary generates, so nothing was migrated or archived.
        for key in stlab.NODES:
            node = lab.state["nodes"][key]
            self.assertEqual(ET.parse(node["config_path"]).getroot().get("version"),
                             node["config_version"])
            self.assertEqual([f for f in os.listdir(node["home"]) if f.startswith("config.xml.v")], [])
            # Everything Syncthing writes stays in --home: the database too (1.x: LevelDB index-v0.14.0.db; 2.x:
            # SQLite under index-v2), and nothing in the default dirs of the HOME it runs with (the same directory).
            entries = os.listdir(node["home"])
            database = "index-v2" if lab.version[0] >= 2 else "index-v0.14.0.db"
            self.assertIn(database, entries)
            self.assertFalse({".config", ".local"} & set(entries), entries)

    def check_local_index_updated(self, lab, info):
        # A filtered subscription is created by the first request with its mask and holds no
        # history (docs/syncthing-api.md, The event filter), so create it before the change.
        lab.api_json("a", "GET", "/rest/events?events=LocalIndexUpdated&since=0&timeout=0")
        name = f"hello-{uuid.uuid4().hex[:8]}.md"
        with open(os.path.join(info["a"]["folders"]["vault"], name), "w") as f:
            f.write("hello from stlab\n")
        deadline = time.monotonic() + 30
        found = None
        while found is None and time.monotonic() < deadline:
            events = lab.api_json(
                "a", "GET", "/rest/events?events=LocalIndexUpdated&since=0&timeout=10", timeout=20)
            found = next((e for e in events if e["type"] == "LocalIndexUpdated"
                          and e["data"]["folder"] == "vault"
                          and name in e["data"]["filenames"]), None)
        self.assertIsNotNone(found, "no LocalIndexUpdated for vault on A")
        # And the file reaches B.
        self.wait_for("file on B", lambda: os.path.exists(
            os.path.join(info["b"]["folders"]["vault"], name)), 30)

    def check_pause_resume(self, lab, info):
        b_id = info["b"]["id"]

        def b_conn():
            return lab.api_json("a", "GET", "/rest/system/connections")["connections"][b_id]

        lab.pause_peer()
        self.assertIs(lab.api_json("a", "GET", f"/rest/config/devices/{b_id}")["paused"], True)
        self.wait_for("B paused", lambda: b_conn()["paused"] and not b_conn()["connected"], 15)
        lab.resume_peer()
        self.assertIs(lab.api_json("a", "GET", f"/rest/config/devices/{b_id}")["paused"], False)
        lab.wait_connected(30)

    def check_move_gui(self, lab, info):
        """A's GUI moves to a new port with a new key; only the GUI server restarts."""
        old_port = lab.state["nodes"]["a"]["gui_port"]
        old_key = info["a"]["api_key"]
        before = lab.api_json("a", "GET", "/rest/system/status")
        pids = sorted(lab._running_pids(lab.state["nodes"]["a"]))
        # The default subscription keeps history, so its latest id is well above 1.
        cursor = lab.api_json("a", "GET", "/rest/events?since=0&limit=1&timeout=0")[-1]["id"]
        moved = lab.move_gui("a", api_key="stlab-apikey-A-moved")
        new_port = lab.state["nodes"]["a"]["gui_port"]
        self.assertNotEqual(new_port, old_port)
        self.assertEqual(moved["gui_url"], f"http://127.0.0.1:{new_port}")
        self.assertEqual(moved["api_key"], "stlab-apikey-A-moved")
        gui = ET.parse(info["a"]["config_path"]).getroot().find("gui")
        self.assertEqual(gui.findtext("address"), f"127.0.0.1:{new_port}")
        self.assertEqual(gui.findtext("apikey"), "stlab-apikey-A-moved")
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", old_port), timeout=5).close()
        # The same Syncthing: same processes and startTime, and the event ids go on from the
        # cursor, with the move's ConfigSaved among them.
        after = lab.api_json("a", "GET", "/rest/system/status")
        self.assertEqual(after["startTime"], before["startTime"])
        self.assertEqual(after["guiAddressUsed"], f"127.0.0.1:{new_port}")
        self.assertEqual(sorted(lab._running_pids(lab.state["nodes"]["a"])), pids)
        events = lab.api_json("a", "GET", f"/rest/events?since={cursor}&timeout=0")
        self.assertEqual(events[0]["id"], cursor + 1)
        self.assertIn(f"127.0.0.1:{new_port}", [e["data"]["gui"]["address"] for e in events
                                                if e["type"] == "ConfigSaved"])
        # The old key no longer works at the new address.
        request = urllib.request.Request(f"{moved['gui_url']}/rest/system/status",
                                         headers={"X-API-Key": old_key})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with self.assertRaises(urllib.error.HTTPError) as refused:
            opener.open(request, timeout=10)
        self.assertEqual(refused.exception.code, 403)

    def check_restart(self, lab):
        before = lab.api_json("a", "GET", "/rest/system/status")
        old_pid = lab.state["nodes"]["a"]["pid"]
        after = lab.restart("a")
        self.assertNotEqual(after["startTime"], before["startTime"])
        self.assertEqual(after["myID"], before["myID"])
        self.assertNotEqual(lab.state["nodes"]["a"]["pid"], old_pid)
        self.assertFalse(stlab.is_alive(old_pid))
        self.remember_pids(lab)
        lab.wait_connected(60)

    def check_cli(self, info):
        def cli(*args):
            return subprocess.run([sys.executable, os.path.join(HERE, "stlab.py"), *args,
                                   "--dir", self.dir], capture_output=True, text=True, timeout=60)

        proc = cli("api", "a", "GET", "/rest/system/status")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["myID"], info["a"]["id"])
        proc = cli("api", "a", "GET", "/rest/config/devices/NOPE")
        self.assertEqual(proc.returncode, 1)
        proc = cli("env")
        self.assertIn(f"STLAB_A_ID={info['a']['id']}", proc.stdout)
        self.assertIn("STLAB_B_APIKEY=stlab-apikey-B-", proc.stdout)
        proc = cli("status")
        status = json.loads(proc.stdout)
        self.assertTrue(status["a"]["api"] and status["a"]["peer_connected"])
        self.assertEqual(len(status["b"]["running_pids"]), 2)  # monitor + worker
        proc = cli("move-gui", "b")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        moved = json.loads(proc.stdout)
        self.assertNotEqual(moved["gui_url"], info["b"]["gui_url"])
        self.assertEqual(moved["api_key"], info["b"]["api_key"])
        proc = cli("api", "b", "GET", "/rest/system/status")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["guiAddressUsed"], moved["gui_url"][len("http://"):])
        started = json.loads(proc.stdout)["startTime"]
        # --offline: stopped, config.xml edited, started again.
        proc = cli("move-gui", "b", "--offline", "--api-key", "stlab-apikey-B-offline")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        offline = json.loads(proc.stdout)
        self.assertNotEqual(offline["gui_url"], moved["gui_url"])
        gui = ET.parse(info["b"]["config_path"]).getroot().find("gui")
        self.assertEqual(gui.findtext("apikey"), "stlab-apikey-B-offline")
        proc = cli("api", "b", "GET", "/rest/system/status")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        status = json.loads(proc.stdout)
        self.assertEqual(status["guiAddressUsed"], offline["gui_url"][len("http://"):])
        self.assertNotEqual(status["startTime"], started)
        # That B was started by the CLI process: down() must stop it too (assert_all_gone).
        self.remember_pids(stlab.Lab(self.dir))
        proc = cli("up")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("already up", proc.stderr)
        # From another (nested) loopback-only namespace the lab is unreachable: refuse.
        nested = subprocess.run(
            in_namespace_command([sys.executable, os.path.join(HERE, "stlab.py"), "start", "a",
                                  "--dir", self.dir]), capture_output=True, text=True, timeout=60)
        self.assertEqual(nested.returncode, 1, nested.stderr)
        self.assertIn("this lab was brought up in net:[", nested.stderr)

    def test_failed_up_tears_down(self):
        """B's GUI port is taken, so B exits after A is up; up must stop A again."""
        if not run_here_or_in_namespace(self):
            return
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        base = blocker.getsockname()[1] - 2  # A: base, base+1; B's GUI base+2 is taken
        try:
            lab = stlab.Lab(self.dir, syncthing=SYNCTHING)
            with self.assertRaisesRegex(stlab.LabError, "Syncthing B exited during startup"):
                lab.up(base_port=base, timeout=30)
            for key in stlab.NODES:
                self.assertIsNone(lab.state["nodes"][key]["pid"])
            self.assertEqual(lab._procs, {})  # every child was reaped
        finally:
            blocker.close()
        self.assertEqual(self.pids_with_home(), [])
        # A was running and was stopped: 1.x logs "Signal 15 received", 2.x "Received signal; exiting
        # (signal=terminated ...)".
        with open(lab.state["nodes"]["a"]["log"]) as f:
            self.assertRegex(f.read(), r"Signal 15 received|Received signal; exiting \(signal=terminated")

    def pids_with_home(self):
        """Live processes whose command line mentions this lab directory."""
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and stlab.is_alive(int(entry)):
                if any(self.dir in a for a in stlab._cmdline(int(entry))):
                    pids.append(int(entry))
        return pids


if __name__ == "__main__":
    unittest.main()
