import Foundation
import NotifyCore
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

/// `--status` without the service's environment: every state file in the places each install mode uses, found below a
/// temporary root instead of /run and /tmp, each judged from its file alone.
@Suite("--status without the service's environment: every instance on the host", .serialized)
struct StatusDiscoveryTests {
    static let now: Int64 = 1_718_000_100

    /// Writes a state file with a fresh poll as the writer `writer` in `directory` (created 0700).
    @discardableResult
    static func write(_ directory: String, key: String, writer: ServiceWriter?, lastPoll: Int64 = now - 3) -> StateFile
    {
        _ = mkdir(directory, 0o700)
        let file = StateFile(path: directory + "/state-" + key)
        _ = file.write(
            ServiceState(
                lastPoll: lastPoll, relay: .delivered, started: now - 60, updated: now - 3, syncthingReachable: true,
                sharedFolders: 1, sharedDevices: 1, relayState: .open, sweep: .off, writer: writer))
        return file
    }

    static func discovery(_ dir: TemporaryDirectory, uid: uid_t = geteuid()) -> StatusDiscovery {
        var discovery = StatusDiscovery(environment: ["XDG_RUNTIME_DIR": dir.file("xdg")])
        discovery.run = dir.file("run")
        discovery.tmp = dir.file("tmp")
        discovery.uid = uid
        _ = mkdir(dir.file("run"), 0o755)
        _ = mkdir(dir.file("run/user"), 0o755)
        _ = mkdir(dir.file("tmp"), 0o755)
        _ = mkdir(dir.file("xdg"), 0o700)
        return discovery
    }

