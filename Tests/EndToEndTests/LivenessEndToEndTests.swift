import Foundation
import NotifyCore
import Testing

/// The release binary's liveness through its state file, against the fake Syncthing and the relay stand-in: a
/// SIGKILLed service reads as not running at once (its lock goes with it), a second service for the same Syncthing
/// instance is refused at start, and the lock a killed one leaves never blocks the next.
@Suite(
    "Liveness end to end: SIGKILL, a second instance, the lock", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class LivenessEndToEndTests {
    let dir: URL
    let relay: Relay
    let fake: FakeSyncthingProcess
    var sidecars: [Sidecar] = []

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vsn-live-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        relay = try Relay(dir: dir)
        fake = try FakeSyncthingProcess(dir: dir, apiKey: "live-apikey-\(UUID().uuidString.prefix(12))")
    }

    deinit {
        for s in sidecars { s.stop() }
        fake.stop()
        relay.stop()
        try? FileManager.default.removeItem(at: dir)
    }

    /// The service's environment; `--status` and `--healthcheck` run with the same.
    var env: [String: String] {
        [
            "PATH": "/usr/bin:/bin", "HOME": dir.path, "RELAY_URL": relay.url, "SYNCTHING_API_URL": fake.url,
            "SYNCTHING_API_KEY": fake.apiKey, "STARTUP_ANNOUNCE": "false", "RUNTIME_DIRECTORY": runtime,
        ]
    }
    var runtime: String { dir.appendingPathComponent("rt").path }

    func start(_ extra: [String: String] = [:]) throws -> Sidecar {
        let s = try Sidecar(dir: dir, name: "sidecar-\(sidecars.count)", env: env.merging(extra) { $1 })
        sidecars.append(s)
        return s
    }

    /// `--status` (text) and `--healthcheck`: (status's exit, its first line, healthcheck's exit).
    func check() throws -> (Int32, String, Int32) {
        let (code, out, _) = try E2E.capture([E2E.binary, "--status"], environment: env)
        let (health, _, _) = try E2E.capture([E2E.binary, "--healthcheck"], environment: env)
        return (code, String(out.split(separator: "\n").first ?? ""), health)
    }

    /// The pid the state file records.
    func recordedPid() -> Int32? {
        let names = E2E.stateFiles(in: runtime)
        guard names.count == 1,
            let text = try? String(contentsOfFile: runtime + "/" + names[0], encoding: .utf8)
        else { return nil }
        return ServiceState.decode(text)?.writer?.pid
    }

    @Test("SIGKILL: --status and --healthcheck say not running within a second; the next service starts")
    func sigkill() throws {
        let s = try start()
        try #require(s.waitConnected(15), "not connected: \(s.log)")
        #expect(E2E.waitFor(10) { (try? check()).map { $0.0 == 0 && $0.2 == 0 } ?? false }, "never healthy")
        #expect(recordedPid() == s.process.processIdentifier)

        kill(s.process.processIdentifier, SIGKILL)
        s.process.waitUntilExit()
        let killed = Date()
        let (code, headline, health) = try check()
        let took = Date().timeIntervalSince(killed)
        #expect(headline == "vaultsync-notify: not running (the service stopped without a farewell)")
        #expect(code == 1 && health == 1)
        #expect(took < 1, "the answer took \(took) s")
        // The killed one's file and lock stay behind; neither stops the next service.
        let next = try start()
        #expect(next.waitConnected(15), "the restart was blocked: \(next.log)")
        #expect(E2E.waitFor(10) { recordedPid() == next.process.processIdentifier })
        #expect(E2E.waitFor(10) { (try? check()).map { $0.0 == 0 && $0.2 == 0 } ?? false }, "not healthy again")
        // A clean stop still removes the state file (the lock file stays, empty).
        #expect(next.terminate().0 == 0)
        #expect(E2E.stateFiles(in: runtime).isEmpty)
        #expect(try check().1.contains("(no state file)"))
    }

    @Test("a second service with the same environment is refused at start with its line and fix, and exit 75")
    func secondInstance() throws {
        let first = try start()
        try #require(first.waitConnected(15), "not connected: \(first.log)")
        let second = try start()
        try #require(E2E.waitFor(10) { !second.process.isRunning }, "the second one kept running: \(second.log)")
        second.process.waitUntilExit()
        #expect(second.process.terminationStatus == 75)
        let lines = second.lines
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasPrefix("vaultsync-notify: another vaultsync-notify already runs") == true)
        #expect(lines.last?.hasPrefix("  fix: `vaultsync-notify --status` shows the running one") == true)
        // With LOG_FORMAT=json the refusal is one JSON object, as every other line on stderr.
        let third = try start(["LOG_FORMAT": "json"])
        try #require(E2E.waitFor(10) { !third.process.isRunning }, "the third one kept running: \(third.log)")
        third.process.waitUntilExit()
        #expect(third.process.terminationStatus == 75)
        #expect(third.lines.count == 1, "\(third.lines)")
        let object = try JSONSerialization.jsonObject(with: Data((third.lines.first ?? "").utf8)) as? [String: Any]
        #expect(object?["exit_status"] as? Int == 75 && object?["level"] as? String == "warn", "\(third.lines)")
        #expect(!lines.joined().contains(dir.path) && !lines.joined().contains(fake.url))
        // The first one is untouched and still the file's writer.
        #expect(first.process.isRunning)
        #expect(recordedPid() == first.process.processIdentifier)
        #expect(try check().0 == 0)
        #expect(first.terminate().0 == 0)
    }
}
