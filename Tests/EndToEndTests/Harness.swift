import Foundation
import Testing

/// End-to-end harness: a real two-node Syncthing lab (Tests/Lab/stlab.py), the relay stand-in
/// (Tests/Doubles/relay_standin.py) and the release binary, all inside the private loopback-only network namespace that
/// `scripts/test` creates (`unshare --net`). Waits poll for a condition with a deadline; there are no fixed sleeps
/// except the quiet periods that prove that nothing more arrives.

enum E2E {
    /// The two fatal stderr lines of a relay 404 at start-up, the same shape as every configuration error's.
    static let relayNotFoundFatal =
        "\nvaultsync-notify: the relay answered 404 at start-up: there is no relay API at RELAY_URL\n"
        + "  fix: RELAY_URL must be the relay's base URL, without /api/v1 (e.g. RELAY_URL=https://relay.vaultsync.eu); "
        + "check it for typos; run `vaultsync-notify --doctor` for details\n"

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// E2E runs only when scripts/test asks for it (it also creates the namespace) and only in a network namespace
    /// whose sole interface is loopback: Syncthing must never reach a real network.
    static var enabled: Bool {
        ProcessInfo.processInfo.environment["VAULTSYNC_E2E"] == "1" && onlyLoopback
    }

    /// Reads this process's own namespace (`/proc/self/net/dev`): `/sys/class/net` shows the namespace that
    /// mounted sysfs, which under a plain `unshare --net` is still the host's.
    static var onlyLoopback: Bool {
        guard let text = try? String(contentsOfFile: "/proc/self/net/dev", encoding: .utf8) else { return false }
        let names = text.split(separator: "\n").dropFirst(2).compactMap { line in
            line.split(separator: ":").first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return names == ["lo"]
    }

    static var binary: String {
        ProcessInfo.processInfo.environment["VAULTSYNC_NOTIFY_BINARY"]
            ?? packageRoot.appendingPathComponent(".build/release/vaultsync-notify").path
    }

    /// A server that stands in for Syncthing or the relay in tests (Tests/Doubles).
    static func double(_ name: String) -> String { packageRoot.appendingPathComponent("Tests/Doubles/\(name)").path }

    /// A script that builds the test world: the Syncthing lab, the throwaway CA (Tests/Lab).
    static func lab(_ name: String) -> String { packageRoot.appendingPathComponent("Tests/Lab/\(name)").path }

    /// The Syncthing binary the lab runs: `VAULTSYNC_SYNCTHING` (scripts/test sets it to Debian trixie's 1.29.5 for
    /// its second run of the real-Syncthing suites), else stlab's default, the `syncthing` on PATH (1.19.2).
    static var syncthing: String? {
        ProcessInfo.processInfo.environment["VAULTSYNC_SYNCTHING"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The lab Syncthing's release as `syncthing --version` prints it (`v2.1.3`, `v1.19.2-ds1`); nil when it does
    /// not run. 2.x needs a `HOME` even for `--version`: an empty one of its own.
    static let syncthingRelease: String? = {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-version-\(getpid())")
        try? FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let binary = syncthing ?? "/usr/bin/syncthing"
        guard let (status, out, _) = try? capture([binary, "--version"], environment: ["HOME": home.path]),
            status == 0
        else { return nil }
        let words = out.split(separator: " ")
        guard words.count > 1, words[0] == "syncthing", words[1].hasPrefix("v") else { return nil }
        return String(words[1])
    }()

    /// `python3 Tests/Lab/stlab.py [--syncthing PATH] ARGS…`.
    static func stlab(_ args: [String]) -> [String] {
        ["python3", lab("stlab.py")] + (syncthing.map { ["--syncthing", $0] } ?? []) + args
    }

    /// Starts a process with no signal blocked. Test threads are Dispatch workers, which block every signal, and a
    /// child inherits the spawning thread's mask: Syncthing, Python and the sidecar would then ignore SIGTERM.
    static func spawn(_ p: Process) throws {
        var all = sigset_t()
        sigfillset(&all)
        var old = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &all, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        try p.run()
    }

    /// Runs a command to completion and returns (status, stdout).
    @discardableResult
    static func run(_ args: [String], timeout: TimeInterval = 120) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.standardError
        try spawn(p)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Runs `command` (an absolute path first) with exactly `environment`; returns (status, stdout, stderr).
    static func capture(_ command: [String], environment: [String: String]) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: command[0])
        p.arguments = Array(command.dropFirst())
        p.environment = environment
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try spawn(p)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// The service state files (`state-<instance key>`, not their `.lock` files) in a runtime directory; none when it
    /// does not exist.
    static func stateFiles(in runtime: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []).filter {
            $0.hasPrefix("state-") && !$0.hasSuffix(".lock")
        }
    }

    /// Polls `condition` every 50 ms until it holds or `timeout` passes.
    static func waitFor(_ timeout: TimeInterval, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try condition()
    }
}

/// A two-node Syncthing pair (A = the server the sidecar watches, B = the peer standing in for the phone).
final class Lab {
    struct Node: Decodable {
        var id: String
        var gui_url: String
        var api_key: String
        var config_path: String
        var home: String
        var folders: [String: String]
    }
    struct Info: Decodable {
        var a: Node
        var b: Node
    }

