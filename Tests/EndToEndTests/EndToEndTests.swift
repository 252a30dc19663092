import Foundation
import Testing

/// The sidecar against REAL Syncthing (Debian's 1.19.2 package, and trixie's 1.29.5 when scripts/test sets
/// VAULTSYNC_SYNCTHING): two instances sharing folders, the relay stand-in and the release binary, inside a
/// loopback-only network namespace (scripts/test).
@Suite(
    "End to end with real Syncthing", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class EndToEndTests {
    let lab: Lab
    let relay: Relay
    var sidecars: [Sidecar] = []

    init() throws {
        lab = try Lab()
        relay = try Relay(dir: lab.dir)
    }

    deinit {
        for s in sidecars { s.stop() }
        relay.stop()
        lab.down()
    }

    func start(_ env: [String: String] = [:]) throws -> Sidecar {
        let s = try Sidecar(lab: lab, relay: relay, env: env)
        sidecars.append(s)
        return s
    }

    func expectNoLeaks(_ s: Sidecar) {
        let leaks = s.leaks(lab.secrets)
        #expect(leaks.isEmpty, "log lines carrying an identifier: \(leaks)")
        #expect(!s.lines.isEmpty)
    }

    @Test("the startup announce arrives, and it is the only trigger at startup")
    func announce() throws {
        let s = try start(["STARTUP_ANNOUNCE": "true"])
        #expect(E2E.waitFor(20) { relay.triggers.count >= 1 })
        // Quiet period: nothing else may follow on its own.
        Thread.sleep(forTimeInterval: 3)
        #expect(relay.triggers.count == 1)
        let body = try #require(relay.triggers.first?.body)
        #expect(body == "{\"device_id\": \"\(lab.info.a.id)\"}")
        #expect(relay.requests.filter { $0.path == "/api/v1/health" }.count == 1)
        expectNoLeaks(s)
    }

    @Test("one file created on the server → exactly one trigger after the debounce")
    func oneFile() throws {
        let s = try start()
        #expect(s.waitConnected())
        let before = Date().timeIntervalSince1970
        try lab.write("vault", "one.md")
        #expect(E2E.waitFor(20) { relay.triggers.count >= 1 })
        let t = try #require(relay.triggers.first?.t)
        // fsWatcherDelayS is 1 s in the lab and the debounce is 1 s: the trigger cannot come sooner than that.
        #expect(t - before >= 1.0)
        Thread.sleep(forTimeInterval: 4)
        #expect(relay.triggers.count == 1)
        expectNoLeaks(s)
    }

    @Test("a burst of 200 files → one trigger")
    func burst() throws {
        let s = try start(["DEBOUNCE_SECONDS": "2", "DEBOUNCE_MAX_SECONDS": "30"])
        #expect(s.waitConnected())
        for i in 0..<200 { try lab.write("notes", "burst/file-\(i).md", "note \(i)\n") }
        #expect(E2E.waitFor(40) { relay.triggers.count >= 1 })
        Thread.sleep(forTimeInterval: 6)
        #expect(relay.triggers.count == 1)
        expectNoLeaks(s)
    }

    @Test("Syncthing restarted, then a change → a trigger within the debounce plus a few seconds")
    func restart() throws {
        let s = try start(["STALE_RETRIGGER_SECONDS": "0"])
        #expect(s.waitConnected())
        try lab.command("restart", "a")
        // The restart itself may wake once (events may have been lost); wait for the sidecar to settle.
        #expect(E2E.waitFor(30) { s.log.contains("Syncthing restarted") })
        Thread.sleep(forTimeInterval: 3)
        try expectChangeWakesSoon("after-restart.md")
        expectNoLeaks(s)
    }

    /// Writes `name` into the shared folder and expects a trigger within fsWatcherDelayS 1 s + debounce 1 s + a few
    /// seconds.
    private func expectChangeWakesSoon(_ name: String) throws {
        let before = relay.triggers.count
        let changed = Date().timeIntervalSince1970
        try lab.write("vault", name)
        try #require(E2E.waitFor(15) { relay.triggers.count > before })
        let t = try #require(relay.triggers.last?.t)
        #expect(t - changed < 8)
    }

    @Test("Syncthing restarted while changes keep coming → the restart is seen; the change after it wakes the relay")
    func busyRestart() throws {
        let s = try start(["STALE_RETRIGGER_SECONDS": "0"])
        #expect(s.waitConnected())
        // A change every 50 ms from before the restart until after it: the long-poll answers on the kept-alive
        // connection the whole time, and the restart must still be seen (a restart closes every connection).
        let folder = URL(fileURLWithPath: lab.info.a.folders["vault"]!).appendingPathComponent("busy")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let writer = Thread {
            for i in 0..<160 {
                try? Data("busy \(i)\n".utf8).write(to: folder.appendingPathComponent("note-\(i).md"))
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        writer.start()
        Thread.sleep(forTimeInterval: 2)
        try lab.command("restart", "a")
        #expect(E2E.waitFor(30) { s.log.contains("Syncthing restarted") }, "the restart was not seen:\n\(s.log)")
        // The writer ends 8 s after it began; then let the debounce and the push window of the last wake-up pass.
        Thread.sleep(forTimeInterval: 8)
        try expectChangeWakesSoon("after-busy-restart.md")
        expectNoLeaks(s)
    }

    @Test("peer paused, change made, short STALE_RETRIGGER_SECONDS → the sweep wakes the relay")
    func stalePeer() throws {
        let s = try start(["STALE_RETRIGGER_SECONDS": "10"])
        #expect(s.waitConnected())
        // B first receives one file, so that A knows B's index for the folder (with no index yet, 1.19 reports
        // B as complete).
        try lab.write("vault", "before.md")
        #expect(E2E.waitFor(15) { relay.triggers.count >= 1 })
        Thread.sleep(forTimeInterval: 2)
        // The phone's side pauses the server (as a sleeping phone drops off): on A, B stays an unpaused but
        // disconnected peer whose last known need is above zero.
        try lab.command("api", "b", "PATCH", "/rest/config/devices/\(lab.info.a.id)", #"{"paused": true}"#)
        Thread.sleep(forTimeInterval: 2)
        let before = relay.triggers.count
        try lab.write("vault", "while-paused.md")
        // The change itself wakes the relay once (LocalIndexUpdated)...
        #expect(E2E.waitFor(15) { relay.triggers.count >= before + 1 })
        // ...and with no further change, the sweep wakes it again. Wait for the sweep's own delivered wake-up rather
        // than for a count: Syncthing 1.20+ (1.29.5 here) also emits a FolderCompletion for the disconnected peer
        // (remoteState "unknown", need > 0) about a second after the change, which can wake the relay once more with
        // reason=change before the sweep runs; 1.19 emits none (docs/syncthing-versions.md).
        let swept = E2E.waitFor(30) {
            s.lines.contains { $0.contains("wake-up delivered") && $0.contains("reason=stale-peer") }
        }
        #expect(swept, "no delivered stale-peer wake-up:\n\(s.log)")
        #expect(relay.triggers.count >= before + 2)
        expectNoLeaks(s)
    }

    @Test("--status's recent list: a change in an unshared folder, one in a shared folder, one inside the push window")
    func recentDecisions() throws {
        let runtime = lab.dir.appendingPathComponent("run")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let env = [
            "PATH": "/usr/bin:/bin", "HOME": lab.dir.path, "RELAY_URL": relay.url,
            "SYNCTHING_CONFIG": lab.info.a.config_path, "RUNTIME_DIRECTORY": runtime.path,
        ]
        let s = try start(["RUNTIME_DIRECTORY": runtime.path, "RELAY_WINDOW_SECONDS": "8"])
        #expect(s.waitConnected())
        func status() -> [String: Any] {
            guard let (_, out, _) = try? E2E.capture([E2E.binary, "--status", "--json"], environment: env) else {
                return [:]
            }
            return (try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]) ?? [:]
        }
        func recent() -> [[String: Any]] { status()["recent"] as? [[String: Any]] ?? [] }
        func has(_ decision: String, _ outcome: String, relay: String? = nil) -> Bool {
            recent().contains {
                $0["decision"] as? String == decision && $0["outcome"] as? String == outcome
                    && (relay == nil || $0["relay"] as? String == relay)
            }
        }
        // `notes` stops being shared with B; once the service has read that, a change there wakes nobody.
        try lab.command(
            "api", "a", "PATCH", "/rest/config/folders/notes", #"{"devices": [{"deviceID": "\#(lab.info.a.id)"}]}"#)
        let reread = E2E.waitFor(20) { (status()["shared"] as? [String: Any])?["folders"] as? Int == 1 }
        #expect(reread, "the service did not read the new sharing: \(status())")
        try lab.write("notes", "unshared.md")
        #expect(E2E.waitFor(15) { has("change-unshared", "not-woken") }, "\(recent())")
        #expect(relay.triggers.isEmpty)
        // A change in the shared folder wakes the relay; the next, inside the push window that opened, is held.
        try lab.write("vault", "shared.md")
        #expect(E2E.waitFor(15) { relay.delivered.count == 1 })
        #expect(E2E.waitFor(5) { has("wake-answered", "answered", relay: "delivered") }, "\(recent())")
        try lab.write("vault", "inside-window.md")
        #expect(E2E.waitFor(6) { has("change", "held", relay: "window") }, "\(recent())")
        #expect(E2E.waitFor(15) { relay.delivered.count == 2 })
        let decisions = E2E.waitFor(5) { recent().count { $0["decision"] as? String == "wake-answered" } >= 2 }
        #expect(decisions, "\(recent())")
        let (code, text, _) = try E2E.capture([E2E.binary, "--status"], environment: env)
        #expect(code == 0, "\(text)")
        for line in [
            "change in a folder shared with no device (or only paused ones) → not woken",
            "change in a watched folder shared with 1 device → held: the relay's push window is open until",
            "wake-up for news → woke the relay (delivered)",
        ] {
            #expect(text.contains(line), "\(text)")
        }
        let leaks = lab.secrets.filter {
            !$0.isEmpty && text.replacingOccurrences(of: "vaultsync", with: "").contains($0)
        }
        #expect(leaks.isEmpty, "identifiers in --status: \(leaks)")
        print(text)
        expectNoLeaks(s)
    }

    @Test("relay answering 503 for a while → one delivery after it recovers, no storm")
    func relayOutage() throws {
        try relay.setFaults(#"[{"status": 503, "count": 3}]"#)
        let s = try start(["STARTUP_ANNOUNCE": "true"])
        #expect(E2E.waitFor(40) { relay.delivered.count >= 1 })
        Thread.sleep(forTimeInterval: 3)
        #expect(relay.delivered.count == 1)
        // 3 failures + 1 success, spaced by the backoff (1 s, 2 s, 4 s ceilings with jitter): no storm.
        #expect(relay.triggers.count == 4)
        expectNoLeaks(s)
    }

    @Test("relay 404 → exit 78")
    func relay404() throws {
        try relay.setFaults(#"[{"status": 404, "count": -1, "paths": ["/api/v1/health", "/api/v1/trigger"]}]"#)
        let s = try start(["STARTUP_ANNOUNCE": "true"])
        #expect(E2E.waitFor(20) { !s.process.isRunning })
        s.process.waitUntilExit()
        #expect(s.process.terminationStatus == 78)
        #expect(s.log.contains("RELAY_URL"))
        #expect(s.log.contains(E2E.relayNotFoundFatal), "\(s.log)")
        expectNoLeaks(s)
    }

    @Test("SIGTERM → exit 0 within a second or two when nothing is pending")
    func sigterm() throws {
        let s = try start()
        #expect(s.waitConnected())
        Thread.sleep(forTimeInterval: 1)
        let (status, elapsed) = s.terminate()
        #expect(status == 0)
        #expect(elapsed < 2)
        expectNoLeaks(s)
    }

    @Test("SIGTERM during the debounce sends the pending wake-up, then exits 0")
    func sigtermFlush() throws {
        let s = try start(["DEBOUNCE_SECONDS": "30", "DEBOUNCE_MAX_SECONDS": "60"])
        #expect(s.waitConnected())
        try lab.write("vault", "pending.md")
        #expect(E2E.waitFor(10) { s.log.contains("wake-up scheduled") })
        let (status, elapsed) = s.terminate()
        #expect(status == 0)
        #expect(elapsed < 5)
        #expect(relay.triggers.count == 1)
        expectNoLeaks(s)
    }
}
