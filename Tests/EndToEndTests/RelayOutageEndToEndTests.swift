import Foundation
import Testing

/// The release binary with a fake Syncthing and the relay stand-in: a relay 404 after a healthy start is an
/// outage, not a wrong RELAY_URL; a SIGTERM before Syncthing or config.xml is there ends with the usual "stopped"
/// record; two instances keep separate health state files, and `--status` finds each by its environment. Part of the
/// fault-injection suite (its helpers, its loopback-only namespace, serialized).
extension FaultInjectionTests {
    // MARK: - Relay 404

    @Test("relay 404 after a healthy start → keeps running, backs off, delivers when the relay answers again")
    func relay404AfterHealthyStart() throws {
        let (fake, s) = try connected()
        #expect(s.log.contains("relay healthy"))
        try relay.setFaults(#"[{"status": 404, "count": 2}]"#)
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault", "filenames": ["during-deploy.md"]}"#)
        // 1 s debounce, 404, a backoff of at most 1 s, 404, at most 2 s, then 202.
        #expect(E2E.waitFor(Self.wakeWithin + 4) { relay.delivered.count >= 1 }, "\(s.log)")
        #expect(relay.triggers.map(\.status) == [404, 404, 202])
        let outage = s.lines.filter { $0.contains("relay outage, backing off") }
        #expect(outage.count == 2, "\(s.log)")
        #expect(outage.allSatisfy { $0.contains("level=error") && $0.contains("status=404") })
        #expect(s.count("wake-up delivered") == 1)
        #expect(!s.log.contains("exiting"))
        expectCleanExit(s)
        expectNoLeaks(s, fake, extra: ["during-deploy.md"])
    }

    @Test("relay 404 to the first trigger when the health check did not answer ok → exit 78 (a wrong RELAY_URL)")
    func relay404BeforeTheRelayAnswered() throws {
        try relay.setFaults(#"[{"status": 503, "paths": ["/api/v1/health"]}, {"status": 404}]"#)
        let fake = try startFake()
        let s = try startSidecar(fake, env: ["STARTUP_ANNOUNCE": "true"])
        #expect(E2E.waitFor(15) { !s.process.isRunning }, "\(s.log)")
        s.process.waitUntilExit()
        #expect(s.process.terminationStatus == 78)
        #expect(s.log.contains("relay answered 404: RELAY_URL is wrong; exiting"))
        #expect(s.log.contains(E2E.relayNotFoundFatal), "\(s.log)")
        #expect(relay.triggers.map(\.status) == [404])
        expectNoLeaks(s, fake)
    }

    // MARK: - SIGTERM before the service runs

    /// SIGTERM now: exit status 0 (not death by the signal) within 2 s, and the log ends with the same two records
    /// as every other stop.
    func expectStoppedRecord(_ s: Sidecar, sourceLocation: SourceLocation = #_sourceLocation) {
        let (status, elapsed) = s.terminate()
        #expect(s.process.terminationReason == .exit, sourceLocation: sourceLocation)
        #expect(status == 0, sourceLocation: sourceLocation)
        #expect(elapsed < 2, sourceLocation: sourceLocation)
        let tail = s.lines.suffix(2)
        #expect(tail.first?.contains("msg=\"shutdown requested\"") == true, "\(s.log)", sourceLocation: sourceLocation)
        #expect(tail.last?.contains("level=info msg=\"stopped\"") == true, "\(s.log)", sourceLocation: sourceLocation)
    }

    @Test("SIGTERM while Syncthing is unreachable → exit 0 with the usual 'stopped' record")
    func sigtermWhileSyncthingUnreachable() throws {
        let fake = try startFake(listenOnSignal: true)
        let s = try startSidecar(fake)
        #expect(E2E.waitFor(10) { s.log.contains("Syncthing not reachable, retrying") }, "\(s.log)")
        expectStoppedRecord(s)
        expectNoLeaks(s, fake)
    }

    @Test("SIGTERM while waiting for config.xml → exit 0 with the usual 'stopped' record")
    func sigtermDuringConfigWait() throws {
        let late = dir.appendingPathComponent("late")
        try FileManager.default.createDirectory(at: late, withIntermediateDirectories: true)
        let env = [
            "PATH": "/usr/bin:/bin", "HOME": dir.path, "RELAY_URL": relay.url,
            "SYNCTHING_CONFIG": late.appendingPathComponent("config.xml").path,
            "SYNCTHING_CONFIG_WAIT_SECONDS": "60", "LOG_LEVEL": "debug",
        ]
        let s = try Sidecar(dir: dir, name: "sidecar-config-wait", env: env)
        sidecars.append(s)
        #expect(E2E.waitFor(10) { s.log.contains("waiting for Syncthing config.xml") }, "\(s.log)")
        // --status with the same environment: a service waiting for config.xml, not "no running instance".
        var statusEnv = env
        statusEnv["LOG_LEVEL"] = nil
        let (code, out, _) = try E2E.capture([E2E.binary, "--status"], environment: statusEnv)
        #expect(code == 1)
        #expect(
            out.hasPrefix("vaultsync-notify: unhealthy: waiting for Syncthing's config.xml (the wait ends in "),
            "\(out)")
        #expect(!out.contains(late.path), "\(out)")
        expectStoppedRecord(s)
        #expect(relay.requests.isEmpty)
        // The stop took the wait's state file with it: no instance any more, not a wait that "ends in …".
        let (after, afterOut, _) = try E2E.capture([E2E.binary, "--status"], environment: statusEnv)
        #expect(after == 1)
        #expect(afterOut.hasPrefix("vaultsync-notify: no running instance found for this environment"), "\(afterOut)")
    }

    // MARK: - Two instances, two state files

    @Test(
        "two instances in one runtime directory: separate state files; stopping one leaves the other healthy; --status finds each"
    )
    func twoInstancesTwoStateFiles() throws {
        let runtime = dir.appendingPathComponent("rt")
        let fakeA = try startFake()
        let fakeB = try FakeSyncthingProcess(dir: dir, apiKey: apiKey, name: "fake-syncthing-b")
        fakes.append(fakeB)
        let a = try startSidecar(fakeA, env: ["RUNTIME_DIRECTORY": runtime.path])
        let b = try startSidecar(fakeB, env: ["RUNTIME_DIRECTORY": runtime.path])
        func stateFiles() -> [String] { E2E.stateFiles(in: runtime.path) }
        #expect(a.waitConnected(15) && b.waitConnected(15))
        #expect(E2E.waitFor(10) { stateFiles().count == 2 }, "\(stateFiles())")
        let healthEnvB: [String: String] = [
            "PATH": "/usr/bin:/bin", "HOME": dir.path, "RELAY_URL": relay.url, "SYNCTHING_API_URL": fakeB.url,
            "SYNCTHING_API_KEY": apiKey, "RUNTIME_DIRECTORY": runtime.path,
        ]
        #expect(try E2E.capture([E2E.binary, "--healthcheck"], environment: healthEnvB).0 == 0)
        try expectStatus(healthEnvB, fakeB, healthy: true)
        expectCleanExit(a)
        #expect(stateFiles().count == 1, "A's clean stop removed only its own file: \(stateFiles())")
        #expect(try E2E.capture([E2E.binary, "--healthcheck"], environment: healthEnvB).0 == 0)
        // A's environment finds no running instance now; B's still finds B.
        var healthEnvA = healthEnvB
        healthEnvA["SYNCTHING_API_URL"] = fakeA.url
        try expectStatus(healthEnvA, fakeA, healthy: false)
        try expectStatus(healthEnvB, fakeB, healthy: true)
        expectCleanExit(b)
        #expect(stateFiles().isEmpty)
        try expectStatus(healthEnvB, fakeB, healthy: false)
    }

    /// `--status` and `--status --json` with `env`: exit 0 and a running, healthy instance, or exit 1 and the one
    /// line saying no instance runs for this environment; no identifier in either form.
    func expectStatus(
        _ env: [String: String], _ fake: FakeSyncthingProcess, healthy: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (status, text, _) = try E2E.capture([E2E.binary, "--status"], environment: env)
        let (jsonStatus, json, _) = try E2E.capture([E2E.binary, "--status", "--json"], environment: env)
        #expect(status == (healthy ? 0 : 1) && jsonStatus == status, "\(text)", sourceLocation: sourceLocation)
        if healthy {
            #expect(text.hasPrefix("vaultsync-notify: healthy\n"), "\(text)", sourceLocation: sourceLocation)
            #expect(text.contains("  Syncthing         reachable"), "\(text)", sourceLocation: sourceLocation)
            #expect(json.contains(#""running" : true"#), "\(json)", sourceLocation: sourceLocation)
        } else {
            #expect(
                text.hasPrefix("vaultsync-notify: no running instance found for this environment"), "\(text)",
                sourceLocation: sourceLocation)
            #expect(text.split(separator: "\n").count == 1, "\(text)", sourceLocation: sourceLocation)
            #expect(json.contains(#""running" : false"#), "\(json)", sourceLocation: sourceLocation)
        }
        for output in [text, json] {
            let scanned = output.replacingOccurrences(of: "vaultsync", with: "")
            let leaks = secrets(fake).filter { scanned.contains($0) }
            #expect(leaks.isEmpty, "identifiers in --status: \(leaks)", sourceLocation: sourceLocation)
            #expect(!scanned.contains("state-"), sourceLocation: sourceLocation)
        }
    }
}
