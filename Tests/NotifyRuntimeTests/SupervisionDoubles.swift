import Dispatch
import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real AF_UNIX datagram socket, bound to a path or to an abstract name (`@…`), standing in for systemd's
/// notify socket.
final class DatagramReceiver {
    let fd: Int32
    /// The NOTIFY_SOCKET value that reaches this socket.
    let notifySocket: String

    convenience init(path: String) throws {
        try self.init(name: Array(path.utf8) + [0], notifySocket: path)
    }

    convenience init(abstract name: String) throws {
        try self.init(name: [0] + Array(name.utf8), notifySocket: "@" + name, abstract: true)
    }

    private init(name: [UInt8], notifySocket: String, abstract: Bool = false) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, byte) in name.enumerated() { raw[i] = byte }
        }
        let length = MemoryLayout.offset(of: \sockaddr_un.sun_path)! + name.count
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard bound == 0 else {
            close(fd)
            throw TestFailure("bind failed: \(errno)")
        }
        self.fd = fd
        self.notifySocket = notifySocket
    }

    deinit { close(fd) }

    /// The next datagram's text, or nil when none arrives within `timeout`.
    func receive(timeout: Duration = .seconds(2)) -> String? {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&pollFD, 1, ms) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let state = ThreadSafe<(mono: Instant, wall: Int64)>((.zero, 1_718_000_000))
    var mono: Instant { state.withLock { $0.mono } }
    func advance(_ d: Duration) {
        state.withLock {
            $0.mono = $0.mono + d
            $0.wall += d.components.seconds
        }
    }
    var monotonic: @Sendable () -> Instant { { [self] in state.withLock { $0.mono } } }
    var wall: @Sendable () -> Int64 { { [self] in state.withLock { $0.wall } } }
}

/// A loopback stand-in for Syncthing's `/rest/system/status` (Tests/Doubles/fake_syncthing.py --status-only): 200 with
/// a status document for the right X-API-Key, 403 `CSRF Error` otherwise.
final class FakeSyncthingStatus {
    let process = Process()
    let port: Int

    init(key: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", TestScripts.double("fake_syncthing.py").path, "--status-only", "--api-key", key, "--print-port",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("fake Syncthing did not start")
        }
        self.port = port
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A TCP port on 127.0.0.1 that accepts connections into its backlog but never answers: a hung Syncthing.
final class SilentPort {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw TestFailure("listen failed") }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
