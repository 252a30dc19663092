import Foundation
import NotifyCore
import Testing

/// A datagram socket on an abstract name, standing in for systemd's NOTIFY_SOCKET. Like systemd, it reads every
/// datagram as it arrives: an unread socket queues only net.unix.max_dgram_qlen (10) + 1 datagrams, and the sidecar
/// sends without blocking, as sd_notify does, so with WATCHDOG=1 every 0.5 s a test that read only while waiting
/// would lose STOPPING=1 whenever its middle part took more than about 5 s (a loaded machine).
final class NotifySocket {
    /// What the reader thread has received, shared with it.
    private final class Inbox: @unchecked Sendable {
        let condition = NSCondition()
        var datagrams: [String] = []
        var stop = false
        let stopped = DispatchSemaphore(value: 0)
    }

    let fd: Int32
    let name = "vsn-e2e-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    var value: String { "@" + name }
    private let inbox = Inbox()
    private var reading = false
    var received: [String] {
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        return inbox.datagrams
    }

    init() throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let length = MemoryLayout.offset(of: \sockaddr_un.sun_path)! + bytes.count
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard fd >= 0, rc == 0 else { throw LabError.relay }
        let (socketFD, inbox) = (fd, inbox)
        reading = true
        Thread.detachNewThread {
            defer { inbox.stopped.signal() }
            while true {
                inbox.condition.lock()
                let stop = inbox.stop
                inbox.condition.unlock()
                if stop { return }
                var p = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 100) == 1 else { continue }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = buffer.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { continue }
                let text = String(decoding: buffer[..<n], as: UTF8.self)
                inbox.condition.lock()
                inbox.datagrams.append(text)
                inbox.condition.broadcast()
                inbox.condition.unlock()
            }
        }
    }

    deinit {
        if reading {
            inbox.condition.lock()
            inbox.stop = true
            inbox.condition.unlock()
            inbox.stopped.wait()
        }
        if fd >= 0 { close(fd) }
    }

    /// Waits until a datagram that contains `line` has arrived (at any time since the socket was made), or `timeout`
    /// passes.
    func waitFor(_ line: String, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        let seen = { self.inbox.datagrams.contains { $0.split(separator: "\n").contains(Substring(line)) } }
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        while !seen() {
            if !inbox.condition.wait(until: deadline) { return seen() }
        }
        return true
    }
}

