import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Filesystem seam

/// The filesystem questions the CA probe asks. `SystemFileSystem` answers them for real; tests use a fake.
package protocol TrustStoreFileSystem: Sendable {
    /// True when `path` is a regular file (after symlinks) that this process can open for reading and whose first
    /// `TrustStore.pemProbeBytes` bytes hold a PEM certificate header (`-----BEGIN CERTIFICATE-----` or OpenSSL's
    /// `-----BEGIN TRUSTED CERTIFICATE-----`), the form CURLOPT_CAINFO needs; false for anything else (missing, a
    /// directory, a device, unreadable, empty, a DER file, text, a key).
    func holdsPEMCertificate(_ path: String) -> Bool
    /// True when `path` is a directory this process can list and one of its entry names satisfies `matches`.
    /// Stops at the first match.
    func directoryContains(_ path: String, where matches: (String) -> Bool) -> Bool
}

extension SystemFileSystem: TrustStoreFileSystem {
    package func holdsPEMCertificate(_ path: String) -> Bool {
        guard let prefix = PublicKeyPin.readRegularFile(path, limit: TrustStore.pemProbeBytes, prefixOnly: true)
        else { return false }
        return TrustStore.containsPEMCertificateHeader(prefix)
    }

    package func directoryContains(_ path: String, where matches: (String) -> Bool) -> Bool {
        guard let directory = opendir(path) else { return false }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: pointer.pointee)) {
                    String(cString: $0)
                }
            }
            if matches(name) { return true }
        }
        return false
    }
}

// MARK: - Results

/// An environment variable that names CA certificates, as OpenSSL defines them (`X509_get_default_cert_file_env`,
/// `X509_get_default_cert_dir_env`) and Go's crypto/x509 honours them.
package enum CAVariable: String, Sendable, CaseIterable {
    /// One PEM file of trusted CA certificates.
    case sslCertFile = "SSL_CERT_FILE"
    /// A directory of CA certificates in OpenSSL's hashed format (`c_rehash`/`openssl rehash`), or several of them
    /// separated by `:`.
    case sslCertDir = "SSL_CERT_DIR"
}

extension CAVariable {
    /// The problem when the variable is set but names nothing usable (`CATrust.unusable`); names no path.
    package var unusableMessage: String {
        switch self {
        case .sslCertFile: "SSL_CERT_FILE is set but names no readable file of PEM certificates"
        case .sslCertDir: "SSL_CERT_DIR is set but names no directory holding OpenSSL hash links (such as 5ad8a5d6.0)"
        }
    }

    /// What to do about `unusableMessage`.
    package var unusableFix: String {
        switch self {
        case .sslCertFile:
            "Point SSL_CERT_FILE at a readable PEM file of trusted CAs, or unset it to use the usual locations."
        case .sslCertDir:
            "Point SSL_CERT_DIR at a directory prepared with `openssl rehash`, set SSL_CERT_FILE to a PEM bundle "
                + "instead, or unset it to use the usual locations."
        }
    }
}

/// Where libcurl finds the CA certificates it verifies a peer against.
package struct CACertificates: Sendable, Equatable {
    /// A PEM bundle: `CURLOPT_CAINFO` (and `CURLOPT_PROXY_CAINFO`).
    package var file: String?
    /// One hashed directory, or several joined by `:` (OpenSSL splits the list itself): `CURLOPT_CAPATH` (and
    /// `CURLOPT_PROXY_CAPATH`).
    package var directory: String?
    /// True when `SSL_CERT_FILE`/`SSL_CERT_DIR` named them; false when the probe found them.
    package var fromEnvironment: Bool

    package init(file: String? = nil, directory: String? = nil, fromEnvironment: Bool) {
        self.file = file
        self.directory = directory
        self.fromEnvironment = fromEnvironment
    }
}

/// What the CA probe came to.
package enum CATrust: Sendable, Equatable {
    /// Verify against these.
    case found(CACertificates)
    /// The variable is set but names nothing usable (see `TrustStore.resolve`). There is no fallback.
    case unusable(CAVariable)
    /// Neither variable is set and nothing is at any probed location.
    case notFound
    /// macOS: libcurl's own default is left alone (Apple's libcurl verifies against the system keychain).
    case platformDefault
}

