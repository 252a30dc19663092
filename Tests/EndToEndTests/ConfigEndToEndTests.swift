import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The release binary's start-up against config.xml: a late mount exits 75 and a file written
/// during the wait is used by the same run; `--check-config` exits 0, 78 or 75 without a network call. Runs in the
/// loopback-only namespace of scripts/test.
@Suite(
    "config.xml at start-up and --check-config (release binary)", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class ConfigEndToEndTests {
    let dir: URL

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vsn-config-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    deinit {
        if ProcessInfo.processInfo.environment["VAULTSYNC_KEEP_E2E"] == nil {
            try? FileManager.default.removeItem(at: dir)
        }
    }

    func env(_ extra: [String: String]) -> [String: String] {
        var env = ["PATH": "/usr/bin:/bin", "HOME": dir.path, "RELAY_URL": "https://relay.vaultsync.eu"]
        env.merge(extra) { $1 }
        return env
    }

    /// Runs the binary to its end: (status, stdout, stderr, seconds).
    func run(_ args: [String], _ environment: [String: String]) throws -> (Int32, String, String, TimeInterval) {
        let start = Date()
        let (status, out, err) = try E2E.capture([E2E.binary] + args, environment: environment)
        return (status, out, err, Date().timeIntervalSince(start))
    }

    /// config.xml as Syncthing writes it, written atomically (temporary file, rename) as Syncthing does.
    func writeConfig(_ path: String, address: String, key: String) throws {
        let text = """
            <configuration version="37">
                <gui enabled="true" tls="false">
                    <address>\(address)</address>
                    <apikey>\(key)</apikey>
                </gui>
            </configuration>

            """
        let temporary = path + ".tmp"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        chmod(temporary, 0o600)
        #expect(rename(temporary, path) == 0)
    }

    // MARK: - The service

    @Test("SYNCTHING_CONFIG names a file that is not there yet in an existing directory → 75 after the wait")
    func lateMountIsTemporary() throws {
        let path = dir.appendingPathComponent("config.xml").path
        let runtime = dir.appendingPathComponent("rt-late").path
        let (status, out, err, seconds) = try run(
            [], env(["SYNCTHING_CONFIG": path, "SYNCTHING_CONFIG_WAIT_SECONDS": "2", "RUNTIME_DIRECTORY": runtime]))
        #expect(status == 75, "\(err)")
        // The wait's state file goes with the process: --status then finds no instance, not a wait.
        #expect(E2E.stateFiles(in: runtime).isEmpty, "\(E2E.stateFiles(in: runtime))")
        #expect(seconds >= 2 && seconds < 10, "it waited SYNCTHING_CONFIG_WAIT_SECONDS: \(seconds) s")
        #expect(out.isEmpty)
        // A service's stderr is its log (no terminal here, as under systemd or Docker): no path in it.
        #expect(
            err.contains(
                "vaultsync-notify: Syncthing's config.xml is not there (yet) at the path SYNCTHING_CONFIG names\n"),
            "\(err)")
        #expect(!err.contains(dir.path), "\(err)")
        #expect(err.contains("  fix: Nothing to change if Syncthing, or the volume that holds its config"))
        #expect(err.hasSuffix("run `vaultsync-notify --doctor` for details\n"), "\(err)")
        #expect(!err.contains("Set SYNCTHING_CONFIG"), "it is set already")
        #expect(err.contains("waiting for Syncthing config.xml"))
        // Not there yet is not invalid, and not yet an error: a warning that says what it is.
        #expect(
            err.contains("level=warn msg=\"Syncthing config.xml is not there yet; exiting for the service"), "\(err)")
        #expect(!err.contains("invalid configuration") && !err.contains("level=error"), "\(err)")
    }

    @Test("SYNCTHING_CONFIG whose directory does not exist (under a non-empty one) → 78 after the wait")
    func missingParentIsAConfigurationError() throws {
        try Data("x".utf8).write(to: dir.appendingPathComponent("unrelated"))
        let path = dir.appendingPathComponent("syncthnig/config.xml").path
        let runtime = dir.appendingPathComponent("rt-missing").path
        let (status, _, err, _) = try run(
            [], env(["SYNCTHING_CONFIG": path, "SYNCTHING_CONFIG_WAIT_SECONDS": "1", "RUNTIME_DIRECTORY": runtime]))
        #expect(status == 78, "\(err)")
        #expect(E2E.stateFiles(in: runtime).isEmpty, "\(E2E.stateFiles(in: runtime))")
        #expect(err.contains("SYNCTHING_CONFIG names a path whose directory does not exist"), "\(err)")
        #expect(!err.contains(dir.path), "\(err)")
        #expect(err.contains("level=error msg=\"invalid configuration\""), "\(err)")
        #expect(err.hasSuffix("run `vaultsync-notify --doctor` for details\n"), "\(err)")
    }

    @Test("config.xml written during the wait → the same run connects")
    func fileWrittenDuringTheWaitIsUsed() throws {
        let relay = try Relay(dir: dir)
        defer { relay.stop() }
        let apiKey = "late-apikey-\(UUID().uuidString.prefix(12))"
        let fake = try FakeSyncthingProcess(dir: dir, apiKey: apiKey)
        defer { fake.stop() }
        let configDir = dir.appendingPathComponent("late")
        try FileManager.default.createDirectory(at: configDir, withIntermediateDirectories: true)
        let path = configDir.appendingPathComponent("config.xml").path
        let s = try Sidecar(
            dir: dir,
            env: env([
                "RELAY_URL": relay.url, "SYNCTHING_CONFIG": path, "SYNCTHING_CONFIG_WAIT_SECONDS": "30",
                "STARTUP_ANNOUNCE": "false", "LOG_LEVEL": "debug", "RELAY_WINDOW_SECONDS": "0",
            ]))
        defer { s.stop() }
        #expect(E2E.waitFor(10) { s.log.contains("waiting for Syncthing config.xml") }, "\(s.log)")
        Thread.sleep(forTimeInterval: 1)  // well inside the wait: the file appears late
        #expect(s.process.isRunning)
        try writeConfig(path, address: "127.0.0.1:\(fake.port)", key: apiKey)
        #expect(s.waitConnected(15), "\(s.log)")
        let (status, _) = s.terminate()
        #expect(status == 0)
        #expect(!s.log.contains(apiKey))
    }

    // MARK: - --check-config

    @Test(
        "--check-config: a bad RELAY_URL → 78 with the service's line and its fix",
        arguments: [
            ("http://relay.example", "RELAY_URL: uses http:// for a host that is not loopback"),
            ("https://relay.vaultsync.eu/?x=1", "RELAY_URL: contains a query"),
        ])
    func checkConfigRefusesABadRelayURL(_ url: String, _ problem: String) throws {
        let path = dir.appendingPathComponent("config.xml").path
        try writeConfig(path, address: "127.0.0.1:1", key: "k-\(UUID().uuidString.prefix(8))")
        let (status, out, err, seconds) = try run(
            ["--check-config"], env(["RELAY_URL": url, "SYNCTHING_CONFIG": path]))
        #expect(status == 78)
        #expect(out.isEmpty)
        let lines = err.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(err)")
        #expect(lines.first?.hasPrefix("vaultsync-notify: \(problem); expected ") == true, "\(err)")
        #expect(lines.last?.hasPrefix("  fix: Set RELAY_URL to the relay's base URL") == true)
        #expect(lines.last?.hasSuffix("; run `vaultsync-notify --doctor` for details") == true)
        #expect(!err.contains(url))
        #expect(seconds < 5)
    }

    @Test("--check-config: good environment and config.xml → 0, one line, no network call, no wait")
    func checkConfigPassesWithoutTouchingTheNetwork() throws {
        let listener = try LoopbackListener()
        defer { listener.close() }
        let path = dir.appendingPathComponent("config.xml").path
        let key = "check-apikey-\(UUID().uuidString.prefix(12))"
        // Syncthing's address is the same recording listener: neither it nor the relay may be called.
        try writeConfig(path, address: "127.0.0.1:\(listener.port)", key: key)
        let (status, out, err, seconds) = try run(
            ["--check-config"],
            env([
                "RELAY_URL": "http://127.0.0.1:\(listener.port)", "SYNCTHING_CONFIG": path,
                "SYNCTHING_CONFIG_WAIT_SECONDS": "60",
            ]))
        #expect(status == 0, "\(err)")
        #expect(err.isEmpty, "\(err)")
        #expect(
            out
                == "vaultsync-notify: configuration OK (Syncthing address from config.xml, API key from config.xml; "
                + "config.xml at \(path))\n")
        #expect(!out.contains(key))
        #expect(seconds < 5)
        #expect(listener.connections() == 0, "--check-config made a network call")
    }

    @Test("--check-config: config.xml not there yet → 75 at once (no wait)")
    func checkConfigSaysNotThereYet() throws {
        let path = dir.appendingPathComponent("config.xml").path
        let (status, out, err, seconds) = try run(
            ["--check-config"], env(["SYNCTHING_CONFIG": path, "SYNCTHING_CONFIG_WAIT_SECONDS": "60"]))
        #expect(status == 75, "\(err)")
        #expect(out.isEmpty)
        #expect(
            err.hasPrefix(
                "vaultsync-notify: Syncthing's config.xml is not there (yet) at \(path), the path SYNCTHING_CONFIG names\n"
            ), "\(err)")
        #expect(seconds < 5, "--check-config never waits: \(seconds) s")
    }

    @Test("--check-config: a config.xml that is not Syncthing's → 78")
    func checkConfigRefusesAForeignFile() throws {
        let path = dir.appendingPathComponent("config.xml").path
        try Data("<html><body/></html>\n".utf8).write(to: URL(fileURLWithPath: path))
        let (status, _, err, _) = try run(["--check-config"], env(["SYNCTHING_CONFIG": path]))
        #expect(status == 78)
        #expect(err.hasPrefix("vaultsync-notify: config.xml has no <configuration> root element\n"), "\(err)")
    }
}

/// A TCP listener on 127.0.0.1 that only counts the connections made to it.
final class LoopbackListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Connections waiting to be accepted (each is accepted and closed).
    func connections() -> Int {
        var count = 0
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 { return count }
            Glibc.close(client)
            count += 1
        }
    }

    func close() { Glibc.close(fd) }
}