    @Test("none: one line naming where it looked and the Docker command; exit 1")
    func none() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let overview = Self.discovery(dir, uid: 0).overview(now: Self.now)
        #expect(overview.exitStatus == .checkFailed)
        #expect(
            overview.text()
                == "vaultsync-notify: no running instance found (looked in \(dir.path)/run/vaultsync-notify, "
                + "\(dir.path)/run/vaultsync-notify-*, \(dir.path)/xdg/vaultsync-notify, \(dir.path)/run/user/*/vaultsync-notify, "
                + "\(dir.path)/tmp/vaultsync-notify-*); for a Docker install run "
                + "`docker exec <container> vaultsync-notify --status`")
        #expect(overview.json().contains("\"instances\" : [\n\n  ]"))
        // Not root: its own /tmp directory, and how to see the others'.
        let user = Self.discovery(dir, uid: 4711).overview(now: Self.now).text()
        #expect(user.contains("\(dir.path)/tmp/vaultsync-notify-4711)"), "\(user)")
        #expect(user.hasSuffix("; run as root (sudo vaultsync-notify --status) to read other users' services too"))
    }

    @Test("one instance: the report --status prints with the environment, Syncthing not asked; exit 0")
    func one() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let discovery = Self.discovery(dir)
        let file = Self.write(dir.file("run/vaultsync-notify"), key: "00000000000000aa", writer: nil)
        let overview = discovery.overview(now: Self.now)
        #expect(overview.exitStatus == .ok)
        let report = try #require(overview.reports.first)
        #expect(overview.text() == report.text() && overview.json() == report.json())
        #expect(report.text().hasPrefix("vaultsync-notify: healthy\n"))
        #expect(report.text().contains("Syncthing         reachable at the service's last request (not asked now"))
        // Its lock and a temporary file beside it are not state files.
        #expect(close(open(file.lockPath, O_CREAT | O_RDWR, 0o600)) == 0)
        #expect(close(open(file.path + ".tmp123", O_CREAT | O_RDWR, 0o600)) == 0)
        #expect(discovery.overview(now: Self.now).reports.count == 1)
    }

    @Test("several places: each running instance under its own heading; files of ended services are counted")
    func several() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let discovery = Self.discovery(dir, uid: 0)
        let me = StateFile.currentWriter()
        // systemd's or OpenRC's, a second unit's (RuntimeDirectory=vaultsync-notify-<name>), a per-user unit's, and
        // launchd's or a binary's: all running (this process holds the lock of each).
        var held: [Int32] = []
        _ = mkdir(dir.file("run/vaultsync-notify-photos"), 0o700)
        let running = [
            "run/vaultsync-notify", "run/vaultsync-notify-photos", "xdg/vaultsync-notify", "tmp/vaultsync-notify-501",
        ]
        for directory in running {
            let file = Self.write(dir.file(directory), key: "00000000000000bb", writer: me)
            if case .acquired(let fd) = file.acquireLock() { held.append(fd) }
        }
        defer { for fd in held { close(fd) } }
        // A stale poll in a per-user runtime directory that only root scans.
        _ = mkdir(dir.file("run/user/1000"), 0o700)
        Self.write(dir.file("run/user/1000/vaultsync-notify"), key: "00000000000000cc", writer: me, lastPoll: 1)
        // Left behind by a service that ended without its farewell: no lock held.
        Self.write(
            dir.file("tmp/vaultsync-notify-502"), key: "00000000000000dd", writer: ServiceWriter(pid: me.pid, start: 1))
        let overview = discovery.overview(now: Self.now)
        #expect(overview.instances.count == 5)
        #expect(overview.exitStatus == .checkFailed)  // one of them has not polled for long
        let text = overview.text()
        #expect(
            text.hasPrefix(
                "vaultsync-notify: 5 instances found, 4 healthy; 1 state file left by services that are not running\n"
                    + "\n[instance 1 of 5, pid \(me.pid)]\nvaultsync-notify: healthy\n"), "\(text)")
        #expect(text.contains("\n\n[instance 5 of 5, pid \(me.pid)]\n"))
        #expect(!text.contains("not running (the service stopped without a farewell)"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(overview.json().utf8)) as? [String: Any])
        #expect((json["instances"] as? [[String: Any]])?.count == 5)
        #expect(json["healthy"] as? Bool == false && json["exit_status"] as? Int == 1)
        // Only the file left behind: that one report says so.
        for fd in held { close(fd) }
        held = []
        for directory in running {
            #expect(unlink(dir.file(directory + "/state-00000000000000bb")) == 0)
        }
        #expect(unlink(dir.file("run/user/1000/vaultsync-notify/state-00000000000000cc")) == 0)
        #expect(discovery.overview(now: Self.now).text() == StatusReport.stoppedWithoutFarewell)
        // A file of an older writer (no pid), not written for long: not running, without the keyed environment's fix.
        #expect(unlink(dir.file("tmp/vaultsync-notify-502/state-00000000000000dd")) == 0)
        Self.write(dir.file("tmp/vaultsync-notify-502"), key: "00000000000000dd", writer: nil)
        #expect(
            discovery.overview(now: Self.now + 600).text()
                == "vaultsync-notify: not running (its state file was last written 10 min ago)")
    }

    @Test("hostile places are skipped: a symlinked directory, one others may write to, a symlinked state file")
    func hostile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let discovery = Self.discovery(dir, uid: 0)
        Self.write(dir.file("elsewhere"), key: "00000000000000ee", writer: nil)
        #expect(symlink(dir.file("elsewhere"), dir.file("tmp/vaultsync-notify-600")) == 0)
        Self.write(dir.file("tmp/vaultsync-notify-601"), key: "00000000000000ee", writer: nil)
        #expect(chmod(dir.file("tmp/vaultsync-notify-601"), 0o777) == 0)
        _ = mkdir(dir.file("run/vaultsync-notify"), 0o700)
        #expect(
            symlink(
                dir.file("elsewhere/state-00000000000000ee"), dir.file("run/vaultsync-notify/state-00000000000000ef"))
                == 0)
        let overview = discovery.overview(now: Self.now)
        // The symlinked file is reported as unreadable (never followed); the others are not read at all.
        #expect(overview.reports.map(\.health) == [.unreadable])
    }

    @Test("the mode looks around only without RELAY_URL: with the service's environment, that one instance")
    func mode() {
        #expect(StatusOverview.discovers(environment: [:]))
        #expect(StatusOverview.discovers(environment: ["RELAY_URL": "", "HOME": "/root"]))
        #expect(!StatusOverview.discovers(environment: ["RELAY_URL": "https://relay.vaultsync.eu"]))
    }
}

extension StatusDiscoveryTests {
    @Test("README's none line is the one root gets with no variables on a host without instances")
    func readmeNoneLine() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let readme = try String(contentsOf: url, encoding: .utf8)
        var discovery = StatusDiscovery(environment: [:])
        discovery.uid = 0
        let line = StatusOverview(reports: [], searched: discovery.places, root: true).text()
        #expect(readme.contains("\n" + line + "\n"), "\(line)")
    }
}

extension StatusDiscoveryTests {
    @Test(
        "as root: another user's file in that user's directory is read; one owned by someone else there is not trusted",
        .enabled(if: geteuid() == 0, "needs root to give files to another user"))
    func otherUsers() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let discovery = Self.discovery(dir, uid: 0)
        let own = dir.file("tmp/vaultsync-notify-4711")
        let file = Self.write(own, key: "00000000000000ab", writer: nil)
        #expect(chown(own, 4711, 4711) == 0 && chown(file.path, 4711, 4711) == 0)
        #expect(chmod(file.path, 0o600) == 0)
        let overview = discovery.overview(now: Self.now)
        #expect(overview.reports.map(\.health) == [.healthy])
        #expect(overview.exitStatus == .ok)
        // A file in that directory that is not its owner's: not a state file this user's service wrote.
        #expect(chown(file.path, 4712, 4712) == 0)
        #expect(discovery.overview(now: Self.now).reports.map(\.health) == [.unreadable])
    }
}
