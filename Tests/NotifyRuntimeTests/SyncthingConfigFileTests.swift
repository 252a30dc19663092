import CLibXML2
import Foundation
import NotifyCore
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

#if canImport(Glibc)
    import Glibc
#endif

struct ConfigFileCase: Sendable, CustomTestStringConvertible {
    var fixture: String
    var expected: Result<SyncthingGUIConfig, ConfigFileError>
    var testDescription: String { fixture }

    init(_ fixture: String, _ address: String?, _ apiKey: String?, tls: Bool = false, enabled: Bool = true) {
        self.fixture = fixture
        self.expected = .success(SyncthingGUIConfig(address: address, apiKey: apiKey, tls: tls, enabled: enabled))
    }

    init(_ fixture: String, _ error: ConfigFileError) {
        self.fixture = fixture
        self.expected = .failure(error)
    }
}

@Suite struct SyncthingConfigFileTests {
    static let cases: [ConfigFileCase] = [
        // Real Syncthing 1.19.2 output (`syncthing generate`, and the same file re-saved by Syncthing).
        .init("standard-generated.xml", "127.0.0.1:8384", "VkLYDweg3b4qSu4oFZTxTNFtnKiXyaSg"),
        .init("standard-resaved.xml", "127.0.0.1:28384", "stlab-apikey-B-0123456789abcdef"),
        .init("standard-stlab.xml", "127.0.0.1:18384", "stlab-apikey-A-0123456789abcdef"),
        // Deployment variants.
        .init("docker.xml", "0.0.0.0:8384", "docker-apikey-0123456789abcdef"),
        .init("nas-synology.xml", "192.168.1.20:8384", "nas-apikey-Zx9Qw3", tls: true),
        .init("ipv6-any.xml", "[::]:8384", "ipv6-any-apikey"),
        .init("ipv6-loopback.xml", "[::1]:8384", "ipv6-loopback-apikey"),
        .init("unix-socket.xml", "/var/run/syncthing/gui.sock", "socket-apikey"),
        .init("tls.xml", "127.0.0.1:8384", "tls-apikey", tls: true),
        .init("tls-go-true.xml", "127.0.0.1:8384", "k", tls: true),
        .init("gui-disabled.xml", "127.0.0.1:8384", "disabled-gui-key", enabled: false),
        // Missing pieces.
        .init("missing-apikey.xml", "127.0.0.1:8384", nil),
        .init("empty-apikey.xml", "127.0.0.1:8384", nil),
        .init("missing-address.xml", nil, "no-address-apikey"),
        .init("missing-gui.xml", .noGUIElement),
        .init("nested-gui-only.xml", .noGUIElement),
        // Only <configuration><gui>'s own children count: not <device><address>, not a nested <gui>.
        .init("device-address-first.xml", "127.0.0.1:8385", "the-gui-key"),
        .init("cdata-and-escapes.xml", "127.0.0.1:8384", "ab<cd&e"),
        // Broken or hostile documents.
        .init("malformed.xml", .malformed(.notXML)),
        .init("truncated.xml", .malformed(.notXML)),
        .init("undeclared-entity.xml", .malformed(.notXML)),
        .init("wrong-root.xml", .malformed(.notSyncthingConfig)),
        .init("tls-invalid.xml", .malformed(.invalidBoolean)),
        .init("not-xml.txt", .malformed(.encoding)),
        .init("xxe.xml", .malformed(.doctype)),
        .init("xxe-parameter.xml", .malformed(.doctype)),
        .init("external-dtd.xml", .malformed(.doctype)),
        .init("billion-laughs.xml", .malformed(.doctype)),
    ]

    @Test(arguments: cases)
    func parsesFixture(_ c: ConfigFileCase) throws {
        let bytes = try ConfigFixture.bytes(c.fixture)
        let parsed = Result { () throws(ConfigFileError) in try SyncthingConfigFile.parse(bytes) }
        #expect(parsed == c.expected)
    }

    @Test(arguments: cases)
    func loadsFixtureFromDisk(_ c: ConfigFileCase) {
        let loaded = Result { () throws(ConfigFileError) in
            try SyncthingConfigFile.load(path: ConfigFixture.path(c.fixture))
        }
        #expect(loaded == c.expected)
    }

