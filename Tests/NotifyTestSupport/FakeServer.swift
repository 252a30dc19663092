import Foundation
import NotifyRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Python fake server (`Tests/Doubles/fake_server.py`) in a child process, on an ephemeral loopback port
/// or a unix socket. Reads the marker lines it prints on stdout.
package final class FakeServer {
    package private(set) var port = 0
    private let process: Process
    private let stdoutFD: Int32
    private var buffered: [UInt8] = []

    package init(unixSocket: String? = nil, tls: SelfSignedCertificate? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", "-u", TestScripts.double("fake_server.py").path]
        if let unixSocket { arguments += ["--unix", unixSocket] }
        if let tls { arguments += ["--tls", tls.certPath, tls.keyPath] }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        stdoutFD = output.fileHandleForReading.fileDescriptor
        try process.run()
        let ready = try nextLine(timeout: .seconds(10))
        guard ready.hasPrefix("READY "), let port = Int(ready.dropFirst(6)) else {
            stop()
            throw TestFailure("fake server said \(ready)")
        }
        self.port = port
    }

    deinit { stop() }

    package func url(_ pathAndQuery: String, scheme: String = "http") -> String {
        "\(scheme)://127.0.0.1:\(port)\(pathAndQuery)"
    }

    /// Skips lines until one equals `marker` (e.g. `HELD`).
    package func waitFor(_ marker: String, timeout: Duration = .seconds(10)) throws {
        let deadline = ContinuousClock.now + timeout
        while try nextLine(timeout: deadline - ContinuousClock.now) != marker {}
    }

    package func nextLine(timeout: Duration) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw TestFailure("fake server: no line within \(timeout)") }
            var pollFD = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
            let ms = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&pollFD, 1, ms)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(stdoutFD, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw TestFailure("fake server closed its stdout") }
            buffered += chunk[..<count]
        }
    }

    /// SIGKILL, not `terminate()`: a child spawned from a Dispatch worker inherits its blocked signals, SIGTERM
    /// among them.
    package func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// The fake server's /echo answer.
package struct Echo: Decodable {
    package let method: String
    package let target: String
    package let headers: [[String]]
    package let body_hex: String
    /// Which connection the request came on: 1 for the server's first, counting up.
    package let connection: Int

    package init(_ response: HTTPResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: Data(response.body))
    }

    /// Values of the header `name` (case-insensitive), in arrival order.
    package func values(_ name: String) -> [String] {
        headers.filter { $0.count == 2 && $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }

    package var body: [UInt8] {
        var bytes: [UInt8] = []
        var hex = body_hex.utf8.makeIterator()
        while let high = hex.next(), let low = hex.next() {
            bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
        }
        return bytes
    }
}
