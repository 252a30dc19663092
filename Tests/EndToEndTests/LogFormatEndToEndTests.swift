import Foundation
import Testing

/// Every line on stderr under LOG_FORMAT=json: the usage error, invalid variables (at start and from
/// `--check-config`), a METRICS_FILE that could never be written, and a fatal exit of the running service. The
/// release binary, run as a service manager runs it.
extension ConfigEndToEndTests {
    /// The objects of `stderr`, one per line; a line that is not a JSON object is recorded as an issue.
    func jsonObjects(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        LogFormatCheck.objects(stderr, sourceLocation: sourceLocation)
    }

    @Test("LOG_FORMAT=json: a usage error is one JSON object (64); an invalid LOG_FORMAT leaves it text")
    func usageErrorAsJSON() throws {
        let (status, out, err, _) = try run(["--bogus"], env(["LOG_FORMAT": "json"]))
        #expect(status == 64)
        #expect(out.isEmpty)
        let objects = jsonObjects(err)
        #expect(objects.count == 1, "\(err)")
        #expect(objects.first?["level"] as? String == "error")
        #expect(objects.first?["msg"] as? String == "unknown option '--bogus'")
        #expect((objects.first?["usage"] as? String)?.hasPrefix("usage: vaultsync-notify [--doctor") == true)
        #expect(objects.first?["exit_status"] as? Int == 64)
        // Before any configuration, and whatever else is wrong with it: RELAY_URL is not even needed.
        let (_, _, bare, _) = try run(["--json"], ["LOG_FORMAT": "JSON", "PATH": "/usr/bin:/bin"])
        #expect(jsonObjects(bare).count == 1, "\(bare)")
        let (textStatus, _, text, _) = try run(["--bogus"], env(["LOG_FORMAT": "yaml"]))
        #expect(textStatus == 64)
        #expect(text.hasPrefix("vaultsync-notify: unknown option '--bogus'\nusage: "), "\(text)")
    }

    @Test("LOG_FORMAT=json: invalid variables at start and from --check-config are JSON objects (78), no value shown")
    func configurationErrorsAsJSON() throws {
        let bad = env(["LOG_FORMAT": "json", "RELAY_URL": "ftp://relay.example.invalid", "DEBOUNCE_SECONDS": "soon"])
        for args in [[], ["--check-config"]] {
            let (status, out, err, _) = try run(args, bad)
            #expect(status == 78, "\(args): \(err)")
            #expect(out.isEmpty)
            let objects = jsonObjects(err)
            #expect(objects.compactMap { $0["msg"] as? String }.map { $0.prefix(10) } == ["RELAY_URL:", "DEBOUNCE_S"])
            #expect(objects.allSatisfy { ($0["fix"] as? String)?.hasSuffix("for details") == true })
            #expect(objects.allSatisfy { $0["exit_status"] as? Int == 78 && $0["time"] is String })
            #expect(!err.contains("relay.example.invalid") && !err.contains("soon"), "\(err)")
        }
        // LOG_FORMAT itself invalid: its own error, clearly, in text (the format it falls back to).
        let (status, _, err, _) = try run([], env(["LOG_FORMAT": "jsn"]))
        #expect(status == 78)
        #expect(
            err.hasPrefix("vaultsync-notify: LOG_FORMAT: is not one of the accepted words; expected text or json\n"))
    }

    @Test("a METRICS_FILE in a missing directory or naming a directory: 78 at start and from --check-config, as JSON")
    func metricsFilePlaceRefused() throws {
        for metrics in [dir.appendingPathComponent("no-such-dir/m.prom").path, dir.path] {
            let environment = env([
                "LOG_FORMAT": "json", "METRICS_FILE": metrics, "SYNCTHING_API_URL": "http://127.0.0.1:9",
                "SYNCTHING_API_KEY": "k",
            ])
            let (status, _, checked, _) = try run(["--check-config"], environment)
            // The service itself: a service that is not refused would run on (Syncthing is not there), so it is
            // given 10 s.
            let s = try Sidecar(dir: dir, name: "metrics-place", env: environment)
            let ended = E2E.waitFor(10) { !s.process.isRunning }
            s.stop()
            #expect(ended, "refused at start, before any wait: \(s.log)")
            for (status, err) in [(status, checked), (s.process.terminationStatus, s.log)] {
                #expect(status == 78, "\(err)")
                let messages = jsonObjects(err).compactMap { $0["msg"] as? String }
                #expect(messages.last?.hasPrefix("METRICS_FILE: names a ") == true, "\(err)")
                #expect(!err.contains(dir.path), "\(err)")
            }
        }
        // A file in an existing directory passes, and the check leaves nothing there.
        let good = dir.appendingPathComponent("textfile")
        try FileManager.default.createDirectory(at: good, withIntermediateDirectories: false)
        let (status, _, err, _) = try run(
            ["--check-config"],
            env([
                "METRICS_FILE": good.appendingPathComponent("m.prom").path, "SYNCTHING_API_URL": "http://127.0.0.1:9",
                "SYNCTHING_API_KEY": "k",
            ]))
        #expect(status == 0, "\(err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: good.path).isEmpty)
    }

    @Test("LOG_FORMAT=json: config.xml unusable at start → the records and the fatal lines are all JSON (78)")
    func startupFatalAsJSON() throws {
        // A directory with other files but no config.xml cannot be Syncthing's: 78 after the logger started.
        let foreign = dir.appendingPathComponent("foreign")
        try FileManager.default.createDirectory(at: foreign, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: foreign.appendingPathComponent("other.txt"))
        let (status, _, err, _) = try run(
            [],
            env([
                "LOG_FORMAT": "json", "SYNCTHING_CONFIG": foreign.path, "SYNCTHING_CONFIG_WAIT_SECONDS": "0",
                "RUNTIME_DIRECTORY": dir.appendingPathComponent("rt-json").path,
            ]))
        #expect(status == 78, "\(err)")
        let objects = jsonObjects(err)
        #expect(objects.first?["msg"] as? String == "starting", "\(err)")
        #expect(objects.contains { $0["msg"] as? String == "invalid configuration" }, "\(err)")
        #expect(objects.last?["exit_status"] as? Int == 78, "\(err)")
        #expect(!err.contains(foreign.path), "\(err)")
    }
}

extension FaultInjectionTests {
    @Test("LOG_FORMAT=json: a relay 404 at start → every line, the fatal one too, is a JSON object (78)")
    func relay404FatalAsJSON() throws {
        try relay.setFaults(#"[{"status": 503, "paths": ["/api/v1/health"]}, {"status": 404}]"#)
        let fake = try startFake()
        let s = try startSidecar(fake, env: ["STARTUP_ANNOUNCE": "true", "LOG_FORMAT": "json"])
        #expect(E2E.waitFor(15) { !s.process.isRunning }, "\(s.log)")
        s.process.waitUntilExit()
        #expect(s.process.terminationStatus == 78)
        let objects = LogFormatCheck.objects(s.log)
        #expect(objects.count > 3, "\(s.log)")
        let last = objects.last ?? [:]
        #expect(last["msg"] as? String == "the relay answered 404 at start-up: there is no relay API at RELAY_URL")
        #expect(last["exit_status"] as? Int == 78 && last["level"] as? String == "error")
        expectNoLeaks(s, fake)
    }
}

enum LogFormatCheck {
    /// The JSON objects of `text`, one per line; each line that is not one is recorded as an issue.
    static func objects(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if object == nil { Issue.record("not a JSON object: \(line)", sourceLocation: sourceLocation) }
            return object
        }
    }
}