/// The service-manager contract of the release binary against real Syncthing: READY/WATCHDOG/STOPPING on a real notify
/// socket, the state file, LOG_FORMAT=json, and SIGHUP re-reading config.xml (a bad file keeps the old access; a new
/// API key is swapped in without a restart).
@Suite(
    "Supervision end to end: systemd notify, SIGHUP, the state file, --status", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class SupervisionEndToEndTests {
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

    /// Sets Syncthing A's API key through its REST API.
    func setSyncthingKey(from old: String, to new: String) throws {
        let (status, code) = try E2E.run([
            "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PATCH", "-H", "X-API-Key: \(old)",
            "-H", "Content-Type: application/json", "--data", #"{"apiKey":"\#(new)"}"#,
            lab.info.a.gui_url + "/rest/config/gui",
        ])
        guard status == 0, code == "200" else { throw LabError.command("set key \(code)", status) }
    }

    @Test("notify protocol, state file, json logs and a SIGHUP key swap with the release binary")
    func serviceManagers() throws {
        let copyDir = lab.dir.appendingPathComponent("sighup")
        let runtimeDir = lab.dir.appendingPathComponent("rt")
        try FileManager.default.createDirectory(at: copyDir, withIntermediateDirectories: true)
        let copy = copyDir.appendingPathComponent("config.xml")
        let original = try String(contentsOfFile: lab.info.a.config_path, encoding: .utf8)
        try original.write(to: copy, atomically: true, encoding: .utf8)
        let notify = try NotifySocket()

        let s = try Sidecar(
            lab: lab, relay: relay,
            env: [
                "SYNCTHING_CONFIG": copy.path, "NOTIFY_SOCKET": notify.value, "WATCHDOG_USEC": "1000000",
                "RUNTIME_DIRECTORY": runtimeDir.path, "LOG_FORMAT": "json", "LOG_LEVEL": "info",
            ])
        defer { s.stop() }
        #expect(notify.waitFor("READY=1", timeout: 30), "no READY=1: \(notify.received)")
        #expect(notify.waitFor("WATCHDOG=1", timeout: 5))
        #expect(notify.received.contains { $0.contains("STATUS=watching Syncthing events") })

        // The state file (`state-<instance key>`, the only one): a fresh poll, nothing else.
        let stateNames = E2E.stateFiles(in: runtimeDir.path)
        #expect(stateNames.count == 1, "\(stateNames)")
        let statePath = runtimeDir.appendingPathComponent(stateNames.first ?? "state").path
        let state = try #require(ServiceState.decode((try? String(contentsOfFile: statePath, encoding: .utf8)) ?? ""))
        #expect(state.isFresh(now: Int64(Date().timeIntervalSince1970)))

        // --status with the service's environment: healthy, and the real Syncthing's release; no identifier.
        let statusEnv = [
            "PATH": "/usr/bin:/bin", "HOME": lab.dir.path, "RELAY_URL": relay.url, "SYNCTHING_CONFIG": copy.path,
            "RUNTIME_DIRECTORY": runtimeDir.path,
        ]
        let (statusCode, statusOut, _) = try E2E.capture([E2E.binary, "--status"], environment: statusEnv)
        #expect(statusCode == 0, "\(statusOut)")
        #expect(statusOut.hasPrefix("vaultsync-notify: healthy\n"), "\(statusOut)")
        // The release the lab's Syncthing reports (1.19.2, 1.29.5 or 2.x), major and minor at least.
        let release = try #require(E2E.syncthingRelease)
        let majorMinor = release.split(separator: ".").prefix(2).joined(separator: ".")
        #expect(statusOut.contains("reachable (Syncthing \(majorMinor)."), "\(statusOut)")
        for secret in [lab.info.a.id, lab.info.b.id, lab.info.a.api_key, lab.dir.path, relay.url, lab.info.a.gui_url] {
            #expect(!statusOut.contains(secret), "--status shows an identifier: \(statusOut)")
        }

        // A config.xml that cannot be used: keep the current access, keep running.
        try "<configuration".write(to: copy, atomically: true, encoding: .utf8)
        kill(s.process.processIdentifier, SIGHUP)
        #expect(E2E.waitFor(10) { s.log.contains("re-read config.xml on SIGHUP failed") })
        #expect(s.process.isRunning)
        try lab.write("vault", "before-swap.md")
        #expect(E2E.waitFor(20) { relay.delivered.count >= 1 })

        // A new API key: Syncthing gets it, config.xml gets it, SIGHUP swaps it in.
        let oldKey = lab.info.a.api_key
        let newKey = "svcmgr-e2e-\(UInt32.random(in: 0...UInt32.max))"
        try setSyncthingKey(from: oldKey, to: newKey)
        defer { try? setSyncthingKey(from: newKey, to: oldKey) }
        try original.replacingOccurrences(of: oldKey, with: newKey).write(to: copy, atomically: true, encoding: .utf8)
        kill(s.process.processIdentifier, SIGHUP)
        // Syncthing's own change of key saves its config (a ConfigSaved event), restarts its GUI server (a cut
        // long-poll) and refuses the old key (a 403): each makes the service re-read config.xml by itself, and when
        // that re-read comes after the copy above, the new key is already in and the SIGHUP finds nothing changed.
        // Both orders are right; the wake-up below shows the new key works.
        #expect(
            E2E.waitFor(10) {
                let log = s.log
                return log.contains("re-read config.xml on SIGHUP; Syncthing access updated")
                    || ((log.contains("Syncthing's address, API key or certificate changed")
                        || log.contains("re-read config.xml after an authentication failure"))
                        && log.contains("re-read config.xml on SIGHUP; nothing changed"))
            }, "the SIGHUP after the key swap:\n\(s.log)")
        let before = relay.delivered.count
        try lab.write("vault", "after-swap.md")
        #expect(E2E.waitFor(30) { relay.delivered.count > before }, "no wake-up after the key swap:\n\(s.log)")
        #expect(s.process.isRunning)

        let (status, _) = s.terminate()
        #expect(status == 0)
        #expect(notify.waitFor("STOPPING=1", timeout: 5))

        // Every line is one JSON object with level and msg; none carries an identifier (nor either key).
        for line in s.lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] is String && object?["msg"] is String, "not a JSON record: \(line)")
        }
        let leaks = s.leaks(lab.secrets + [newKey])
        #expect(leaks.isEmpty, "log lines carrying an identifier: \(leaks)")
        for datagram in notify.received {
            #expect(!(lab.secrets + [newKey]).contains { datagram.contains($0) })
        }
    }
}