// MARK: - Probe

/// Finds the CA certificates for https peers that are verified (the relay), without relying on a bundle compiled
/// into libcurl: the static release build's libcurl has none, and Debian's libcurl is happy to be told.
///
/// `resolve(environment:fileSystem:)` is the pure rule. An instance caches what it found and probes again, on the
/// next request that needs it, for as long as nothing usable was found, so a bundle mounted or installed later is
/// picked up without a restart. A probe opens at most seven files (`SSL_CERT_FILE` or the six `bundleFiles`), reading
/// at most `pemProbeBytes` of each, and, only when no file is found, lists two directories, stopping at the first
/// hash link.
package final class TrustStore: Sendable {
    /// PEM bundles probed in order: Go's crypto/x509 list for Linux (`root_linux.go`, `certFiles`).
    ///
    /// Synology DSM ships `/etc/ssl/certs/ca-certificates.crt`, the first entry (SynoCommunity/spksrc issues
    /// #1798 and #4897 name it as "the Synology certificate bundle" that DSM updates). QNAP QTS has no documented
    /// system bundle: the qnap-letsencrypt READMEs (Yannik/qnap-letsencrypt, NicolasR/qnap-letsencrypt) say that
    /// none is installed by default, so on QTS set `SSL_CERT_FILE`.
    package static let bundleFiles = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Gentoo, Arch, Synology DSM
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL 6
        "/etc/ssl/ca-bundle.pem",  // openSUSE
        "/etc/pki/tls/cacert.pem",  // OpenELEC
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // CentOS, RHEL 7+
        "/etc/ssl/cert.pem",  // Alpine
    ]

    /// Hashed directories probed after the files: Go's `certDirectories` for Linux.
    package static let bundleDirectories = [
        "/etc/ssl/certs",  // SLES 10/11, and every system that runs c_rehash
        "/etc/pki/tls/certs",  // Fedora, RHEL
    ]

    /// The rule, for Linux.
    ///
    /// 1. `SSL_CERT_FILE` and/or `SSL_CERT_DIR` set (non-empty): exactly what they name, nothing probed.
    ///    `SSL_CERT_FILE` must be a readable regular file (symlinks followed) whose first MiB holds a PEM certificate.
    ///    `SSL_CERT_DIR` is a `:`-separated list, as OpenSSL and Go read it; empty entries are skipped, and every entry
    ///    that is a directory holding at least one OpenSSL hash link (`isHashLink`) is used, in order, joined by `:`. A
    ///    variable that names nothing usable is `.unusable` (`SSL_CERT_FILE` reported first when both are): an explicit
    ///    setting that is wrong must fail loudly rather than quietly trust something else, the same rule as
    ///    `SYNCTHING_CONFIG`. (Go and OpenSSL let each variable replace only its own half of the defaults; here a
    ///    variable replaces the whole probe, so that what is trusted is exactly what was named.)
    /// 2. Otherwise the first of `bundleFiles` that is a readable regular file holding a PEM certificate
    ///    (`holdsPEMCertificate`).
    /// 3. Otherwise the first of `bundleDirectories` that holds an OpenSSL hash link.
    /// 4. Otherwise `.notFound`.
    package static func resolve(environment: [String: String], fileSystem: some TrustStoreFileSystem) -> CATrust {
        let fileVariable = environment[CAVariable.sslCertFile.rawValue].flatMap { $0.isEmpty ? nil : $0 }
        let directoryVariable = environment[CAVariable.sslCertDir.rawValue].flatMap { $0.isEmpty ? nil : $0 }
        if fileVariable != nil || directoryVariable != nil {
            var certificates = CACertificates(fromEnvironment: true)
            if let fileVariable {
                guard fileSystem.holdsPEMCertificate(fileVariable) else { return .unusable(.sslCertFile) }
                certificates.file = fileVariable
            }
            if let directoryVariable {
                let usable = directoryVariable.split(separator: ":").map(String.init).filter {
                    isUsableDirectory($0, fileSystem)
                }
                guard !usable.isEmpty else { return .unusable(.sslCertDir) }
                certificates.directory = usable.joined(separator: ":")
            }
            return .found(certificates)
        }
        if let file = bundleFiles.first(where: { fileSystem.holdsPEMCertificate($0) }) {
            return .found(CACertificates(file: file, fromEnvironment: false))
        }
        if let directory = bundleDirectories.first(where: { isUsableDirectory($0, fileSystem) }) {
            return .found(CACertificates(directory: directory, fromEnvironment: false))
        }
        return .notFound
    }

    /// An OpenSSL hash link to a certificate: eight lower-case hex digits, a dot, and a decimal sequence number
    /// (`5ad8a5d6.0`), as `c_rehash` and `openssl rehash` name them. CRL links (`.r0`) do not count.
    package static func isHashLink(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count >= 10, bytes.count <= 14, bytes[8] == UInt8(ascii: ".") else { return false }
        let hex = bytes[..<8].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        return hex && bytes[9...].allSatisfy { (0x30...0x39).contains($0) }
    }

    /// How much of a CA file is searched for a PEM certificate header: 1 MiB (Debian's whole bundle is about 0.2 MB;
    /// a bundle's first certificate comes long before that).
    package static let pemProbeBytes = 1 << 20

    /// True when `bytes` contain `-----BEGIN CERTIFICATE-----` or `-----BEGIN TRUSTED CERTIFICATE-----`.
    package static func containsPEMCertificateHeader(_ bytes: [UInt8]) -> Bool {
        for header in ["-----BEGIN CERTIFICATE-----", "-----BEGIN TRUSTED CERTIFICATE-----"] {
            let needle = Array(header.utf8)
            guard bytes.count >= needle.count else { continue }
            for start in 0...(bytes.count - needle.count)
            where bytes[start] == needle[0] && bytes[start..<start + needle.count].elementsEqual(needle) {
                return true
            }
        }
        return false
    }

    static func isUsableDirectory(_ path: String, _ fileSystem: some TrustStoreFileSystem) -> Bool {
        fileSystem.directoryContains(path, where: isHashLink)
    }

    // MARK: Instance

    private struct State {
        var settled: CATrust?
        var reported = false
    }

    private let environment: [String: String]
    private let fileSystem: any TrustStoreFileSystem
    private let usesPlatformStore: Bool
    private let logger: Logger?
    private let state = ThreadSafe(State())

    /// - Parameters:
    ///   - environment: the process environment (`SSL_CERT_FILE`, `SSL_CERT_DIR`; empty values count as unset).
    ///   - usesPlatformStore: true on macOS (the default there): `current()` is `.platformDefault`, nothing probed.
    ///   - logger: gets one error record the first time nothing usable is found: `caBundleMissing`,
    ///     `caFileUnusable` or `caDirUnusable`. Never a path.
    package init(
        environment: [String: String], fileSystem: any TrustStoreFileSystem = SystemFileSystem(),
        usesPlatformStore: Bool = ConfigLocator.isMacOS, logger: Logger? = nil
    ) {
        self.environment = environment
        self.fileSystem = fileSystem
        self.usesPlatformStore = usesPlatformStore
        self.logger = logger
    }

    /// The store for `CurlTransport()` without arguments: this process's `SSL_CERT_FILE` and `SSL_CERT_DIR`, the
    /// real filesystem, no logger.
    package static let process: TrustStore = {
        var environment: [String: String] = [:]
        for variable in CAVariable.allCases {
            if let value = getenv(variable.rawValue) { environment[variable.rawValue] = String(cString: value) }
        }
        return TrustStore(environment: environment)
    }()

    /// What to verify against now: the first `.found` (or `.platformDefault`) is kept for the life of the process;
    /// anything else is probed again on the next call. Thread-safe.
    package func current() -> CATrust {
        if usesPlatformStore { return .platformDefault }
        if let settled = state.withLock({ $0.settled }) { return settled }
        let trust = Self.resolve(environment: environment, fileSystem: fileSystem)
        let report: Bool = state.withLock { state in
            if case .found = trust {
                state.settled = trust
                return false
            }
            defer { state.reported = true }
            return !state.reported
        }
        if report, let logger {
            switch trust {
            case .unusable(.sslCertFile): logger.log(.error, .caFileUnusable)
            case .unusable(.sslCertDir): logger.log(.error, .caDirUnusable)
            default: logger.log(.error, .caBundleMissing)
            }
        }
        return trust
    }
}
