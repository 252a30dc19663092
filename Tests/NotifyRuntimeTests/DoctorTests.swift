import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// Golden files under `Fixtures/golden/`, compared byte for byte. `VAULTSYNC_UPDATE_GOLDEN=1 swift test --filter
/// Doctor` rewrites them from the current output (review the diff before committing).
enum Golden {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/golden")

    static var updating: Bool { ProcessInfo.processInfo.environment["VAULTSYNC_UPDATE_GOLDEN"] == "1" }

    static func check(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let url = directory.appendingPathComponent(name)
        let bytes = Data(actual.utf8)
        if updating {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            #expect((try? bytes.write(to: url)) != nil, "could not write \(name)", sourceLocation: sourceLocation)
            return
        }
        guard let expected = try? Data(contentsOf: url) else {
            Issue.record(
                "missing golden file \(name); run with VAULTSYNC_UPDATE_GOLDEN=1", sourceLocation: sourceLocation)
            return
        }
        #expect(
            expected == bytes,
            "\(name) differs (VAULTSYNC_UPDATE_GOLDEN=1 rewrites it):\n--- expected\n\(String(decoding: expected, as: UTF8.self))\n--- actual\n\(actual)",
            sourceLocation: sourceLocation)
    }
}

/// One doctor run against a fake filesystem, a fake config.xml and scripted Syncthing and relay servers.
struct DoctorScenario: @unchecked Sendable {
    static let myID = "27CDMTM-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQA"
    static let peerID = "3QS6B4R-QZ3C5KB-VOZ2GGO-KZDLF7J-EDD3PR4-IWNFNTB-WNGZDVT-XG4XJAA"
    static let apiKey = "doctorKey-Ku7pQ2sWx9Zr4LmN"

    var name: String
    var environment: [String: String] = [
        "RELAY_URL": "https://relay.example", "SYNCTHING_CONFIG": "/var/syncthing/config", "HOME": "/home/st",
    ]
    var gui = SyncthingGUIConfig(address: "127.0.0.1:8384", apiKey: DoctorScenario.apiKey, tls: false)
    var readable = true
    var trigger = true
    let fileSystem = FakeConfigFileSystem()
    /// The CA probe's view: Debian's bundle is there.
    let caFiles = FakeTrustFileSystem()
    let syncthing = ScriptedTransport()
    let relay = ScriptedTransport()

