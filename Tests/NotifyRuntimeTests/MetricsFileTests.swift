import Foundation
import NotifyCore
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// METRICS_FILE's place, looked at on the real file system as the service's start and `--check-config` do.
@Suite("METRICS_FILE: the place of the file, checked at start")
struct MetricsFileTests {
    static func checkConfig(metricsFile: String) -> App.CheckResult {
        let env = [
            "RELAY_URL": "https://relay.vaultsync.eu", "SYNCTHING_API_URL": "http://127.0.0.1:8384",
            "SYNCTHING_API_KEY": "k3y", "METRICS_FILE": metricsFile, "HOME": "/nonexistent",
        ]
        return App.checkConfig(environment: env, fileSystem: FakeConfigFileSystem())
    }

    @Test("a file in a writable directory passes, and the probe leaves nothing behind")
    func writableDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(MetricsFile.place(of: dir.file("m.prom")) == MetricsFilePlace(directory: .exists, creation: .succeeded))
        #expect(Self.checkConfig(metricsFile: dir.file("m.prom")).status == .ok)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        #expect(MetricsFile.place(of: "/m.prom").directory == .exists, "a file in /")
    }

    @Test("a device, a pipe or a link as the file: 78 and the fix; nothing is renamed over it; a regular file passes")
    func notARegularFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(mkfifo(dir.file("pipe.prom"), 0o600) == 0)
        #expect(symlink(dir.file("elsewhere.prom"), dir.file("link.prom")) == 0)
        for path in ["/dev/null", dir.file("pipe.prom"), dir.file("link.prom")] {
            #expect(MetricsFile.place(of: path).problem == .notARegularFile, "\(path)")
            let result = Self.checkConfig(metricsFile: path)
            #expect(result.status == .configuration, "\(path)")
            #expect(result.stderr?.contains("not a regular file") == true, "\(result.stderr ?? "")")
        }
        var st = stat()
        #expect(stat("/dev/null", &st) == 0 && (st.st_mode & S_IFMT) == S_IFCHR, "still the device")
        try dir.write("old.prom", "# an earlier run's file\n")
        #expect(MetricsFile.place(of: dir.file("old.prom")).problem == nil)
    }

    @Test("a missing directory, a directory as the file, a file as the directory: 78 and the fix")
    func refusedPlaces() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("plain", "")
        let cases: [(String, MetricsFilePlace, String)] = [
            (dir.file("missing/m.prom"), MetricsFilePlace(directory: .missing), "in a directory that does not exist"),
            (dir.file("missing/deeper/m.prom"), MetricsFilePlace(directory: .missing), "does not exist"),
            (dir.path, MetricsFilePlace(directory: .exists, isDirectory: true), "names a directory, not a file"),
            (dir.path + "/", MetricsFilePlace(directory: .exists, isDirectory: true), "names a directory"),
            (dir.file("plain/m.prom"), MetricsFilePlace(directory: .notADirectory), "below something that is not"),
        ]
        for (path, place, phrase) in cases {
            #expect(MetricsFile.place(of: path) == place, "\(path)")
            let result = Self.checkConfig(metricsFile: path)
            #expect(result.status == .configuration, "\(path)")
            let text = result.stderr ?? ""
            #expect(text.hasPrefix("vaultsync-notify: METRICS_FILE: "), "\(text)")
            #expect(text.contains(phrase), "\(text)")
            #expect(text.contains("\n  fix: "), "\(text)")
            #expect(!text.contains(dir.path), "no path in the lines: \(text)")
        }
    }

    @Test("a directory this user cannot write is refused")
    func unwritableDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let locked = dir.file("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        chmod(dir.path, 0o755)
        chmod(locked, 0o755)
        let place = withFilesystemIdentity(uid: 4242, gid: 4343) { MetricsFile.place(of: locked + "/m.prom") }
        guard let place else { return }  // not root: nothing to switch to
        #expect(place == MetricsFilePlace(directory: .exists, creation: .denied))
    }

    @Test("a read-only file system's refusal names ReadWritePaths=, among every other invalid variable")
    func readOnlyAmongOthers() {
        let env = ["RELAY_URL": "https://relay.vaultsync.eu", "METRICS_FILE": "/var/lib/m.prom", "LOG_LEVEL": "loud"]
        let result = App.checkEnvironment(
            env, fileSystem: FakeTrustFileSystem(),
            metricsPlace: { _ in MetricsFilePlace(directory: .exists, creation: .readOnlyFileSystem) })
        guard case .failure(let found) = result else {
            Issue.record("accepted")
            return
        }
        #expect(found.problems.map(\.message).map { $0.prefix(13) } == ["LOG_LEVEL: is", "METRICS_FILE:"])
        #expect(found.text.contains("ReadWritePaths="))
    }
}
