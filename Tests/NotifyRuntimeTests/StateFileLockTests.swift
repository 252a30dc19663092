import Foundation
import NotifyCore
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

/// The lock beside the state file and what readers learn from it: a second service for the same instance is refused,
/// a lock left by an ended process never blocks the next one, and a file whose writer is gone, or that cannot be
/// read, says so instead of looking healthy or missing.
@Suite("State file lock and liveness", .serialized)
struct StateFileLockTests {
    /// `--status`'s environment (`StatusTests`), with nothing listening at Syncthing's address: a verdict that asks
    /// Syncthing is syncthing-down.
    static func environment(_ dir: TemporaryDirectory) -> [String: String] {
        StatusTests.environment(dir).merging(["SYNCTHING_API_URL": "http://127.0.0.1:9"]) { $1 }
    }

    /// A process id that no process has now: a child that has exited and been reaped.
    static func endedPid() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test("one holder at a time; the lock goes with its holder, and the next one takes it")
    func exclusive() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = try #require(StateFile.locate(environment: Self.environment(dir), create: true))
        #expect(file.lockState(owner: geteuid()) == .untestable)  // no lock file yet
        guard case .acquired(let fd) = file.acquireLock() else {
            Issue.record("the first service did not get the lock")
            return
        }
        var st = stat()
        #expect(stat(file.lockPath, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(file.lockState(owner: geteuid()) == .held)
        // Testing never takes it: the holder keeps it, and a second service is still refused.
        #expect(file.lockState(owner: geteuid()) == .held)
        #expect(file.acquireLock() == .heldByAnother)
        // The holder ends (the kernel closes its descriptor): free at once, and the next service gets it.
        close(fd)
        #expect(file.lockState(owner: geteuid()) == .free)
        guard case .acquired(let next) = file.acquireLock() else {
            Issue.record("a lock left by an ended holder blocked the next one")
            return
        }
        close(next)
    }

    @Test("this process as a writer: alive with its start; an ended pid or another start is gone")
    func process() throws {
        let me = StateFile.currentWriter()
        #expect(me.pid == getpid())
        let start = try #require(me.start)
        #expect(StateFile.process(me) == .alive)
        #expect(StateFile.process(ServiceWriter(pid: getpid(), start: start + 1)) == .gone)  // a reused pid
        #expect(StateFile.process(ServiceWriter(pid: try Self.endedPid(), start: start)) == .gone)
        #expect(StateFile.process(ServiceWriter(pid: getpid(), start: nil)) == .unknown)
    }

    /// Writes a fresh state whose writer is `writer`, as a service would.
    static func writeFresh(_ file: StateFile, writer: ServiceWriter?, now: Int64) {
        #expect(
            file.write(
                ServiceState(lastPoll: now - 2, relay: .delivered, started: now - 30, updated: now - 2, writer: writer))
        )
    }

    @Test("a fresh file whose writer is gone reads as not running at once, in --healthcheck and --status")
    func stoppedWithoutFarewell() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let env = Self.environment(dir)
        let file = try #require(StateFile.locate(environment: env, create: false))
        let now = SystemClock().unixSeconds()
        guard case .acquired(let fd) = file.acquireLock() else {
            Issue.record("no lock")
            return
        }
        let writer = ServiceWriter(pid: try Self.endedPid(), start: StateFile.currentWriter().start)
        Self.writeFresh(file, writer: writer, now: now)
        // Held: a service runs (here the test holds it), and the verdict goes on to Syncthing (down).
        #expect(Healthcheck.check(environment: env, now: now) == .syncthingDown)
        #expect(Status.report(environment: env, now: now).running)
        close(fd)
        // Released, as the kernel does for a SIGKILLed service: not running, without waiting for the file to age.
        #expect(Healthcheck.check(environment: env, now: now) == .notRunning)
        let report = Status.report(environment: env, now: now)
        #expect(!report.running && report.exitStatus == .checkFailed)
        #expect(report.text() == "vaultsync-notify: not running (the service stopped without a farewell)")
        // No lock file at all (removed by hand): the recorded process decides, and it is gone.
        #expect(unlink(file.lockPath) == 0)
        #expect(Healthcheck.check(environment: env, now: now) == .notRunning)
        // A file without pid (an older writer) keeps the age rule: fresh, so Syncthing is asked.
        Self.writeFresh(file, writer: nil, now: now)
        #expect(Healthcheck.check(environment: env, now: now) == .syncthingDown)
    }

    @Test(
        "garbage, a wrong header or an oversized file: unreadable state file, not no state file",
        arguments: [
            "garbage\n", "vaultsync-notify-state 9\nlast_poll=1\n",
            "vaultsync-notify-state 1\n" + String(repeating: "k=v\n", count: 1030),
        ])
    func unreadable(text: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let env = Self.environment(dir)
        let file = try #require(StateFile.locate(environment: env, create: false))
        try text.write(toFile: file.path, atomically: false, encoding: .utf8)
        #expect(file.read() == .unreadable)
        #expect(Healthcheck.check(environment: env) == .unreadable)
        let report = Status.report(environment: env)
        #expect(report.health == .unreadable && report.exitStatus == .checkFailed)
        #expect(report.text().hasPrefix("vaultsync-notify: unreadable state file"), "\(report.text())")
        #expect(report.json().contains("\"health\" : \"unreadable-state\""))
        #expect(unlink(file.path) == 0)
        #expect(Status.report(environment: env).text().contains("(no state file)"))
    }
}
