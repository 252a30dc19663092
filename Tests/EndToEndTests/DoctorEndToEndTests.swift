import Foundation
import Testing

/// `--doctor` of the release binary against REAL Syncthing (lab node A) and the relay stand-in, inside the
/// loopback-only namespace. Gated like the other end-to-end tests.
@Suite(
    "Doctor end to end with real Syncthing", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class DoctorEndToEndTests {
    let lab: Lab
    let relay: Relay

    init() throws {
        lab = try Lab()
        relay = try Relay(dir: lab.dir)
    }

    deinit {
        relay.stop()
        lab.down()
    }

    /// Runs the binary with exactly this environment; returns (status, stdout, stderr).
    func doctor(_ args: [String]) throws -> (Int32, String, String) {
        try E2E.capture(
            [E2E.binary] + args,
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": lab.dir.path, "RELAY_URL": relay.url,
                "SYNCTHING_CONFIG": lab.info.a.config_path,
            ])
    }

    /// The API keys and the full Device IDs, with and without dashes. Paths and the short ID may be shown.
    var secrets: [String] {
        [
            lab.info.a.api_key, lab.info.b.api_key, lab.info.a.id, lab.info.b.id,
            lab.info.a.id.replacingOccurrences(of: "-", with: ""),
            lab.info.b.id.replacingOccurrences(of: "-", with: ""),
        ]
    }

    @Test("--doctor and --doctor --json: exit 0, the PASS lines, one real trigger each, no key or full Device ID")
    func doctor() throws {
        // B may still be connecting; peers are WARN only, so wait for it to make the sample output complete.
        try? lab.command("wait-connected", "--timeout", "30")

        let (status, text, errors) = try doctor(["--doctor"])
        print(text)
        #expect(status == 0, "doctor failed:\n\(text)\(errors)")
        for name in [
            "config.environment", "config.file", "syncthing.address-source", "syncthing.reachable",
            "syncthing.api-key", "syncthing.device-id", "syncthing.event-stream", "relay.url", "relay.health",
            "relay.trigger",
        ] {
            #expect(text.contains("PASS \(name)\n"), "\(name) did not pass")
        }
        #expect(text.contains("short ID \(lab.info.a.id.prefix(7))"))
        #expect(text.contains("relay version 1.3.2-standin"))
        #expect(text.contains("sent one real wake-up"))
        #expect(text.contains(lab.info.a.config_path))
        #expect(relay.triggers.count == 1)
        #expect(relay.triggers.first?.body == "{\"device_id\": \"\(lab.info.a.id)\"}")
        // README.md shows this run's output as its sample: equal but for what differs from run to run.
        #expect(
            try Self.normalised(text) == Self.normalised(Self.readmeSample()),
            "README.md's doctor sample differs from the real output:\n\(text)")

        let (jsonStatus, json, jsonErrors) = try doctor(["--doctor", "--json"])
        #expect(jsonStatus == 0, "doctor --json failed:\n\(json)\(jsonErrors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == true)
        let checks = try #require(object["checks"] as? [[String: Any]])
        let statuses = Dictionary(
            uniqueKeysWithValues: checks.compactMap { c in (c["name"] as? String).map { ($0, c["status"] as? String) } }
        )
        #expect(statuses["syncthing.api-key"] == "pass")
        #expect(statuses["relay.trigger"] == "pass")
        #expect(relay.triggers.count == 2)

        for output in [text, errors, json, jsonErrors] {
            for secret in secrets { #expect(!output.contains(secret), "doctor output shows a key or full Device ID") }
        }
    }

    /// The sample under "Real output against the Syncthing lab" in README.md's "Doctor" section.
    static func readmeSample() throws -> String {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let after = try #require(
            text.components(separatedBy: "Real output against the Syncthing lab").dropFirst().first)
        return try #require(after.components(separatedBy: "```\n").dropFirst().first)
    }

    /// Sets aside what changes from run to run: the lab's directory, ports, the file owner, the newest event id, the
    /// short ID and the binary's version.
    static func normalised(_ output: String) throws -> String {
        var text = output.trimmingCharacters(in: .newlines)
        for (pattern, replacement) in [
            (#"/\S*vsn-e2e-[0-9A-F]{8}/"#, "<lab>/"),
            (#"127\.0\.0\.1:[0-9]+"#, "127.0.0.1:<port>"),
            (#"owner uid:gid [0-9]+:[0-9]+"#, "owner uid:gid <uid>:<gid>"),
            (#"newest event id [0-9]+"#, "newest event id <n>"),
            (#"short ID [A-Z2-7]{7} "#, "short ID <id> "),
            (#"^vaultsync-notify \S+ doctor"#, "vaultsync-notify <version> doctor"),
        ] {
            text = text.replacing(try Regex(pattern), with: replacement)
        }
        return text
    }

    @Test("--doctor --no-trigger sends nothing to /api/v1/trigger")
    func noTrigger() throws {
        let (status, text, _) = try doctor(["--doctor", "--no-trigger"])
        #expect(status == 0, "\(text)")
        #expect(text.contains("SKIP relay.trigger\n"))
        #expect(relay.triggers.isEmpty)
    }
}
