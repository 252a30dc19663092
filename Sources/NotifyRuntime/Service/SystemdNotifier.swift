import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends notify datagrams to systemd without libsystemd: one `AF_UNIX`/`SOCK_DGRAM` datagram per call to
/// `$NOTIFY_SOCKET`, a filesystem path (`/run/systemd/notify`) or, when it starts with `@`, a Linux abstract socket
/// name (the `@` stands for the leading NUL byte). Sends never block (`MSG_DONTWAIT`) and never raise SIGPIPE; a
/// failed send is dropped, as sd_notify's callers do.
package struct SystemdNotifier: Sendable, Equatable {
    /// The socket address: a path, or an abstract name without its `@`.
    package enum Address: Sendable, Equatable {
        case path(String)
        case abstract(String)
    }

    package let address: Address

    /// - Parameter socket: NOTIFY_SOCKET's value.
    /// - Returns: nil when it is empty, too long for `sockaddr_un` (108 bytes), neither absolute nor `@…`, or a
    ///   kind this program does not speak (`vsock:`).
    package init?(socket: String) {
        let limit = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        if socket.hasPrefix("@") {
            let name = String(socket.dropFirst())
            guard !name.isEmpty, name.utf8.count < limit else { return nil }
            address = .abstract(name)
        } else if socket.hasPrefix("/") {
            guard socket.utf8.count < limit else { return nil }
            address = .path(socket)
        } else {
            return nil
        }
    }

    /// The notifier for NOTIFY_SOCKET; nil (nothing is ever sent) when it is unset or unusable.
    package init?(environment: [String: String]) {
        guard let socket = environment["NOTIFY_SOCKET"], !socket.isEmpty else { return nil }
        self.init(socket: socket)
    }

    /// How often to send `WATCHDOG=1`: half of WATCHDOG_USEC (microseconds), as sd_watchdog_enabled(3) advises.
    /// - Parameters:
    ///   - environment: WATCHDOG_USEC and WATCHDOG_PID.
    ///   - pid: this process (default `getpid()`); when WATCHDOG_PID is set and names another process, the
    ///     watchdog is not ours.
    /// - Returns: nil when the watchdog is off (unset, 0, malformed, or another process's).
    package static func watchdogInterval(environment: [String: String], pid: pid_t = getpid()) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], !owner.isEmpty {
            guard let ownerPID = pid_t(owner), ownerPID == pid else { return nil }
        }
        return .microseconds(Int64(clamping: usec / 2))
    }

    /// Sends `messages` as one datagram, newline-separated (sd_notify's format).
    /// - Returns: true when the kernel took the datagram.
    @discardableResult
    package func send(_ messages: [NotifyMessage]) -> Bool {
        guard !messages.isEmpty else { return true }
        let payload = Array(messages.map(\.line).joined(separator: "\n").utf8)
        #if canImport(Glibc)
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { _ = close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let nameBytes: [UInt8]
        var length = MemoryLayout.offset(of: \sockaddr_un.sun_path)!
        switch address {
        case .path(let path):
            nameBytes = Array(path.utf8) + [0]
            length += nameBytes.count
        case .abstract(let name):
            nameBytes = [0] + Array(name.utf8)
            // An abstract address is exactly its bytes: no trailing NUL in the length.
            length += nameBytes.count
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, byte) in nameBytes.enumerated() where i < raw.count { raw[i] = byte }
        }
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)
        #else
            let flags = MSG_DONTWAIT
        #endif
        let sent = payload.withUnsafeBytes { body in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, body.baseAddress, body.count, flags, $0, socklen_t(length))
                }
            }
        }
        return sent == payload.count
    }
}
