import Foundation
import Testing

/// Helpers for the fault-injection suite: the scriptable Syncthing fake (Tests/Doubles/fake_syncthing.py) and the
/// release binary pointed at it through SYNCTHING_API_URL/SYNCTHING_API_KEY. The relay stand-in is the harness's
/// `Relay`.

enum FakeError: Error { case start, control(String, String) }

/// One fake Syncthing process (fake_syncthing.py) on an ephemeral loopback port, logging every `/rest` request as a
/// JSON line; the in-memory counterpart for the unit suites is the test host's `FakeSyncthingTransport`.
final class FakeSyncthingProcess {
    struct Request: Decodable {
        var t: Double
        var method: String
        var path: String
        var route: String
        var query: [String: String]
        var status: Int?
        var fault: String?
    }

    /// Valid-looking Device IDs (base32 alphabet, 8 groups of 7) that appear nowhere else.
    static let serverID = "QZ7XKTM-4WJ2HNA-RB5PLCY-6DTM3EQ-K2VNSXW-F7HJQ4A-MP3ZLRT-5CYWD2E"
    static let peerID = "NXB4T2Q-LM7RZKD-3HWPQ5A-VC2JYTE-6KDMF4N-ZQ7WRXB-5TAL3JH-MG2PYKC"
    static let folders = ["vault", "notes"]

    let process = Process()
    let dir: URL
    let name: String
    let apiKey: String
    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }
    var logURL: URL { dir.appendingPathComponent("\(name).jsonl") }

    /// - Parameters:
    ///   - listenOnSignal: bind and report the port, but refuse connections until `listen()` ("not up yet").
    init(dir: URL, apiKey: String, name: String = "fake-syncthing", listenOnSignal: Bool = false) throws {
        self.dir = dir
        self.name = name
        self.apiKey = apiKey
        let portFile = dir.appendingPathComponent("\(name).port")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", E2E.double("fake_syncthing.py"), "--port", "0", "--port-file", portFile.path, "--api-key",
                apiKey, "--device-id", Self.serverID, "--peer-id", Self.peerID, "--folders",
                Self.folders.joined(separator: ","), "--log", dir.appendingPathComponent("\(name).jsonl").path,
            ]
            + (listenOnSignal ? ["--listen-on-signal"] : [])
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try E2E.spawn(process)
        guard E2E.waitFor(10, { FileManager.default.fileExists(atPath: portFile.path) }),
            let text = try? String(contentsOf: portFile, encoding: .utf8),
            let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw FakeError.start }
        self.port = port
    }

    /// Starts accepting connections (after `listenOnSignal`).
    func listen() { kill(process.processIdentifier, SIGUSR1) }

    /// One control request; returns the body, throws unless the fake answered 200.
    @discardableResult
    func control(_ method: String, _ path: String, _ json: String? = nil) throws -> String {
        var args = ["curl", "-sS", "-m", "10", "-w", "\n%{http_code}", "-X", method]
        if let json { args += ["--data-binary", json] }
        let (status, out) = try E2E.run(args + [url + "/_control/" + path])
        let code = out.split(separator: "\n").last.map(String.init) ?? ""
        guard status == 0, code == "200" else { throw FakeError.control(path, code) }
        return String(out.dropLast(code.count + 1))
    }

    /// Appends events: a JSON object or list, e.g. `{"type":"LocalIndexUpdated","folder":"vault"}`.
    func append(_ json: String) throws { try control("POST", "events", json) }
    func setFaults(_ json: String) throws { try control("POST", "faults", json) }
    func clearFaults() throws { try control("DELETE", "faults") }
    func restart(_ json: String = "{}") throws { try control("POST", "restart", json) }
    func skip(_ count: Int) throws { try control("POST", "skip", "{\"count\": \(count)}") }

    /// Faults still queued (a fault with count -1 stays forever).
    var pendingFaults: Int {
        guard let body = try? control("GET", "faults"),
            let list = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [Any]
        else { return -1 }
        return list.count
    }

    var requests: [Request] {
        guard let text = try? String(contentsOf: logURL, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Request.self, from: Data($0.utf8)) }
    }

    /// `/rest/events` requests (long polls and head queries).
    var eventRequests: [Request] { requests.filter { $0.route == "/rest/events" } }

    /// How many `/rest/events` requests the fake is holding right now (`GET /_control/state` `waiting`); -1 when
    /// the fake did not answer.
    var heldPolls: Int {
        guard let body = try? control("GET", "state"),
            let state = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let waiting = state["waiting"] as? Int
        else { return -1 }
        return waiting
    }

    /// Waits until the client's newest `/rest/events` request, the `count + 1`-th or later, is a long poll (not a
    /// head read, which has `timeout=0`) and the fake is holding it. The request log is written when a request
    /// arrives, so this is the moment a queued fault or a restart would end that poll.
    func waitForHeldPoll(_ timeout: TimeInterval, after count: Int = 0) -> Bool {
        E2E.waitFor(timeout) {
            let polls = eventRequests
            guard polls.count > count, let last = polls.last, last.query["timeout"] != "0" else { return false }
            return heldPolls > 0
        }
    }
    var statusRequests: [Request] { requests.filter { $0.route == "/rest/system/status" } }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// What must never appear in a sidecar log line.
    var secrets: [String] {
        [
            Self.serverID, Self.peerID, String(Self.serverID.prefix(7)), String(Self.peerID.prefix(7)), apiKey, url,
            "127.0.0.1:\(port)", String(port),
        ] + Self.folders
    }
}
