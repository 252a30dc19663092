import CCrypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The public-key pin of Syncthing's GUI certificate, in the form `HTTPRequest.pinnedPublicKey` (libcurl's
/// `CURLOPT_PINNEDPUBLICKEY`, curl's `--pinnedpubkey`) takes.
///
/// Syncthing's `https-cert.pem` is self-signed and names only the machine's host name, so the sidecar verifies the
/// GUI by pinning the certificate's key instead of checking a chain and a name (docs/syncthing-api.md, TLS). The
/// pin covers the key, not the certificate, so it survives a re-issued certificate only if
/// the key is kept; Syncthing regenerates the pair when the certificate nears expiry, so re-read the file when a pin
/// stops matching.
package enum PublicKeyPin {
    /// Largest input read or accepted, in bytes. A certificate PEM is a few KiB.
    package static let maxInputBytes = 1 << 20

    /// `"sha256//" + base64(SHA-256(DER SubjectPublicKeyInfo))` of the first `CERTIFICATE` block in `certificatePEM`;
    /// the same value as `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256
    /// -binary | base64`, and computed the way libcurl computes the peer's side (`i2d_X509_PUBKEY`).
    ///
    /// - Returns: nil when the input is empty, larger than `maxInputBytes`, holds no PEM certificate (garbage, a
    ///   private key alone, a truncated or corrupted block), or the block is encrypted. Other PEM blocks before the
    ///   certificate (e.g. a key in a combined file) are skipped. Never prompts for a password.
    package static func sha256Pin(certificatePEM: [UInt8]) -> String? {
        guard !certificatePEM.isEmpty, certificatePEM.count <= maxInputBytes else { return nil }
        // Failures leave entries on OpenSSL's per-thread error queue, which libcurl reads after its own TLS calls.
        defer { ERR_clear_error() }
        guard let spki = certificatePEM.withUnsafeBytes({ subjectPublicKeyInfoDER(pem: $0) }) else { return nil }
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        guard SHA256(spki, spki.count, &digest) != nil else { return nil }
        return "sha256//" + base64(digest)
    }

    /// `sha256Pin(certificatePEM:)` of the file at `path` (e.g. `<config dir>/https-cert.pem`).
    ///
    /// - Returns: nil when the file cannot be opened, is not a regular file (a FIFO or device is never read), is
    ///   larger than `maxInputBytes`, or holds no PEM certificate.
    package static func sha256Pin(certificateFile path: String) -> String? {
        guard let bytes = readRegularFile(path, limit: maxInputBytes) else { return nil }
        return sha256Pin(certificatePEM: bytes)
    }

    private static func subjectPublicKeyInfoDER(pem: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let base = pem.baseAddress, let length = Int32(exactly: pem.count),
            let bio = BIO_new_mem_buf(base, length)
        else { return nil }
        defer { BIO_free(bio) }
        // A password callback that refuses: without it OpenSSL would prompt on the terminal for an encrypted block.
        guard let certificate = PEM_read_bio_X509(bio, nil, { _, _, _, _ in -1 }, nil) else { return nil }
        defer { X509_free(certificate) }
        guard let publicKey = X509_get_X509_PUBKEY(certificate) else { return nil }
        let size = i2d_X509_PUBKEY(publicKey, nil)
        guard size > 0, Int(size) <= maxInputBytes else { return nil }
        var der = [UInt8](repeating: 0, count: Int(size))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509_PUBKEY(publicKey, &cursor)
        }
        return written == size ? der : nil
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(triple >> 18 & 63)])
            out.append(alphabet[Int(triple >> 12 & 63)])
            out.append(index + 1 < bytes.count ? alphabet[Int(triple >> 6 & 63)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(triple & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads a regular file of at most `limit` bytes; nil for anything else. With `prefixOnly`, a longer file gives
    /// its first `limit` bytes instead of nil (TrustStore's look for a PEM certificate).
    static func readRegularFile(_ path: String, limit: Int, prefixOnly: Bool = false) -> [UInt8]? {
        guard !path.isEmpty, !path.utf8.contains(0) else { return nil }
        // O_NONBLOCK: opening a FIFO must not hang; the fstat below then refuses it.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return contents }
            contents.append(contentsOf: chunk[0..<count])
            if contents.count > limit { return prefixOnly ? Array(contents.prefix(limit)) : nil }
        }
    }
}
