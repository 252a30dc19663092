import Foundation
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

/// install/notify.sh writes the config.xml search order out a second time (its `candidates`); these tests hold it to
/// `ConfigLocator`'s. The installer is run from the outside, as a user runs it: `--dry-run --mode binary` on a fake
/// root (VAULTSYNC_NOTIFY_ROOT) with a stub `uname` (the platform) and `docker` (so that no engine is asked) first on
/// PATH. On an empty root it fails with its whole list ("Searched, in this order:"), which must equal
/// `ConfigLocator.candidates`; with config.xml present it prints the one it chose ("found Syncthing config: …"),
/// which must be the one `ConfigLocator.probe` finds there. VAULTSYNC_NOTIFY_BINARY names no file, so a run that
/// gets past the search stops there, before any download. Equal lists and the same first-existing-file rule make
/// the same choice for every set of present candidates; the found cases check that rule on real files.
///
/// The installer runs with no SUDO_USER/DOAS_USER here: run through sudo as root it also searches the invoking
/// user's home (install/tests/run covers that), which the binary, running as the config owner, never needs.
/// Without an absolute HOME the binary also asks /etc/passwd for a home; the installer does not, so `home` is given
/// here as the binary computes it with no passwd entry.
@Suite struct InstallerConfigOrderTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("install/notify.sh").path

    struct Case: Sendable, CustomTestStringConvertible {
        var environment: [String: String]
        var isMacOS: Bool
        var testDescription: String {
            let vars = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "\(isMacOS ? "macOS" : "Linux") \(vars.isEmpty ? "(nothing set)" : vars)"
        }
    }

    /// Every value kind, in every variable: row i sets the n-th variable to `kinds[(i + n) % kinds.count]`, so each
    /// kind meets each variable once. nil: unset. Kinds that repeat another candidate check the removal of
    /// duplicates.
    static let kinds: [String?] = [
        nil, "", "/srv/a", "/srv/b/", "relative", "~/st", "~", "/", "/var/syncthing/config", "~/.config",
        "/home/u/.local/state",
    ]
    static let variables = ["STCONFDIR", "STHOMEDIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME"]

    static let orderCases: [Case] = {
        var cases: [Case] = []
        for isMacOS in [false, true] {
            for row in kinds.indices {
                var environment = ["HOME": "/home/u"]
                for (n, name) in variables.enumerated() {
                    if let value = kinds[(row + n) % kinds.count] { environment[name] = value }
                }
                cases.append(Case(environment: environment, isMacOS: isMacOS))
            }
            for home in [nil, "/home/u/", "/", "relative"] as [String?] {
                var environment = ["STHOMEDIR": "~/st", "XDG_STATE_HOME": "/srv/state"]
                environment["HOME"] = home
                cases.append(Case(environment: environment, isMacOS: isMacOS))
            }
            cases.append(Case(environment: [:], isMacOS: isMacOS))
            for explicit in ["/data/st", "/data/st/config.xml"] {
                let environment = ["SYNCTHING_CONFIG": explicit, "STHOMEDIR": "/srv/a", "HOME": "/home/u"]
                cases.append(Case(environment: environment, isMacOS: isMacOS))
            }
        }
        return cases
    }()

    @Test(arguments: orderCases)
    func theInstallerSearchesInTheBinarysOrder(_ c: Case) throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let run = try Self.runInstaller(root: root, environment: c.environment, isMacOS: c.isMacOS)
        #expect(run.status == 1, "no config.xml in an empty root: \(run.output)")
        #expect(run.searched == Self.binaryCandidates(c.environment, isMacOS: c.isMacOS), "\(run.output)")
    }

    /// The full Linux list with every variable set; config.xml at candidate k and at every one after it, and before
    /// it only empty directories: both choose k.
    static let foundEnvironment = [
        "HOME": "/home/u", "STCONFDIR": "/srv/conf", "STHOMEDIR": "~/st", "XDG_CONFIG_HOME": "/srv/xdg-config",
        "XDG_STATE_HOME": "/srv/xdg-state",
    ]

    @Test(arguments: binaryCandidates(foundEnvironment, isMacOS: false).indices)
    func theInstallerChoosesTheConfigTheBinaryFinds(_ k: Int) throws {
        let candidates = Self.binaryCandidates(Self.foundEnvironment, isMacOS: false)
        let root = try TemporaryDirectory()
        defer { root.remove() }
        for (index, candidate) in candidates.enumerated() {
            let relative = String(candidate.dropFirst())
            if index >= k {
                try root.write(relative, "<configuration/>", mode: 0o644)
            } else {
                try FileManager.default.createDirectory(
                    atPath: root.file((relative as NSString).deletingLastPathComponent),
                    withIntermediateDirectories: true)
            }
        }
        let found = ConfigLocator.probe(candidates.map { root.path + $0 }, fileSystem: SystemFileSystem())
        #expect(found == .found(ConfigFileLocation(path: root.path + candidates[k])))
        let run = try Self.runInstaller(root: root, environment: Self.foundEnvironment, isMacOS: false)
        #expect(run.found == candidates[k], "\(run.output)")
    }

    static func binaryCandidates(_ environment: [String: String], isMacOS: Bool) -> [String] {
        let home = ConfigLocator.homeDirectory(environment: environment, passwdEntry: { _ in nil })
        return ConfigLocator.candidates(environment: environment, home: home, isMacOS: isMacOS)
    }

    struct Run {
        var status: Int32
        var output: String
        /// The list after "Searched, in this order:".
        var searched: [String] {
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.firstIndex(where: { $0.hasSuffix("Searched, in this order:") }) else { return [] }
            return lines[(start + 1)...].prefix { $0.hasPrefix("  ") }.map { String($0.dropFirst(2)) }
        }
        /// The path of "found Syncthing config: PATH (owner uid:gid …)".
        var found: String? {
            let prefix = "found Syncthing config: "
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
                let end = line.range(of: " (owner uid:gid ")
            else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: prefix.count)..<end.lowerBound])
        }
    }

    static func runInstaller(root: TemporaryDirectory, environment: [String: String], isMacOS: Bool) throws -> Run {
        let stubs = try TemporaryDirectory()
        defer { stubs.remove() }
        let (os, machine) = isMacOS ? ("Darwin", "arm64") : ("Linux", "x86_64")
        try stubs.write(
            "uname", "#!/bin/sh\ncase $1 in -m) echo \(machine) ;; *) echo \(os) ;; esac\n", mode: 0o755)
        try stubs.write("docker", "#!/bin/sh\nexit 1\n", mode: 0o755)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [script, "--dry-run", "--mode", "binary"]
        process.environment = environment.merging([
            "PATH": stubs.path + ":/usr/bin:/bin", "TMPDIR": stubs.path, "VAULTSYNC_NOTIFY_ROOT": root.path,
            "VAULTSYNC_NOTIFY_BINARY": root.file("no-binary"),
        ]) { _, fixed in fixed }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