    /// The real Syncthing files mapped all the way to an endpoint, as the sidecar would use them.
    @Test func standardFixtureMapsToLoopbackEndpoint() throws {
        let gui = try SyncthingConfigFile.parse(ConfigFixture.bytes("standard-stlab.xml"))
        let address = try #require(gui.address)
        let endpoint = try #require(SyncthingEndpoint.fromGUIAddress(address, tls: gui.tls))
        #expect(endpoint == SyncthingEndpoint(baseURLs: ["http://127.0.0.1:18384"], tls: false))
    }

    @Test func xxeTargetIsNeverRead() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let secret = try dir.write("secret.txt", "ZZSECRETFILEZZ")
        let xml = """
            <!DOCTYPE configuration [<!ENTITY x SYSTEM "file://\(secret)">]>
            <configuration><gui tls="false"><address>127.0.0.1:8384</address><apikey>&x;</apikey></gui></configuration>
            """
        let result = Result { () throws(ConfigFileError) in try SyncthingConfigFile.parse(Array(xml.utf8)) }
        #expect(result == .failure(.malformed(.doctype)))
        #expect(!"\(result)".contains("ZZSECRETFILEZZ"))
    }

    @Test func doctypeIsRefusedEvenWithoutEntities() {
        let xml = "<!DOCTYPE configuration><configuration><gui><apikey>k</apikey></gui></configuration>"
        #expect(throws: ConfigFileError.malformed(.doctype)) { try SyncthingConfigFile.parse(Array(xml.utf8)) }
    }

    @Test(arguments: [
        ("", Result<SyncthingGUIConfig, ConfigFileError>.failure(.malformed(.notXML))),
        ("   \n", .failure(.malformed(.notXML))),
        // U+FEFF as text is fine: its UTF-8 form is the byte-order mark, which is skipped.
        (
            "\u{FEFF}<configuration><gui><apikey>k</apikey></gui></configuration>",
            .success(SyncthingGUIConfig(address: nil, apiKey: "k", tls: false))
        ),
    ])
    func emptyAndWhitespaceDocuments(_ text: String, _ expected: Result<SyncthingGUIConfig, ConfigFileError>) {
        let result = Result { () throws(ConfigFileError) in try SyncthingConfigFile.parse(Array(text.utf8)) }
        #expect(result == expected)
    }

    @Test func utf16DocumentIsRefusedBeforeLibXML2() {
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in "<configuration><gui><apikey>k</apikey></gui></configuration>".utf16 {
            bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        #expect(throws: ConfigFileError.malformed(.encoding)) { try SyncthingConfigFile.parse(bytes) }
    }

    @Test func declaredEncodingIsIgnored() throws {
        let xml =
            "<?xml version=\"1.0\" encoding=\"UTF-7\"?><configuration><gui><apikey>k+-1</apikey></gui></configuration>"
        #expect(try SyncthingConfigFile.parse(Array(xml.utf8)).apiKey == "k+-1")
    }

    @Test func bytesOverTheBoundAreRefusedUnparsed() {
        let bytes = [UInt8](repeating: UInt8(ascii: " "), count: SyncthingConfigFile.maxBytes + 1)
        #expect(throws: ConfigFileError.tooLarge(limitBytes: 16 << 20)) { try SyncthingConfigFile.parse(bytes) }
    }

    @Test func hugeFileOverTheBoundIsRefusedWithoutReading() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("config.xml", "<configuration>")
        #expect(truncate(path, off_t(SyncthingConfigFile.maxBytes + 1)) == 0)  // sparse
        #expect(throws: ConfigFileError.tooLarge(limitBytes: SyncthingConfigFile.maxBytes)) {
            try SyncthingConfigFile.load(path: path)
        }
    }

    @Test func fileExactlyAtTheBoundIsRead() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let head = "<configuration><gui tls=\"true\"><apikey>big</apikey></gui>"
        let tail = "</configuration>"
        // Many small elements: without XML_PARSE_HUGE (kept off on purpose) libxml2 2.9 refuses a text node over
        // 10 MB and some long constructs past the 10 MB mark ("Huge input lookup"); a real config.xml is neither.
        let filler = "<folder id=\"f\"/>\n"
        let room = SyncthingConfigFile.maxBytes - head.utf8.count - tail.utf8.count
        let padding =
            String(repeating: filler, count: room / filler.utf8.count)
            + String(repeating: " ", count: room % filler.utf8.count)
        let path = try dir.write("config.xml", head + padding + tail)
        #expect(try SyncthingConfigFile.load(path: path) == SyncthingGUIConfig(address: nil, apiKey: "big", tls: true))
    }

    @Test func missingPathsAreNotFound() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = try dir.write("file", "x")
        #expect(throws: ConfigFileError.notFound) { try SyncthingConfigFile.load(path: dir.file("nope.xml")) }
        #expect(throws: ConfigFileError.notFound) { try SyncthingConfigFile.load(path: file + "/config.xml") }
    }

    @Test func directoryAndFIFOAreNotRegularFiles() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(throws: ConfigFileError.notRegularFile) { try SyncthingConfigFile.load(path: dir.path) }
        let fifo = dir.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // O_NONBLOCK: opening a FIFO with no writer must not hang.
        #expect(throws: ConfigFileError.notRegularFile) { try SyncthingConfigFile.load(path: fifo) }
    }

    @Test(.enabled(if: canTestForeignOwnership, "needs root with CAP_SETUID/CAP_CHOWN"))
    func fileOwnedByAnotherUIDIsUnreadableWithItsOwner() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write(
            "config.xml", "<configuration><gui><apikey>k</apikey></gui></configuration>", mode: 0o600)
        #expect(chown(path, 4242, 4343) == 0)
        chmod(dir.path, 0o755)

        // Root reads anything…
        #expect(try SyncthingConfigFile.load(path: path).apiKey == "k")
        // …another uid does not, and learns who owns the file.
        let result = withFilesystemIdentity(uid: 5151, gid: 5151) {
            Result { () throws(ConfigFileError) in try SyncthingConfigFile.load(path: path) }
        }
        let expected = ConfigFileError.unreadable(permissions: 0o600, ownerUID: 4242, ownerGID: 4343)
        #expect(result == .failure(expected))
        #expect(
            expected.message
                == "Syncthing's config.xml cannot be read by this process (owner uid:gid 4242:4343, mode 0600)")
        #expect(expected.code == .configUnreadable)
        #expect(expected.message.contains("4242:4343"))
        #expect(expected.fix.contains("docker run --user 4242:4343"))
        #expect(expected.fix.contains("`setpriv --reuid=4242 --regid=4343 --clear-groups vaultsync-notify --doctor`"))
        #expect(!expected.fix.contains("sudo"))
        // A named owner gets runuser (util-linux), which needs the name; setpriv is for a bare uid.
        let named = ConfigFileError.runAsOwnerFix(uid: 4242, gid: 4343, userName: "syncthing")
        #expect(named.contains("as root `runuser -u syncthing -- vaultsync-notify --doctor`"))
        #expect(named.contains("`User=syncthing`") && !named.contains("setpriv") && !named.contains("sudo"))
        #expect(expected.fix.contains("User="))
    }

    @Test(.enabled(if: canTestForeignOwnership, "needs root with CAP_SETUID/CAP_CHOWN"))
    func fileInUnsearchableDirectoryReportsTheDirectoryOwner() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("home/config.xml", "<configuration><gui/></configuration>")
        #expect(chown(dir.file("home"), 1000, 1000) == 0)
        #expect(chmod(dir.file("home"), 0o700) == 0)
        chmod(dir.path, 0o755)
        let result = withFilesystemIdentity(uid: 5151, gid: 5151) {
            Result { () throws(ConfigFileError) in try SyncthingConfigFile.load(path: path) }
        }
        let expected = ConfigFileError.unreadable(permissions: 0o700, ownerUID: 1000, ownerGID: 1000, directory: true)
        #expect(result == .failure(expected))
        // The line says that a directory blocks it, and gives that directory's mode.
        #expect(
            expected.message
                == "Syncthing's config.xml cannot be reached by this process: a directory on its path cannot be "
                + "searched (directory owner uid:gid 1000:1000, mode 0700)")
    }

    @Test func errorTextsNeverCarryKeyOrContent() throws {
        var errors: [ConfigFileError] = [
            .notFound, .notRegularFile, .tooLarge(limitBytes: 16 << 20), .noGUIElement,
            .unreadable(permissions: 0o600, ownerUID: 1000, ownerGID: 1000),
            .unreadable(permissions: nil, ownerUID: nil, ownerGID: nil),
            .unreadable(permissions: 0o700, ownerUID: 1000, ownerGID: 1000, directory: true),
        ]
        errors += ConfigFileError.MalformedReason.allCases.map { .malformed($0) }
        for name in ["malformed.xml", "truncated.xml", "xxe.xml"] {
            let bytes = try ConfigFixture.bytes(name)
            do throws(ConfigFileError) {
                _ = try SyncthingConfigFile.parse(bytes)
            } catch {
                errors.append(error)
            }
        }
        for error in errors {
            for text in [error.message, error.fix, "\(error)"] {
                #expect(!text.contains("ZZLEAKZZ"))
                #expect(!text.contains("VkLYDweg3b4qSu4oFZTxTNFtnKiXyaSg"))
                #expect(!text.contains("/etc/passwd"))
                #expect(!text.isEmpty)
            }
        }
    }

    @Test func guiConfigDescriptionRedactsTheKey() {
        let gui = SyncthingGUIConfig(address: "127.0.0.1:8384", apiKey: "ZZKEYZZ", tls: false)
        #expect(!gui.description.contains("ZZKEYZZ"))
        #expect(!String(reflecting: gui).contains("ZZKEYZZ"))
        var dumped = ""
        dump(gui, to: &dumped)
        #expect(!dumped.contains("ZZKEYZZ"))
    }

    /// libxml2's default handlers print the failing line of the document to stderr; that line can hold the API key.
    @Test func parserErrorsDoNotReachStderr() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let capture = open(dir.file("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(capture >= 0)
        fflush(nil)
        let saved = dup(STDERR_FILENO)
        dup2(capture, STDERR_FILENO)
        // Restore libxml2's printing defaults on this thread first, so that parse() has to silence them itself.
        xmlSetGenericErrorFunc(nil, nil)
        xmlSetStructuredErrorFunc(nil, nil)
        for name in ["malformed.xml", "truncated.xml", "undeclared-entity.xml"] {
            _ = try? SyncthingConfigFile.parse(ConfigFixture.bytes(name))
        }
        fflush(nil)
        dup2(saved, STDERR_FILENO)
        close(saved)
        close(capture)
        let written = try String(contentsOfFile: dir.file("stderr"), encoding: .utf8)
        #expect(!written.contains("ZZLEAKZZ"))
        #expect(!written.contains("VkLYDweg3b4qSu4oFZTxTNFtnKiXyaSg"))
        #expect(!written.contains("parser error"))
    }
}

