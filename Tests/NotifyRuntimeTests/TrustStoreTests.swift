import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

@Suite struct TrustStoreTests {
    static let debian = "/etc/ssl/certs/ca-certificates.crt"

    func resolve(_ fs: FakeTrustFileSystem, _ environment: [String: String] = [:]) -> CATrust {
        TrustStore.resolve(environment: environment, fileSystem: fs)
    }

    // MARK: Probe order (Go's crypto/x509 root_linux.go)

    @Test func probeListIsGosLinuxListInOrder() {
        #expect(
            TrustStore.bundleFiles == [
                "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
                "/etc/pki/tls/cacert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem",
            ])
        #expect(TrustStore.bundleDirectories == ["/etc/ssl/certs", "/etc/pki/tls/certs"])
    }

    @Test(arguments: TrustStore.bundleFiles)
    func eachProbedFileIsFoundAlone(path: String) {
        let fs = FakeTrustFileSystem()
        fs.addFile(path)
        #expect(resolve(fs) == .found(CACertificates(file: path, fromEnvironment: false)))
        // Nothing after the hit is asked.
        #expect(fs.asked == Array(TrustStore.bundleFiles.prefix { $0 != path }) + [path])
    }

    @Test func theFirstFileWinsAndFilesComeBeforeDirectories() {
        let fs = FakeTrustFileSystem()
        fs.addFile("/etc/ssl/cert.pem")
        fs.addFile("/etc/pki/tls/certs/ca-bundle.crt")
        fs.addDirectory("/etc/ssl/certs", ["5ad8a5d6.0"])
        #expect(resolve(fs) == .found(CACertificates(file: "/etc/pki/tls/certs/ca-bundle.crt", fromEnvironment: false)))
    }

    @Test func emptyUnreadableOrNonPEMFilesDoNotCount() {
        let fs = FakeTrustFileSystem()
        fs.addFile(Self.debian, size: 0)
        fs.addFile("/etc/pki/tls/certs/ca-bundle.crt", readable: false)
        fs.addFile("/etc/ssl/ca-bundle.pem", pem: false)
        fs.addFile("/etc/ssl/cert.pem")
        #expect(resolve(fs) == .found(CACertificates(file: "/etc/ssl/cert.pem", fromEnvironment: false)))
    }

    @Test func aDirectoryCountsOnlyWithAnOpenSSLHashLink() {
        let fs = FakeTrustFileSystem()
        fs.addDirectory("/etc/ssl/certs", ["README", "ca.pem", "5ad8a5d6.r0"])
        fs.addDirectory("/etc/pki/tls/certs", ["Makefile", "9c8dfbd4.1"])
        #expect(resolve(fs) == .found(CACertificates(directory: "/etc/pki/tls/certs", fromEnvironment: false)))
        fs.addDirectory("/etc/ssl/certs", ["ca.pem", "5ad8a5d6.0"])
        #expect(resolve(fs) == .found(CACertificates(directory: "/etc/ssl/certs", fromEnvironment: false)))
    }

    @Test func nothingAnywhereIsNotFound() {
        let fs = FakeTrustFileSystem()
        fs.addDirectory("/etc/ssl/certs", [])
        #expect(resolve(fs) == .notFound)
        #expect(fs.asked == TrustStore.bundleFiles + TrustStore.bundleDirectories)
    }

    @Test(arguments: [
        ("5ad8a5d6.0", true), ("9c8dfbd4.12", true), ("00000000.9", true), ("5AD8A5D6.0", false),
        ("5ad8a5d6.r0", false), ("5ad8a5d6.", false), ("5ad8a5d.0", false), ("5ad8a5d6x0", false),
        ("5ad8a5d6.0.pem", false), ("ca-certificates.crt", false), ("", false), ("5ad8a5g6.0", false),
    ])
    func hashLinkNames(name: String, isLink: Bool) {
        #expect(TrustStore.isHashLink(name) == isLink)
    }

    // MARK: SSL_CERT_FILE / SSL_CERT_DIR

    @Test func sslCertFileReplacesTheProbe() {
        let fs = FakeTrustFileSystem()
        fs.addFile(Self.debian)
        fs.addFile("/run/secrets/ca.pem")
        #expect(
            resolve(fs, ["SSL_CERT_FILE": "/run/secrets/ca.pem"])
                == .found(CACertificates(file: "/run/secrets/ca.pem", fromEnvironment: true)))
        #expect(fs.asked == ["/run/secrets/ca.pem"])
    }

    @Test func sslCertFileThatNamesNothingUsableIsAnErrorWithoutFallback() {
        let fs = FakeTrustFileSystem()
        fs.addFile(Self.debian)
        fs.addFile("/empty.pem", size: 0)
        fs.addFile("/secret.pem", readable: false)
        fs.addFile("/garbage.pem", pem: false)
        fs.addDirectory("/dir", ["5ad8a5d6.0"])
        for value in ["/missing.pem", "/empty.pem", "/secret.pem", "/garbage.pem", "/dir"] {
            #expect(resolve(fs, ["SSL_CERT_FILE": value]) == .unusable(.sslCertFile))
        }
        #expect(!fs.asked.contains(Self.debian))
    }

    @Test func sslCertDirIsAColonListOfHashedDirectories() {
        let fs = FakeTrustFileSystem()
        fs.addFile(Self.debian)
        fs.addDirectory("/a", ["5ad8a5d6.0"])
        fs.addDirectory("/b", ["notes.txt"])
        fs.addDirectory("/c", ["9c8dfbd4.0"])
        #expect(resolve(fs, ["SSL_CERT_DIR": "/a"]) == .found(CACertificates(directory: "/a", fromEnvironment: true)))
        // Entries that are missing or hold no hash link are left out; empty entries are skipped.
        #expect(
            resolve(fs, ["SSL_CERT_DIR": ":/missing:/a::/b:/c:"])
                == .found(CACertificates(directory: "/a:/c", fromEnvironment: true)))
        #expect(resolve(fs, ["SSL_CERT_DIR": "/b:/missing"]) == .unusable(.sslCertDir))
        #expect(resolve(fs, ["SSL_CERT_DIR": ":"]) == .unusable(.sslCertDir))
        #expect(!fs.asked.contains(Self.debian))
    }

    @Test func bothVariablesTogether() {
        let fs = FakeTrustFileSystem()
        fs.addFile("/ca.pem")
        fs.addDirectory("/a", ["5ad8a5d6.0"])
        #expect(
            resolve(fs, ["SSL_CERT_FILE": "/ca.pem", "SSL_CERT_DIR": "/a"])
                == .found(CACertificates(file: "/ca.pem", directory: "/a", fromEnvironment: true)))
        #expect(resolve(fs, ["SSL_CERT_FILE": "/ca.pem", "SSL_CERT_DIR": "/none"]) == .unusable(.sslCertDir))
        #expect(resolve(fs, ["SSL_CERT_FILE": "/none", "SSL_CERT_DIR": "/a"]) == .unusable(.sslCertFile))
        #expect(resolve(fs, ["SSL_CERT_FILE": "/none", "SSL_CERT_DIR": "/none"]) == .unusable(.sslCertFile))
    }

    @Test func emptyVariablesCountAsUnset() {
        let fs = FakeTrustFileSystem()
        fs.addFile(Self.debian)
        #expect(
            resolve(fs, ["SSL_CERT_FILE": "", "SSL_CERT_DIR": ""])
                == .found(CACertificates(file: Self.debian, fromEnvironment: false)))
    }

    // MARK: The store: caching, late appearance, the one log line, macOS

    @Test func aLateBundleIsPickedUpAndTheMissIsLoggedOnce() {
        let fs = FakeTrustFileSystem()
        let sink = RecordingLogSink()
        let store = TrustStore(
            environment: [:], fileSystem: fs, usesPlatformStore: false, logger: Logger(minimumLevel: .debug, sink: sink)
        )
        #expect(store.current() == .notFound)
        #expect(store.current() == .notFound)
        #expect(sink.records == [LogRecord(.error, .caBundleMissing)])
        fs.addFile("/etc/ssl/cert.pem")
        #expect(store.current() == .found(CACertificates(file: "/etc/ssl/cert.pem", fromEnvironment: false)))
        // Once found, it is kept without asking again, even if the file goes away (curl then reports it).
        fs.removeAll()
        let asked = fs.asked.count
        #expect(store.current() == .found(CACertificates(file: "/etc/ssl/cert.pem", fromEnvironment: false)))
        #expect(fs.asked.count == asked)
        #expect(sink.records.count == 1)
    }

    @Test(arguments: [
        ("SSL_CERT_FILE", LogMessage.caFileUnusable), ("SSL_CERT_DIR", .caDirUnusable),
    ])
    func anUnusableVariableIsLoggedOnceByName(variable: String, message: LogMessage) {
        let fs = FakeTrustFileSystem()
        fs.addFile(Self.debian)
        let sink = RecordingLogSink()
        let store = TrustStore(
            environment: [variable: "/run/secrets/ca"], fileSystem: fs, usesPlatformStore: false,
            logger: Logger(sink: sink))
        #expect(store.current() == .unusable(variable == "SSL_CERT_FILE" ? .sslCertFile : .sslCertDir))
        #expect(store.current() != .found(CACertificates(file: Self.debian, fromEnvironment: false)))
        #expect(sink.records == [LogRecord(.error, message)])
        // The line names the variable, never the path it holds.
        #expect(!sink.records[0].textLine().contains("/run"))
        #expect(sink.records[0].textLine().contains(variable))
    }

    @Test func macOSLeavesLibcurlsDefaultAlone() {
        let fs = FakeTrustFileSystem()
        let store = TrustStore(environment: ["SSL_CERT_FILE": "/x"], fileSystem: fs, usesPlatformStore: true)
        #expect(store.current() == .platformDefault)
        #expect(fs.asked.isEmpty)
    }

    // MARK: The real filesystem

    @Test func systemFileSystemAnswersForRealFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fs = SystemFileSystem()
        let pem = "# a comment\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        try Data(pem.utf8).write(to: URL(fileURLWithPath: directory.file("ca.pem")))
        try Data("pem".utf8).write(to: URL(fileURLWithPath: directory.file("text.pem")))
        try Data().write(to: URL(fileURLWithPath: directory.file("empty.pem")))
        try FileManager.default.createSymbolicLink(atPath: directory.file("link.pem"), withDestinationPath: "ca.pem")
        try FileManager.default.createSymbolicLink(atPath: directory.file("dangling.pem"), withDestinationPath: "no")
        #expect(fs.holdsPEMCertificate(directory.file("ca.pem")))
        #expect(fs.holdsPEMCertificate(directory.file("link.pem")))
        #expect(!fs.holdsPEMCertificate(directory.file("text.pem")))
        #expect(!fs.holdsPEMCertificate(directory.file("empty.pem")))
        #expect(!fs.holdsPEMCertificate(directory.file("dangling.pem")))
        try Data((String(repeating: "x", count: TrustStore.pemProbeBytes) + pem).utf8).write(
            to: URL(fileURLWithPath: directory.file("late.pem")))
        #expect(!fs.holdsPEMCertificate(directory.file("late.pem")))
        #expect(!fs.holdsPEMCertificate(directory.path))
        #expect(!fs.holdsPEMCertificate(directory.file("missing")))
        #expect(!fs.directoryContains(directory.path, where: TrustStore.isHashLink))
        try FileManager.default.createSymbolicLink(atPath: directory.file("5ad8a5d6.0"), withDestinationPath: "ca.pem")
        #expect(fs.directoryContains(directory.path, where: TrustStore.isHashLink))
        #expect(!fs.directoryContains(directory.file("ca.pem"), where: { _ in true }))
        #expect(!fs.directoryContains(directory.file("missing"), where: { _ in true }))
    }
}
