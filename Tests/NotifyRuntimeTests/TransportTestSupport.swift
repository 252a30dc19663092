import Dispatch
import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Where the transport fixtures live: the test bundle's copy of `Fixtures/transport`, or the source tree.
enum TransportFixtures {
    static var directory: URL {
        if let url = Bundle.module.url(forResource: "transport", withExtension: nil, subdirectory: "Fixtures") {
            return url
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/transport")
    }
}

/// The Python scripts the tests run, in the checkout: `Tests/Doubles` (servers that stand in for Syncthing and
/// others) and `Tests/Lab` (checkers). Found from this file's path, as they are programs, not bundle resources.
enum TestScripts {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    static func double(_ name: String) -> URL { tests.appendingPathComponent("Doubles/\(name)") }

    static func lab(_ name: String) -> URL { tests.appendingPathComponent("Lab/\(name)") }
}

/// A private temporary directory (short path: unix socket paths are limited to about 100 bytes), removed by `remove()`.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/vsnt-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw TestFailure("mkdtemp failed")
        }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs a command to completion; returns stdout. Throws when it exits non-zero.
@discardableResult
func run(_ arguments: [String], stdin: Data? = nil) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let input = Pipe()
    process.standardInput = stdin == nil ? FileHandle.nullDevice : input
    try process.run()
    if let stdin {
        input.fileHandleForWriting.write(stdin)
        try input.fileHandleForWriting.close()
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw TestFailure("\(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
    }
    return data
}

/// A throwaway self-signed certificate shaped like Syncthing's (EC P-256, CN and only SAN = a host name).
struct SelfSignedCertificate {
    let certPath: String
    let keyPath: String

    /// - Parameter subjectAltName: `DNS:vm` like Syncthing's; `IP:127.0.0.1` makes a certificate that verifies for
    ///   the fake server's URL once it is trusted as a CA (`SSL_CERT_FILE`).
    init(in directory: TemporaryDirectory, name: String = "https", subjectAltName: String = "DNS:vm") throws {
        certPath = directory.file("\(name)-cert.pem")
        keyPath = directory.file("\(name)-key.pem")
        try run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=vm", "-addext", "subjectAltName=\(subjectAltName)", "-days", "2",
            "-keyout", keyPath, "-out", certPath,
        ])
    }

    /// The pin as the openssl CLI computes it (the reference value).
    func opensslPin() throws -> String {
        let pubkey = try run(["openssl", "x509", "-in", certPath, "-pubkey", "-noout"])
        let der = try run(["openssl", "pkey", "-pubin", "-outform", "der"], stdin: pubkey)
        let digest = try run(["openssl", "dgst", "-sha256", "-binary"], stdin: der)
        let base64 = try run(["base64"], stdin: digest)
        return "sha256//" + String(decoding: base64, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The Python fake server (`Tests/Doubles/fake_server.py`) in a child process, on an ephemeral loopback port
/// or a unix socket. Reads the marker lines it prints on stdout.
final class FakeServer {
    private(set) var port = 0
    private let process: Process
    private let stdoutFD: Int32
    private var buffered: [UInt8] = []

    init(unixSocket: String? = nil, tls: SelfSignedCertificate? = nil) throws {
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

    func url(_ pathAndQuery: String, scheme: String = "http") -> String {
        "\(scheme)://127.0.0.1:\(port)\(pathAndQuery)"
    }

    /// Skips lines until one equals `marker` (e.g. `HELD`).
    func waitFor(_ marker: String, timeout: Duration = .seconds(10)) throws {
        let deadline = ContinuousClock.now + timeout
        while try nextLine(timeout: deadline - ContinuousClock.now) != marker {}
    }

    func nextLine(timeout: Duration) throws -> String {
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
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Runs one `perform` on a thread of its own, so the test thread can cancel it.
final class BackgroundTransfer: Sendable {
    private let outcome = ThreadSafe<Result<HTTPResponse, TransportError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ transport: some HTTPTransport, _ request: HTTPRequest) {
        Thread.detachNewThread { [self] in
            let result = transport.perform(request)
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// The transfer's result, or nil if it is still running after `timeout`.
    func wait(timeout: Duration) -> Result<HTTPResponse, TransportError>? {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcome.withLock { $0 }
    }
}

/// A TCP port on 127.0.0.1 that is bound but not listening: connecting to it is refused (RST) for as long as
/// this object lives, with no race against another process taking the port.
final class RefusingPort {
    let port: Int
    private let fd: Int32

    init() throws {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestFailure("bind failed")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// The fake server's /echo answer.
struct Echo: Decodable {
    let method: String
    let target: String
    let headers: [[String]]
    let body_hex: String
    /// Which connection the request came on: 1 for the server's first, counting up.
    let connection: Int

    init(_ response: HTTPResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: Data(response.body))
    }

    /// Values of the header `name` (case-insensitive), in arrival order.
    func values(_ name: String) -> [String] {
        headers.filter { $0.count == 2 && $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }

    var body: [UInt8] {
        var bytes: [UInt8] = []
        var hex = body_hex.utf8.makeIterator()
        while let high = hex.next(), let low = hex.next() {
            bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
        }
        return bytes
    }
}