@Suite("Container detection and the config.xml-not-found advice")
struct ContainerAdviceTests {
    @Test("a marker file or a container cgroup means a container; a plain host's cgroups do not")
    func detect() {
        func exists(_ paths: Set<String>) -> (String) -> Bool { { paths.contains($0) } }
        #expect(Container.detect(exists: exists(["/.dockerenv"]), cgroup: "0::/\n"))
        #expect(Container.detect(exists: exists(["/run/.containerenv"]), cgroup: nil))
        #expect(Container.detect(exists: exists([]), cgroup: "12:pids:/docker/0123abcd\n"))
        #expect(Container.detect(exists: exists([]), cgroup: "0::/system.slice/docker-0123abcd.scope\n"))
        #expect(Container.detect(exists: exists([]), cgroup: "0::/kubepods/besteffort/pod1/0123\n"))
        #expect(!Container.detect(exists: exists([]), cgroup: "0::/\n"))
        #expect(!Container.detect(exists: exists([]), cgroup: "0::/system.slice/docker.service\n"))
        #expect(!Container.detect(exists: exists([]), cgroup: "0::/user.slice/user-1000.slice/session-2.scope\n"))
        #expect(!Container.detect(exists: exists([]), cgroup: nil))
    }

    @Test("not found: mount advice in a container, user advice on a plain host")
    func notFoundFix() {
        let container = ConfigFileError.notFoundFix(inContainer: true)
        let host = ConfigFileError.notFoundFix(inContainer: false)
        #expect(container.contains("into this container"))
        #expect(!host.contains("container"))
        #expect(host.contains("as the user Syncthing runs as"))
        for fix in [container, host] { #expect(fix.contains("SYNCTHING_CONFIG") && fix.contains("serve --paths")) }
        #expect(ConfigFileError.notFound.fix == ConfigFileError.notFoundFix(inContainer: Container.current))
    }
}
