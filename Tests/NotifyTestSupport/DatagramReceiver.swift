import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real AF_UNIX datagram socket, bound to a path or to an abstract name (`@…`), standing in for systemd's
/// notify socket.
package final class DatagramReceiver {
    package let fd: Int32
    /// The NOTIFY_SOCKET value that reaches this socket.
    package let notifySocket: String

    package convenience init(path: String) throws {
        try self.init(name: Array(path.utf8) + [0], notifySocket: path)
    }

    package convenience init(abstract name: String) throws {
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
    package func receive(timeout: Duration = .seconds(2)) -> String? {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&pollFD, 1, ms) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }
}