    let dir: URL
    let info: Info

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vsn-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let (status, out) = try E2E.run(E2E.stlab(["up", "--dir", dir.path]))
        guard status == 0 else { throw LabError.up(status) }
        info = try JSONDecoder().decode(Info.self, from: Data(out.utf8))
    }

    func command(_ args: String...) throws {
        let (status, _) = try E2E.run(E2E.stlab(args + ["--dir", dir.path]))
        guard status == 0 else { throw LabError.command(args.first ?? "", status) }
    }

    func write(_ folder: String, _ name: String, _ text: String = "hello\n") throws {
        let path = URL(fileURLWithPath: info.a.folders[folder]!).appendingPathComponent(name)
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: path)
    }

    func down() {
        _ = try? E2E.run(E2E.stlab(["down", "--dir", dir.path]))
        try? FileManager.default.removeItem(at: dir)
    }

    /// Identifiers that must never appear in a log line.
    var secrets: [String] {
        [
            info.a.id, info.b.id, String(info.a.id.prefix(7)), String(info.b.id.prefix(7)), info.a.api_key,
            info.b.api_key, dir.path, info.a.config_path, info.a.gui_url,
        ]
            + Array(info.a.folders.keys) + Array(info.a.folders.values)
    }
}

enum LabError: Error { case up(Int32), command(String, Int32), relay, testCA(Int32) }

/// A throwaway test CA and a server certificate for `dnsName`, made at run time by Tests/Lab/testca.py (the openssl
/// CLI) in `dir/pki`; nothing is kept.
struct TestCA {
    static let dnsName = "relay.vaultsync.test"
    /// The CA certificate (what a client must trust), the server certificate and its key.
    let ca: String
    let cert: String
    let key: String

    init(dir: URL) throws {
        let pki = dir.appendingPathComponent("pki").path
        let (status, _) = try E2E.run(["python3", E2E.lab("testca.py"), "--dir", pki, "--dns-name", Self.dnsName])
        guard status == 0 else { throw LabError.testCA(status) }
        (ca, cert, key) = (pki + "/ca.pem", pki + "/server.pem", pki + "/server-key.pem")
    }
}

/// The relay stand-in, recording every request as a JSON line.
final class Relay {
    struct Request: Decodable {
        var t: Double
        var method: String
        var path: String
        var body: String?
        var status: Int?
        /// Trigger records only: whether this request caused a push (nil on other paths).
        var pushed: Bool?
    }

    /// What a trigger inside the push window gets: 202 without a push (`spec`) or 429 + Retry-After (`legacy`).
    enum WindowMode: String { case spec, legacy }

    let process = Process()
    let dir: URL
    let port: Int
    /// With a test CA the stand-in serves https for `TestCA.dnsName` (which a test must resolve to 127.0.0.1).
    let tls: TestCA?
    var url: String { tls == nil ? "http://127.0.0.1:\(port)" : "https://\(TestCA.dnsName):\(port)" }

