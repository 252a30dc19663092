import Foundation
import Testing

/// The static release binary runs anywhere. It runs as uid 1000 in an EMPTY root (only the binary, a
/// CA bundle, /etc/hosts and /etc/resolv.conf, plus a copy of lab node A's config.xml), against an https relay
/// stand-in whose certificate comes from a test CA made at run time, at a DNS name that only a real DNS server
/// (dnsmasq on 127.0.0.1:53 inside the loopback-only namespace) resolves. Gated like the other end-to-end tests.
@Suite(
    "Static binary end to end: empty root, https relay, real DNS", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class StaticBinaryEndToEndTests {
    let lab: Lab
    let ca: TestCA
    let dns: DNSServer
    let relay: Relay
    let root: EmptyRoot
    var sidecars: [Sidecar] = []

    init() throws {
        try StaticCheck.require(E2E.binary)
        lab = try Lab()
        ca = try TestCA(dir: lab.dir)
        dns = try DNSServer(dir: lab.dir, name: TestCA.dnsName)
        relay = try Relay(dir: lab.dir, tls: ca)
        root = try EmptyRoot(dir: lab.dir.appendingPathComponent("root"), lab: lab)
    }

    deinit {
        for s in sidecars { s.stop() }
        relay.stop()
        dns.stop()
        root.unmount()
        lab.down()
    }

    /// The service in the empty root, with the lab's test defaults; `extra` adds to (or overrides) them.
    func start(_ extra: [String: String] = [:]) throws -> Sidecar {
        let s = try Sidecar(
            lab: lab, relay: relay, env: root.environment.merging(extra) { $1 }, command: root.command())
        sidecars.append(s)
        return s
    }

    func expectNoLeaks(_ s: Sidecar) {
        let leaks = s.leaks(lab.secrets + [relay.url, TestCA.dnsName, EmptyRoot.configPath])
        #expect(leaks.isEmpty, "log lines carrying an identifier, URL or path: \(leaks)")
        #expect(!s.lines.isEmpty)
    }

    /// A change in the lab reaches the https stand-in once, through the name that only dnsmasq resolves.
    func expectOneChangeDelivered(_ s: Sidecar) throws {
        #expect(s.waitConnected(), "not connected to Syncthing:\n\(s.log)")
        try lab.write("vault", "static-binary.md")
        #expect(E2E.waitFor(30) { relay.delivered.count >= 1 }, "no wake-up reached the https stand-in:\n\(s.log)")
        #expect(relay.delivered.first?.body == "{\"device_id\": \"\(lab.info.a.id)\"}")
        #expect(dns.queried(TestCA.dnsName), "the relay's name was not resolved through dnsmasq")
        #expect(s.process.isRunning)
        expectNoLeaks(s)
    }

    @Test("the relay's name is in no hosts file: only DNS resolves it")
    func nameOnlyInDNS() throws {
        for hosts in ["/etc/hosts", root.dir.appendingPathComponent("etc/hosts").path] {
            let text = try String(contentsOfFile: hosts, encoding: .utf8)
            #expect(!text.contains(TestCA.dnsName), "\(hosts) names the relay")
        }
        #expect(try root.contents() == EmptyRoot.baseFiles)
    }

    @Test("CA bundle at the probed location (no SSL_CERT_FILE) → a change reaches the https relay")
    func probedBundle() throws {
        try root.place(ca.ca, at: "/etc/ssl/certs/ca-certificates.crt")
        try expectOneChangeDelivered(try start())
    }

    @Test("CA only at SSL_CERT_FILE (nothing at the probed locations) → a change reaches the https relay")
    func sslCertFile() throws {
        try root.place(ca.ca, at: "/certs/test-ca.pem")
        #expect(try root.contents() == (EmptyRoot.baseFiles + ["/certs/test-ca.pem"]).sorted())
        try expectOneChangeDelivered(try start(["SSL_CERT_FILE": "/certs/test-ca.pem"]))
    }

    @Test("no CA anywhere → nothing reaches the relay, the service keeps running, one line names SSL_CERT_FILE")
    func noBundle() throws {
        let s = try start(["STARTUP_ANNOUNCE": "true"])
        #expect(s.waitConnected(), "not connected to Syncthing:\n\(s.log)")
        try lab.write("vault", "no-ca.md")
        // The startup announce and the change each fail and back off; two failures prove it retries rather than
        // exits (the backoff starts at about a second).
        #expect(E2E.waitFor(30) { s.count("wake-up failed") >= 2 }, "no failed wake-ups:\n\(s.log)")
        #expect(s.process.isRunning, "the service exited:\n\(s.log)")
        #expect(relay.requests.isEmpty, "a request reached the relay without a trusted CA")
        #expect(s.count("SSL_CERT_FILE") == 1, "want exactly one line naming SSL_CERT_FILE:\n\(s.log)")
        expectNoLeaks(s)
    }

    @Test("--version runs, and --doctor passes its relay checks over https and DNS")
    func doctorAndVersion() throws {
        try root.place(ca.ca, at: "/etc/ssl/certs/ca-certificates.crt")
        let (versionStatus, version, _) = try E2E.capture(root.command(["--version"]), environment: root.environment)
        #expect(versionStatus == 0)
        #expect(version.contains("vaultsync-notify"), "--version printed: \(version)")

        try? lab.command("wait-connected", "--timeout", "30")
        var env = root.environment
        env["RELAY_URL"] = relay.url
        let (status, text, errors) = try E2E.capture(root.command(["--doctor"]), environment: env)
        #expect(status == 0, "doctor failed:\n\(text)\(errors)")
        for name in [
            "config.file", "syncthing.reachable", "syncthing.api-key", "relay.url", "relay.health",
            "relay.trigger",
        ] {
            #expect(text.contains("PASS \(name)\n"), "\(name) did not pass:\n\(text)\(errors)")
        }
        #expect(relay.triggers.count == 1)
        #expect(dns.queried(TestCA.dnsName))
        for secret in [lab.info.a.api_key, lab.info.a.id] { #expect(!(text + errors).contains(secret)) }
    }
}

/// `file` must call the binary statically linked. scripts/test always builds the release binary first, so a
/// dynamic one is a failure (not a skip): the empty root could not even start it.
enum StaticCheck {
    struct NotStatic: Error, CustomStringConvertible {
        var path: String
        var file: String
        var description: String {
            "\(path) is not a static binary (file says: \(file.trimmingCharacters(in: .whitespacesAndNewlines))); "
                + "run scripts/build-release"
        }
    }

    static func require(_ path: String) throws {
        let (_, out) = try E2E.run(["file", "-L", path])
        guard out.contains("statically linked") || out.contains("static-pie linked") else {
            throw NotStatic(path: path, file: out)
        }
    }
}

/// dnsmasq (Debian's dnsmasq-base, no service) on 127.0.0.1:53 inside the namespace: answers `name` with 127.0.0.1
/// and nothing else (no upstream servers, no hosts file), and logs each query so that a test can tell that the
/// name was resolved through it. It runs as a daemon and is stopped by the PID in its pid file: in the foreground,
/// as a Foundation `Process`, it closes the descriptor Foundation watches for the child's exit, and Foundation's
/// monitor thread then blocks in waitpid on it, so no other child of the test process is reaped any more.
final class DNSServer {
    let logURL: URL
    let pidURL: URL
    var pid: pid_t?

    init(dir: URL, name: String) throws {
        let state = dir.appendingPathComponent("dnsmasq")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        // dnsmasq writes its log as the user it drops to.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: state.path)
        logURL = state.appendingPathComponent("dnsmasq.log")
        pidURL = state.appendingPathComponent("dnsmasq.pid")
        let (status, _) = try E2E.run([
            "/usr/sbin/dnsmasq", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--bind-interfaces",
            "--listen-address=127.0.0.1", "--port=53", "--address=/\(name)/127.0.0.1", "--log-queries",
            "--log-facility=\(logURL.path)", "--pid-file=\(pidURL.path)", "--dhcp-leasefile=\(state.path)/leases",
            "--user=nobody", "--group=nogroup",
        ])
        pid = (try? String(contentsOf: pidURL, encoding: .utf8)).flatMap {
            pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // Ready once its UDP socket on 127.0.0.1:53 exists (this namespace's /proc/net/udp, in hex).
        guard status == 0, pid != nil,
            E2E.waitFor(
                10,
                {
                    (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8))?.contains("0100007F:0035") ?? false
                })
        else {
            stop()
            throw DNSServerError.notListening(log: (try? String(contentsOf: logURL, encoding: .utf8)) ?? "")
        }
    }

    /// Whether dnsmasq was asked for `name` (an A or AAAA query).
    func queried(_ name: String) -> Bool {
        let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").contains { $0.contains("query[") && $0.contains(" \(name) ") }
    }

    /// SIGKILL to the daemon's PID, then waits (up to 5 s) until that PID is gone.
    func stop() {
        guard let pid else { return }
        kill(pid, SIGKILL)
        _ = E2E.waitFor(5) { kill(pid, 0) != 0 }
        self.pid = nil
    }
}

enum DNSServerError: Error { case notListening(log: String) }

enum EmptyRootError: Error { case mountFailed([String]) }

/// The empty root the static binary runs in: `/vaultsync-notify`, `/etc/hosts` (localhost only),
/// `/etc/resolv.conf` (`nameserver 127.0.0.1`) and a copy of lab node A's config.xml (readable by the uid the
/// binary runs as); a test adds the CA where it wants it. Like a Docker container (whose runtime always provides
/// them), it gets a procfs at /proc (the Swift runtime aborts before `main` without one) and /dev/null, /dev/zero,
/// /dev/random and /dev/urandom bound from the host (c-ares draws its query IDs from /dev/urandom). No /tmp, shell
/// or library.
final class EmptyRoot {
    static let configPath = "/syncthing/config.xml"
    static let baseFiles = ["/etc/hosts", "/etc/resolv.conf", configPath, "/vaultsync-notify"]
    let dir: URL

    init(dir: URL, lab: Lab) throws {
        self.dir = dir
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try add("/vaultsync-notify", copying: E2E.binary, mode: 0o755)
        try add("/etc/hosts", text: "127.0.0.1 localhost\n::1 localhost\n")
        try add("/etc/resolv.conf", text: "nameserver 127.0.0.1\n")
        try add(Self.configPath, copying: lab.info.a.config_path)
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("proc"), withIntermediateDirectories: true)
        try mount(["-t", "proc", "proc", dir.appendingPathComponent("proc").path])
        for device in Self.devices {
            try add(device, text: "")
            try mount(["--bind", device, dir.appendingPathComponent(String(device.dropFirst())).path])
        }
    }

    static let devices = ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"]
    private var mounted: [String] = []

    private func mount(_ args: [String]) throws {
        let (status, _) = try E2E.run(["/usr/bin/mount"] + args)
        guard status == 0 else { throw EmptyRootError.mountFailed(args) }
        mounted.append(args.last!)
    }

    /// Unmounts what `init` mounted (newest first), so that the lab's clean-up removes only files.
    func unmount() {
        for target in mounted.reversed() { _ = try? E2E.run(["/usr/bin/umount", "-l", target]) }
        mounted = []
    }

    /// Puts the file at `source` at `path` in the root.
    func place(_ source: String, at path: String) throws { try add(path, copying: source) }

    private func add(_ path: String, copying source: String? = nil, text: String? = nil, mode: Int = 0o644) throws {
        let url = dir.appendingPathComponent(String(path.dropFirst()))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if let source { try FileManager.default.copyItem(atPath: source, toPath: url.path) }
        if let text { try Data(text.utf8).write(to: url) }
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }

    /// Every regular file in the root, as absolute paths inside it, sorted.
    func contents() throws -> [String] {
        guard let walk = FileManager.default.enumerator(atPath: dir.path) else { return [] }
        var files: [String] = []
        while let name = walk.nextObject() as? String {
            if name == "proc" || name == "dev" {
                walk.skipDescendants()
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append("/" + name)
            }
        }
        return files.sorted()
    }

    /// Runs the binary with this directory as its root, as uid and gid 1000; chroot execs it.
    func command(_ args: [String] = []) -> [String] {
        ["/usr/sbin/chroot", "--userspec=1000:1000", dir.path, "/vaultsync-notify"] + args
    }

    /// What the binary needs inside the root: HOME has nothing behind it, config.xml is the copy.
    var environment: [String: String] { ["PATH": "/", "HOME": "/", "SYNCTHING_CONFIG": Self.configPath] }
}