    init(_ name: String) {
        self.name = name
        let owner = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o700)
        fileSystem.add("/var/syncthing/config", .directory(owner, searchable: true))
        caFiles.addFile("/etc/ssl/certs/ca-certificates.crt")
    }

    static func status(overridden: Bool = false) -> String {
        #"{"myID":"\#(myID)","startTime":"2026-05-01T10:00:00Z","guiAddressOverridden":\#(overridden),"uptime":5}"#
    }

    static func connections(peerConnected: Bool, peerPaused: Bool = false) -> String {
        #"{"connections":{"\#(myID)":{"connected":false,"paused":false},"\#(peerID)":{"connected":\#(peerConnected),"paused":\#(peerPaused)}},"total":{}}"#
    }

    static let folders =
        #"[{"id":"vault","paused":false,"devices":[{"deviceID":"\#(myID)"},{"deviceID":"\#(peerID)"}]},"#
        + #"{"id":"solo","paused":false,"devices":[{"deviceID":"\#(myID)"}]}]"#

    /// The Syncthing answers of a healthy server (status, event head, connections, folders).
    func syncthingHealthy(overridden: Bool = false, peerConnected: Bool = true, peerPaused: Bool = false) {
        syncthing.expect(path: "/rest/system/status", status: 200, body: Self.status(overridden: overridden))
        syncthing.expect(
            path: "/rest/events", status: 200,
            body: #"[{"id":7,"globalID":9,"time":"2026-05-01T10:00:01Z","type":"LocalIndexUpdated","data":{}}]"#)
        syncthing.expect(
            path: "/rest/system/connections", status: 200,
            body: Self.connections(peerConnected: peerConnected, peerPaused: peerPaused))
        syncthing.expect(path: "/rest/config/folders", status: 200, body: Self.folders)
    }

    func relayHealthy() {
        relay.expect(path: "/api/v1/health", status: 200, body: #"{"status":"ok","version":"1.3.2"}"#)
    }

    func run() -> DoctorReport {
        let owner = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o600)
        fileSystem.add("/var/syncthing/config/config.xml", .file(owner, readable: readable))
        let gui = self.gui
        let deps = Doctor.Dependencies(
            fileSystem: fileSystem,
            loadConfig: { (_: String) throws(ConfigFileError) -> SyncthingGUIConfig in gui },
            certificatePin: { _ in "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" },
            syncthingTransport: syncthing, relayTransport: relay, home: "/home/st", isMacOS: false,
            trustStore: TrustStore(environment: [:], fileSystem: caFiles, usesPlatformStore: false))
        let report = Doctor.check(environment: environment, trigger: trigger, dependencies: deps)
        syncthing.verifyDone()
        relay.verifyDone()
        return report
    }

    /// Every shape the golden files cover.
    static var all: [DoctorScenario] {
        var out: [DoctorScenario] = []

        var s = DoctorScenario("all-pass")
        s.syncthingHealthy()
        s.relayHealthy()
        s.relay.expect(path: "/api/v1/trigger", status: 202, body: #"{"status":"accepted","devices_notified":1}"#)
        out.append(s)

        s = DoctorScenario("no-trigger")
        s.trigger = false
        s.syncthingHealthy()
        s.relayHealthy()
        out.append(s)

        s = DoctorScenario("warnings-only")
        s.syncthingHealthy(overridden: true, peerConnected: false)
        s.relayHealthy()
        s.relay.expect(path: "/api/v1/trigger", status: 429, body: "{}", headers: ["retry-after": "30"])
        out.append(s)

        s = DoctorScenario("config-unreadable")
        s.readable = false
        s.relayHealthy()
        out.append(s)

        s = DoctorScenario("unreachable")
        s.syncthing.expect(.failure(.connect)) { $0.url.hasSuffix("/rest/system/status") }
        s.relayHealthy()
        out.append(s)

        s = DoctorScenario("wrong-key")
        s.syncthing.expect(path: "/rest/system/status", status: 403, body: "CSRF Error\n")
        s.relayHealthy()
        out.append(s)

        s = DoctorScenario("host-check")
        s.environment["SYNCTHING_API_URL"] = "http://syncthing:8384"
        s.syncthing.expect(path: "/rest/system/status", status: 403, body: "Host check error\n")
        s.relayHealthy()
        out.append(s)

        s = DoctorScenario("tls-mismatch")
        s.gui.tls = true
        s.syncthing.expect(.failure(.tls)) { $0.url.hasPrefix("https://127.0.0.1:8384/rest/system/status") }
        s.relayHealthy()
        out.append(s)

        s = DoctorScenario("relay-404")
        s.syncthingHealthy()
        s.relay.expect(path: "/api/v1/health", status: 404, body: "not found")
        s.relay.expect(path: "/api/v1/trigger", status: 404, body: "not found")
        out.append(s)

        s = DoctorScenario("relay-unhealthy")
        s.syncthingHealthy()
        s.relay.expect(path: "/api/v1/health", status: 503, body: "down")
        s.relay.expect(path: "/api/v1/trigger", status: 503, body: "down")
        out.append(s)

        s = DoctorScenario("subscription-inactive")
        s.syncthingHealthy()
        s.relayHealthy()
        s.relay.expect(path: "/api/v1/trigger", status: 402, body: #"{"error":"no subscription"}"#)
        out.append(s)

        s = DoctorScenario("environment-invalid")
        s.environment["RELAY_URL"] = "http://relay.example"
        s.environment["DEBOUNCE_SECONDS"] = "soon"
        s.syncthingHealthy()
        out.append(s)

        return out
    }
}

@Suite("Doctor")
struct DoctorTests {
    @Test("--help and --version match their golden files")
    func helpAndVersion() {
        Golden.check("help.txt", Mode.helpText + "\n")
        Golden.check("version.txt", Mode.versionText + "\n")
    }

    @Test("every doctor shape matches its golden text and JSON", arguments: DoctorScenario.all.map(\.name))
    func golden(name: String) throws {
        let scenario = try #require(DoctorScenario.all.first { $0.name == name })
        let report = scenario.run()
        #expect(report.checks.map(\.name) == DoctorCheck.Name.allCases, "every check, once, in order")
        Golden.check("doctor-\(name).txt", report.text(color: false))
        Golden.check("doctor-\(name).json", report.json())
    }

    @Test(
        "exit status: 0 only when nothing failed; warnings and skips do not fail",
        arguments: [
            ("all-pass", NotifyCore.ExitStatus.ok), ("no-trigger", .ok), ("warnings-only", .ok),
            ("subscription-inactive", .ok),
            ("config-unreadable", .checkFailed), ("unreachable", .checkFailed), ("wrong-key", .checkFailed),
            ("host-check", .checkFailed), ("tls-mismatch", .checkFailed), ("relay-404", .checkFailed),
            ("relay-unhealthy", .checkFailed), ("environment-invalid", .checkFailed),
        ])
    func exitStatus(name: String, expected: NotifyCore.ExitStatus) throws {
        let report = try #require(DoctorScenario.all.first { $0.name == name }).run()
        #expect(report.exitStatus == expected)
    }

    @Test("the expected verdicts per shape")
    func verdicts() throws {
        func status(_ name: String, _ check: DoctorCheck.Name) throws -> DoctorCheck.Status {
            let report = try #require(DoctorScenario.all.first { $0.name == name }).run()
            return try #require(report.checks.first { $0.name == check }).status
        }
        #expect(try status("warnings-only", .addressSource) == .warn)
        #expect(try status("warnings-only", .relayTrigger) == .pass)
        #expect(try status("warnings-only", .peersConnected) == .warn)
        #expect(try status("warnings-only", .peersSharedFolders) == .warn)
        #expect(try status("config-unreadable", .configFile) == .fail)
        #expect(try status("config-unreadable", .relayHealth) == .pass, "the relay is checked after a config failure")
        #expect(try status("unreachable", .reachable) == .fail)
        #expect(try status("unreachable", .apiKey) == .skip)
        #expect(try status("wrong-key", .reachable) == .pass)
        #expect(try status("wrong-key", .apiKey) == .fail)
        #expect(try status("host-check", .apiKey) == .fail)
        #expect(try status("tls-mismatch", .tlsPin) == .fail)
        #expect(try status("relay-404", .relayHealth) == .fail)
        #expect(try status("relay-404", .relayTrigger) == .fail)
        #expect(try status("subscription-inactive", .relayTrigger) == .warn)
        #expect(try status("no-trigger", .relayTrigger) == .skip)
        #expect(try status("environment-invalid", .configEnvironment) == .fail)
        #expect(try status("environment-invalid", .relayURL) == .fail)
        #expect(try status("environment-invalid", .eventStream) == .pass, "Syncthing is checked despite them")
    }

    @Test("config.environment fails on a METRICS_FILE the service would refuse at start, and names the fix")
    func metricsFilePlaceFailsTheEnvironmentCheck() throws {
        for (place, failing) in [
            (MetricsFilePlace(directory: .missing), true),
            (MetricsFilePlace(directory: .exists, creation: .succeeded), false),
        ] {
            let parsed = Doctor.parseEnvironment(
                ["RELAY_URL": "https://relay.example", "METRICS_FILE": "/srv/textfile/m.prom"],
                metricsPlace: { _ in place })
            #expect(parsed.check.status == (failing ? .fail : .pass))
            #expect(
                parsed.check.reason.contains("METRICS_FILE: names a file in a directory that does not exist") == failing
            )
            #expect(parsed.blockingVariable == nil, "Syncthing is still checked")
        }
    }

    @Test("peers.shared-folders uses the sweep's rule: a folder shared only with a paused device is not shared")
    func sharedFoldersFollowTheSweepsRule() throws {
        func verdict(peerPaused: Bool) throws -> DoctorCheck {
            var scenario = DoctorScenario("paused-peer")
            scenario.trigger = false
            scenario.syncthingHealthy(peerPaused: peerPaused)
            scenario.relayHealthy()
            return try #require(scenario.run().checks.first { $0.name == .peersSharedFolders })
        }
        #expect(try verdict(peerPaused: false).status == .pass)
        let paused = try verdict(peerPaused: true)
        #expect(paused.status == .warn)
        #expect(
            paused.reason
                == "none of the 2 watched folders is shared with a connected device; the devices they are shared with "
                + "are paused")
        #expect(paused.fix?.hasPrefix("Resume the iPhone in Syncthing") == true)
        #expect(try verdict(peerPaused: false).fix == nil)
    }

    @Test("peers.connected counts the devices that are not paused: a paused device never connects")
    func connectedLeavesPausedDevicesOut() {
        func check(_ devices: [String: DeviceConnection]) -> DoctorCheck {
            var connections = devices
            connections["ME"] = DeviceConnection(connected: false, paused: false)
            return Doctor.connectedCheck(connections, myID: "ME")
        }
        let up = DeviceConnection(connected: true, paused: false)
        let down = DeviceConnection(connected: false, paused: false)
        let paused = DeviceConnection(connected: false, paused: true)
        #expect(check(["A": up, "B": down]).reason == "1 of 2 remote devices connected")
        let withPaused = check(["A": up, "B": paused, "C": paused])
        #expect(withPaused.status == .pass)
        #expect(withPaused.reason == "1 of 1 remote devices connected; 2 paused, not counted")
        let offline = check(["A": down, "B": paused])
        #expect(offline.status == .warn && offline.reason.hasPrefix("no remote device is connected (0 of 1; 1 paused"))
        let allPaused = check(["B": paused])
        #expect(allPaused.status == .warn)
        #expect(allPaused.reason == "every remote device is paused in Syncthing (1); a paused device is never woken")
        #expect(check([:]).reason == "no remote device is configured in Syncthing")
    }

    @Test("fixes: config owner for docker/systemd/setpriv; wrong key is not 'unreachable'; 404 names RELAY_URL")
    func fixes() throws {
        func check(_ name: String, _ check: DoctorCheck.Name) throws -> DoctorCheck {
            let report = try #require(DoctorScenario.all.first { $0.name == name }).run()
            return try #require(report.checks.first { $0.name == check })
        }
        let config = try check("config-unreadable", .configFile)
        #expect(config.reason.contains("1000:1000") && config.reason.contains("/var/syncthing/config/config.xml"))
        let fix = try #require(config.fix)
        #expect(
            fix.contains("docker run --user 1000:1000") && fix.contains("User=")
                && fix.contains("setpriv --reuid=1000") && !fix.contains("sudo"))
        #expect(try check("wrong-key", .apiKey).reason.contains("the key is wrong"))
        #expect(try check("host-check", .apiKey).reason.contains("Host check error"))
        #expect(try check("relay-404", .relayTrigger).fix?.contains("RELAY_URL") == true)
        #expect(try check("subscription-inactive", .relayTrigger).reason.contains("subscribe in the app"))
        #expect(try check("all-pass", .relayTrigger).reason.contains("sent one real wake-up"))
        #expect(try check("all-pass", .relayHealth).reason.contains("1.3.2"))
        #expect(try check("all-pass", .deviceID).reason.contains("27CDMTM"))
    }

    @Test("no output contains the API key or a full Device ID", arguments: DoctorScenario.all.map(\.name))
    func noSecrets(name: String) throws {
        let report = try #require(DoctorScenario.all.first { $0.name == name }).run()
        let secrets = [
            DoctorScenario.apiKey, DoctorScenario.myID, DoctorScenario.myID.replacingOccurrences(of: "-", with: ""),
            DoctorScenario.peerID, String(DoctorScenario.myID.prefix(15)),
        ]
        for output in [report.text(color: false), report.text(color: true), report.json()] {
            for secret in secrets { #expect(!output.contains(secret), "\(name) output shows a secret") }
        }
    }

    @Test("the trigger probe sends exactly the Device ID body, once")
    func triggerBody() throws {
        let scenario = try #require(DoctorScenario.all.first { $0.name == "all-pass" })
        _ = scenario.run()
        let posts = scenario.relay.seen.filter { $0.method == .post }
        #expect(posts.count == 1)
        #expect(posts.first?.body == RelayClient.triggerBody(deviceID: DoctorScenario.myID))
        #expect(scenario.syncthing.seen.contains { $0.url.hasSuffix("since=0&limit=1&timeout=0") })
    }

    @Test("JSON: one document with stable names and the same results")
    func json() throws {
        let report = try #require(DoctorScenario.all.first { $0.name == "relay-404" }).run()
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == false)
        #expect(object["exit_status"] as? Int == 1)
        let checks = try #require(object["checks"] as? [[String: Any]])
        #expect(checks.compactMap { $0["name"] as? String } == DoctorCheck.Name.allCases.map(\.rawValue))
        #expect(checks.compactMap { $0["status"] as? String } == report.checks.map(\.status.rawValue))
    }

    @Test("colour only when asked: a terminal and no NO_COLOR")
    func colour() throws {
        #expect(Doctor.useColor(environment: [:], isTerminal: true))
        #expect(Doctor.useColor(environment: ["NO_COLOR": ""], isTerminal: true))
        #expect(!Doctor.useColor(environment: ["NO_COLOR": "1"], isTerminal: true))
        #expect(!Doctor.useColor(environment: [:], isTerminal: false))
        let report = try #require(DoctorScenario.all.first { $0.name == "all-pass" }).run()
        #expect(report.text(color: true).contains("\u{1B}[32mPASS\u{1B}[0m"))
        #expect(!report.text(color: false).contains("\u{1B}"))
    }

    @Test("a reason is always one line")
    func oneLine() {
        let report = DoctorReport(version: "0", checks: [.init(.relayURL, .fail, "a\nb\u{1B}[2J", fix: "x\ry")])
        #expect(report.text(color: false).split(separator: "\n").count == 5)
    }

    @Test("docs/troubleshooting.md has one entry per check name")
    func troubleshooting() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/troubleshooting.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        for name in DoctorCheck.Name.allCases {
            #expect(text.contains("\n## \(name.rawValue)\n"), "no entry for \(name.rawValue)")
        }
    }

    /// README.md's "Doctor" section: the sample output's check lines and the "Checks, in order:" list.
    static func readmeDoctorSection() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        return try #require(text.components(separatedBy: "\n## Doctor\n").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
    }

    @Test("README's list of checks and its sample output name every check, in the doctor's order")
    func readmeCheckNames() throws {
        let section = try Self.readmeDoctorSection()
        let names = DoctorCheck.Name.allCases.map(\.rawValue)
        let list =
            try #require(section.components(separatedBy: "Checks, in order: ").dropFirst().first)
            .components(separatedBy: ". Each one").first ?? ""
        #expect(
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                == names.map { "`\($0)`" })
        let sample = section.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            guard parts.count == 2, ["PASS", "WARN", "FAIL", "SKIP"].contains(String(parts[0])) else { return nil }
            return String(parts[1])
        }
        #expect(sample == names)
    }

    @Test("relay.ca-bundle: which CA certificates, or FAIL naming SSL_CERT_FILE")
    func caBundle() {
        let https = "https://relay.example"
        func check(_ environment: [String: String], _ fs: FakeTrustFileSystem, macOS: Bool = false, url: String = https)
            -> DoctorCheck
        {
            Doctor.caBundleCheck(
                relayBaseURL: url,
                trustStore: TrustStore(environment: environment, fileSystem: fs, usesPlatformStore: macOS))
        }
        let fs = FakeTrustFileSystem()
        fs.addFile("/etc/ssl/cert.pem")
        fs.addFile("/run/ca.pem")
        fs.addDirectory("/run/certs", ["5ad8a5d6.0"])
        #expect(
            check([:], fs)
                == .init(
                    .relayCABundle, .pass, "CA certificates from /etc/ssl/cert.pem (the first usual location found)"))
        #expect(
            check(["SSL_CERT_FILE": "/run/ca.pem", "SSL_CERT_DIR": "/run/certs"], fs)
                == .init(
                    .relayCABundle, .pass,
                    "CA certificates from /run/ca.pem and /run/certs (named by SSL_CERT_FILE/SSL_CERT_DIR)"))
        let missingFile = check(["SSL_CERT_FILE": "/run/none.pem"], fs)
        #expect(missingFile.status == .fail && missingFile.reason.hasPrefix("SSL_CERT_FILE is set"))
        #expect(check(["SSL_CERT_DIR": "/run/none"], fs).reason.hasPrefix("SSL_CERT_DIR is set"))
        let none = check([:], FakeTrustFileSystem())
        #expect(none.status == .fail)
        #expect(none.reason.contains("/etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt"))
        #expect(none.fix?.contains("SSL_CERT_FILE=") == true)
        #expect(check([:], FakeTrustFileSystem(), macOS: true).status == .pass)
        #expect(check([:], FakeTrustFileSystem(), url: "http://127.0.0.1:8080").status == .skip)
    }

    @Test("short ID: the first block only")
    func shortID() {
        #expect(Doctor.shortID(DoctorScenario.myID) == "27CDMTM")
        #expect(Doctor.shortID("27CDMTMYXY5LTB36HECI7PHRY24XM3PY26FGAVITONZ7JEEZ2X5GOIQA") == "27CDMTM")
    }
}
