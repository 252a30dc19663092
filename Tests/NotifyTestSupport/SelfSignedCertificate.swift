import Foundation

/// A throwaway self-signed certificate shaped like Syncthing's (EC P-256, CN and only SAN = a host name).
package struct SelfSignedCertificate {
    package let certPath: String
    package let keyPath: String

    /// - Parameter subjectAltName: `DNS:vm` like Syncthing's; `IP:127.0.0.1` makes a certificate that verifies for
    ///   the fake server's URL once it is trusted as a CA (`SSL_CERT_FILE`).
    package init(in directory: TemporaryDirectory, name: String = "https", subjectAltName: String = "DNS:vm") throws {
        certPath = directory.file("\(name)-cert.pem")
        keyPath = directory.file("\(name)-key.pem")
        try run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=vm", "-addext", "subjectAltName=\(subjectAltName)", "-days", "2",
            "-keyout", keyPath, "-out", certPath,
        ])
    }

    /// The pin as the openssl CLI computes it (the reference value).
    package func opensslPin() throws -> String {
        let pubkey = try run(["openssl", "x509", "-in", certPath, "-pubkey", "-noout"])
        let der = try run(["openssl", "pkey", "-pubin", "-outform", "der"], stdin: pubkey)
        let digest = try run(["openssl", "dgst", "-sha256", "-binary"], stdin: der)
        let base64 = try run(["base64"], stdin: digest)
        return "sha256//" + String(decoding: base64, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Runs a command to completion; returns stdout. Throws when it exits non-zero.
@discardableResult
package func run(_ arguments: [String], stdin: Data? = nil) throws -> Data {
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