    /// The defaults (no push window, no per-minute limit) accept every trigger and push each; `windowMode` nil
    /// leaves the stand-in's own default (spec).
    init(
        dir: URL, windowMode: WindowMode? = nil, windowSeconds: Double = 0, perMinute: Int = 0,
        tls: TestCA? = nil, extra: [String] = []
    ) throws {
        self.dir = dir
        self.tls = tls
        let portFile = dir.appendingPathComponent("relay.port")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", E2E.double("relay_standin.py"), "--port", "0", "--port-file", portFile.path, "--log",
                dir.appendingPathComponent("relay.jsonl").path, "--provision-any", "--window-seconds",
                String(format: "%g", windowSeconds), "--per-minute", String(perMinute),
            ]
            + (windowMode.map { ["--window-mode", $0.rawValue] } ?? [])
            + (tls.map { ["--tls-cert", $0.cert, "--tls-key", $0.key] } ?? []) + extra
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try E2E.spawn(process)
        guard E2E.waitFor(10, { FileManager.default.fileExists(atPath: portFile.path) }),
            let text = try? String(contentsOf: portFile, encoding: .utf8),
            let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw LabError.relay }
        self.port = port
    }

    var requests: [Request] {
        guard let text = try? String(contentsOf: dir.appendingPathComponent("relay.jsonl"), encoding: .utf8) else {
            return []
        }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Request.self, from: Data($0.utf8)) }
    }

    var triggers: [Request] { requests.filter { $0.path == "/api/v1/trigger" } }
    /// Triggers answered 2xx (in spec mode this includes the ones inside the push window, which push nothing).
    var delivered: [Request] { triggers.filter { ($0.status ?? 0) / 100 == 2 } }
    /// Triggers that caused a push.
    var pushes: [Request] { triggers.filter { $0.pushed == true } }

    /// Replaces the fault queue (see Tests/Doubles/relay_standin.py).
    func setFaults(_ json: String) throws {
        let reach = tls.map { ["--cacert", $0.ca, "--resolve", "\(TestCA.dnsName):\(port):127.0.0.1"] } ?? []
        let (status, code) = try E2E.run(
            [
                "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                "--data", json,
            ] + reach + [url + "/_control/faults"])
        guard status == 0, code == "200" else { throw LabError.relay }
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// The sidecar under test: the release binary, stdout and stderr captured to one file.
final class Sidecar {
    let process = Process()
    let logURL: URL

    /// Starts the binary with exactly `env`, logging to `dir/name.log`. `command` (an absolute path first) runs it
    /// some other way, e.g. in an empty root; it must exec the binary, so that signals reach it.
    init(dir: URL, name: String = "sidecar", env: [String: String], command: [String] = [E2E.binary]) throws {
        logURL = dir.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = env
        process.standardOutput = FileHandle(forWritingAtPath: logURL.path)
        process.standardError = FileHandle(forWritingAtPath: logURL.path)
        try E2E.spawn(process)
    }

    /// Starts the binary against the lab's node A and the relay stand-in, with test defaults overridden by `extra`.
    convenience init(lab: Lab, relay: Relay, env extra: [String: String] = [:], command: [String] = [E2E.binary])
        throws
    {
        var env: [String: String] = [
            "PATH": "/usr/bin:/bin", "HOME": lab.dir.path, "RELAY_URL": relay.url,
            "SYNCTHING_CONFIG": lab.info.a.config_path, "DEBOUNCE_SECONDS": "1", "DEBOUNCE_MAX_SECONDS": "10",
            "STARTUP_ANNOUNCE": "false", "LOG_LEVEL": "debug",
            // The stand-in runs without a push window unless a test asks for one (Relay's defaults).
            "RELAY_WINDOW_SECONDS": "0",
        ]
        env.merge(extra) { $1 }
        try self.init(dir: lab.dir, env: env, command: command)
    }

    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }
    var lines: [String] { log.split(separator: "\n").map(String.init) }
    func count(_ text: String) -> Int { lines.filter { $0.contains(text) }.count }

    /// Waits until the sidecar is connected and long-polling (its "connected to Syncthing" record).
    func waitConnected(_ timeout: TimeInterval = 30) -> Bool {
        E2E.waitFor(timeout) { log.contains("connected to Syncthing") }
    }

    /// SIGTERM, then the exit status and how long the exit took.
    func terminate() -> (Int32, TimeInterval) {
        let start = Date()
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        return (process.terminationStatus, Date().timeIntervalSince(start))
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Lines that carry any of the lab's identifiers.
    /// The lines that carry one of `secrets`. The product's name ("vaultsync-notify", the relay's example domain
    /// relay.vaultsync.eu in a fix line) is blanked out first: the lab's folder ID "vault" is part of it.
    func leaks(_ secrets: [String]) -> [String] {
        lines.filter { line in
            let scanned = line.replacingOccurrences(of: "vaultsync", with: "")
            return secrets.contains { !$0.isEmpty && scanned.contains($0) }
        }
    }
}
