import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

#if canImport(Glibc)
    import Glibc
#endif

private let mine = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o600)
private let theirs = FileInfo(ownerUID: 1001, ownerGID: 1002, permissions: 0o600)
private let theirDir = FileInfo(ownerUID: 1001, ownerGID: 1002, permissions: 0o700)

/// The image-, package- and NAS-specific tail of every search without SYNCTHING_CONFIG.
private let fixedTail = [
    "/var/syncthing/config/config.xml",
    "/config/config.xml",
    "/var/packages/syncthing/var/config.xml",
    "/volume1/@appdata/syncthing/config.xml",
    "/var/packages/syncthing/target/var/config.xml",
    "/share/CACHEDEV1_DATA/.qpkg/Syncthing/.config/syncthing/config.xml",
    "/mnt/user/appdata/syncthing/config.xml",
    "/mnt/user/appdata/syncthing/config/config.xml",
    "/mnt/.ix-apps/app_mounts/syncthing/config/config/config.xml",
]

@Suite struct ConfigLocatorTests {
    // MARK: Candidate order (pure)

    @Test func fullSearchOrder() {
        let env = [
            "STCONFDIR": "/etc/st-conf", "STHOMEDIR": "/srv/st-home/", "XDG_CONFIG_HOME": "/home/u/.cfg",
            "XDG_STATE_HOME": "/home/u/.st",
        ]
        let list = ConfigLocator.candidates(environment: env, home: "/home/u", isMacOS: false)
        #expect(
            list
                == [
                    "/etc/st-conf/config.xml", "/srv/st-home/config.xml", "/home/u/.cfg/syncthing/config.xml",
                    "/home/u/.config/syncthing/config.xml", "/home/u/.st/syncthing/config.xml",
                    "/home/u/.local/state/syncthing/config.xml",
                ] + fixedTail)
    }

    @Test func plainLinuxHome() {
        let list = ConfigLocator.candidates(environment: [:], home: "/home/u", isMacOS: false)
        #expect(
            list
                == ["/home/u/.config/syncthing/config.xml", "/home/u/.local/state/syncthing/config.xml"] + fixedTail)
    }

    @Test func macOSAddsApplicationSupportAfterXDGPaths() {
        let list = ConfigLocator.candidates(environment: [:], home: "/Users/u", isMacOS: true)
        #expect(list[2] == "/Users/u/Library/Application Support/Syncthing/config.xml")
        #expect(!ConfigLocator.candidates(environment: [:], home: "/Users/u", isMacOS: false).contains(list[2]))
    }

    @Test func explicitConfigIsTheOnlyCandidate() {
        let env = ["SYNCTHING_CONFIG": "/data/st", "STHOMEDIR": "/var/syncthing/config"]
        #expect(ConfigLocator.candidates(environment: env, home: "/root", isMacOS: false) == ["/data/st"])
    }

    @Test func emptyAndRelativeValuesAreIgnoredAndTildeIsExpanded() {
        let env = [
            "SYNCTHING_CONFIG": "", "STCONFDIR": "relative/dir", "STHOMEDIR": "~/st", "XDG_CONFIG_HOME": "",
            "XDG_STATE_HOME": "state",
        ]
        let list = ConfigLocator.candidates(environment: env, home: "/home/u", isMacOS: false)
        #expect(list.first == "/home/u/st/config.xml")
        #expect(!list.contains { !$0.hasPrefix("/") })
    }

    @Test func noHomeSkipsHomeRelativeCandidates() {
        #expect(ConfigLocator.candidates(environment: [:], home: nil, isMacOS: true) == fixedTail)
        #expect(ConfigLocator.candidates(environment: [:], home: "relative", isMacOS: false) == fixedTail)
    }

    @Test func duplicatesAreRemoved() {
        // The official image sets STHOMEDIR to the path that is also in the fixed list.
        let list = ConfigLocator.candidates(
            environment: ["STHOMEDIR": "/var/syncthing/config"], home: nil, isMacOS: false)
        #expect(list == fixedTail)
        #expect(Set(list).count == list.count)
    }

    @Test func rootHomeIsJoinedCleanly() {
        let list = ConfigLocator.candidates(environment: ["HOME": "/"], home: "/", isMacOS: false)
        #expect(list.first == "/.config/syncthing/config.xml")
    }

    // MARK: Probe (fake filesystem)

    @Test func firstReadableCandidateWins() {
        let fs = FakeConfigFileSystem()
        fs.add("/a/config.xml", .file(mine, readable: true))
        fs.add("/b/config.xml", .file(mine, readable: true))
        #expect(
            ConfigLocator.probe(["/a/config.xml", "/b/config.xml"], fileSystem: fs)
                == .found(.init(path: "/a/config.xml")))
    }

    @Test func probingGoesOnPastAnUnreadableFile() {
        let fs = FakeConfigFileSystem()
        fs.add("/a/config.xml", .file(theirs, readable: false))
        fs.add("/b/config.xml", .file(mine, readable: true))
        #expect(
            ConfigLocator.probe(["/a/config.xml", "/b/config.xml"], fileSystem: fs)
                == .found(.init(path: "/b/config.xml")))
    }

    @Test func onlyUnreadableFilesReportTheFirstOwner() throws {
        let fs = FakeConfigFileSystem()
        fs.add("/a/config.xml", .file(theirs, readable: false))
        fs.add("/b/config.xml", .file(mine, readable: false))
        let result = ConfigLocator.probe(["/x/config.xml", "/a/config.xml", "/b/config.xml"], fileSystem: fs)
        guard case .unreadable(let blocked) = result else {
            Issue.record("expected unreadable, got \(result)")
            return
        }
        #expect(blocked == BlockedConfig(path: "/a/config.xml", isDirectory: false, info: theirs))
        #expect(blocked.message.contains("uid:gid 1001:1002"))
        #expect(blocked.message.contains("mode 0600"))
        #expect(!blocked.message.contains("/a/"))
        #expect(blocked.fix.contains("docker run --user 1001:1002"))
        #expect(blocked.fix.contains("User="))
        #expect(blocked.fix.contains("setpriv --reuid=1001 --regid=1002 --clear-groups"))
        #expect(blocked.error == .unreadable(permissions: 0o600, ownerUID: 1001, ownerGID: 1002))
        #expect(!blocked.message.contains("(user"))
    }

    @Test func theOwnersNameFromPasswdIsShownWhenThereIsOne() throws {
        let fs = FakeConfigFileSystem()
        fs.userNames = [1001: "syncthing"]
        fs.add("/a/config.xml", .file(theirs, readable: false))
        guard case .unreadable(let blocked) = ConfigLocator.probe(["/a/config.xml"], fileSystem: fs) else {
            Issue.record("expected unreadable")
            return
        }
        #expect(blocked.ownerName == "syncthing")
        #expect(blocked.message.contains("uid:gid 1001:1002 (user syncthing) with mode 0600"))
        #expect(blocked.fix.contains("systemd `User=syncthing`"))
        #expect(blocked.fix.contains("docker run --user 1001:1002"))
    }

    @Test func unsearchableConfigDirectoryIsReportedWithItsOwner() {
        // Syncthing makes its config directory 0700: another uid cannot even see config.xml.
        let fs = FakeConfigFileSystem()
        fs.add("/var/syncthing/config", .directory(theirDir, searchable: false))
        let result = ConfigLocator.probe(fixedTail, fileSystem: fs)
        #expect(result == .unreadable(BlockedConfig(path: "/var/syncthing/config", isDirectory: true, info: theirDir)))
    }

    @Test func unreadableFileIsPreferredOverUnsearchableDirectory() {
        let fs = FakeConfigFileSystem()
        fs.add("/var/syncthing/config", .directory(theirDir, searchable: false))
        fs.add("/config/config.xml", .file(theirs, readable: false))
        let result = ConfigLocator.probe(fixedTail, fileSystem: fs)
        #expect(result == .unreadable(BlockedConfig(path: "/config/config.xml", isDirectory: false, info: theirs)))
    }

    @Test func unsearchableAncestorFurtherUpIsNotBlamed() {
        // Another user's home (0700) hides ~/.config/syncthing: most likely unrelated to Syncthing.
        let fs = FakeConfigFileSystem()
        fs.add("/home", .directory(FileInfo(ownerUID: 0, ownerGID: 0, permissions: 0o755), searchable: true))
        fs.add("/home/u", .directory(theirDir, searchable: false))
        let candidates = ConfigLocator.candidates(environment: [:], home: "/home/u", isMacOS: false)
        #expect(ConfigLocator.probe(candidates, fileSystem: fs) == .notFound(searched: candidates))
    }

    @Test func directoryCandidateStandsForItsConfigXML() {
        let fs = FakeConfigFileSystem()
        fs.add("/data/st", .directory(mine, searchable: true))
        fs.add("/data/st/config.xml", .file(mine, readable: true))
        #expect(ConfigLocator.probe(["/data/st"], fileSystem: fs) == .found(.init(path: "/data/st/config.xml")))
        // An explicit, unsearchable directory is reported as such.
        let blocked = FakeConfigFileSystem()
        blocked.add("/data/st", .directory(theirDir, searchable: false))
        #expect(
            ConfigLocator.probe(["/data/st"], fileSystem: blocked)
                == .unreadable(BlockedConfig(path: "/data/st", isDirectory: true, info: theirDir)))
    }

    @Test func nonRegularFilesAreSkipped() {
        let fs = FakeConfigFileSystem()
        fs.add("/a/config.xml", .other(mine))
        fs.add("/b/config.xml", .directory(mine, searchable: true))
        #expect(
            ConfigLocator.probe(["/a/config.xml", "/b/config.xml"], fileSystem: fs)
                == .notFound(searched: ["/a/config.xml", "/b/config.xml"]))
    }

    @Test func locationExposesConfigDirectoryAndCertificate() {
        let location = ConfigFileLocation(path: "/var/syncthing/config/config.xml")
        #expect(location.directory == "/var/syncthing/config")
        #expect(location.httpsCertificatePath == "/var/syncthing/config/https-cert.pem")
        #expect(ConfigFileLocation(path: "/config.xml").httpsCertificatePath == "/https-cert.pem")
    }

    // MARK: Waiting (fake clock)

    @Test func waitsUntilConfigAppears() {
        let fs = FakeConfigFileSystem()
        let clock = ManualRuntime()
        _ = clock.schedule(at: clock.now() + .seconds(3), alsoOnWallClock: false) {
            fs.add("/config/config.xml", .file(mine, readable: true))
        }
        let sink = RecordingLogSink()
        let result = ConfigLocator.locate(
            candidates: ["/config/config.xml"], fileSystem: fs, wait: .seconds(60), clock: clock,
            logger: Logger(sink: sink))
        #expect(result == .found(.init(path: "/config/config.xml")))
        #expect(clock.sleeps == [.seconds(1), .seconds(1), .seconds(1)])
        #expect(sink.records == [LogRecord(.info, .configWaiting, [.duration(.seconds(60))])])
    }

    @Test func givesUpAfterTheWait() {
        let fs = FakeConfigFileSystem()
        let clock = ManualRuntime()
        let result = ConfigLocator.locate(
            candidates: ["/config/config.xml"], fileSystem: fs, wait: .seconds(5), pollInterval: .seconds(2),
            clock: clock)
        #expect(result == .notFound(searched: ["/config/config.xml"]))
        #expect(clock.sleeps == [.seconds(2), .seconds(2), .seconds(1)])
        #expect(clock.now() == ServiceRig.t0 + .seconds(5))
    }

    @Test func zeroWaitProbesOnceWithoutSleeping() {
        let fs = FakeConfigFileSystem()
        let clock = ManualRuntime()
        let sink = RecordingLogSink()
        let result = ConfigLocator.locate(
            candidates: ["/config/config.xml"], fileSystem: fs, wait: .zero, clock: clock, logger: Logger(sink: sink))
        #expect(result == .notFound(searched: ["/config/config.xml"]))
        #expect(clock.sleeps.isEmpty)
        #expect(sink.records.isEmpty)
        #expect(fs.statusCalls == ["/config/config.xml"])
    }

    @Test func unreadableFileEndsTheWaitAtOnce() {
        let fs = FakeConfigFileSystem()
        fs.add("/config/config.xml", .file(theirs, readable: false))
        let clock = ManualRuntime()
        let result = ConfigLocator.locate(
            candidates: ["/config/config.xml"], fileSystem: fs, wait: .seconds(60), clock: clock)
        #expect(result == .unreadable(BlockedConfig(path: "/config/config.xml", isDirectory: false, info: theirs)))
        #expect(clock.sleeps.isEmpty)
    }

    /// EACCES is not "not yet there"; a directory that blocks config.xml ends the wait at once too.
    @Test func unsearchableDirectoryEndsTheWaitAtOnce() {
        let fs = FakeConfigFileSystem()
        fs.add("/var/syncthing/config", .directory(theirDir, searchable: false))
        let clock = ManualRuntime()
        let result = ConfigLocator.locate(
            candidates: ["/var/syncthing/config/config.xml"], fileSystem: fs, wait: .seconds(60), clock: clock)
        #expect(result == .unreadable(BlockedConfig(path: "/var/syncthing/config", isDirectory: true, info: theirDir)))
        #expect(clock.sleeps.isEmpty)
        guard case .unreadable(let blocked) = result else { return }
        #expect(blocked.error == .unreadable(permissions: 0o700, ownerUID: 1001, ownerGID: 1002, directory: true))
        #expect(blocked.message.contains("config directory exists but cannot be searched"))
        #expect(blocked.message.contains("mode 0700"))
    }

    @Test func anUnsearchableAncestorOfSYNCTHING_CONFIGIsBlamedAtOnce() {
        // Searching, another user's home is most likely unrelated; named in SYNCTHING_CONFIG, it is what blocks.
        let fs = FakeConfigFileSystem()
        fs.add("/home", .directory(FileInfo(ownerUID: 0, ownerGID: 0, permissions: 0o755), searchable: true))
        fs.add("/home/u", .directory(theirDir, searchable: false))
        let path = "/home/u/.local/state/syncthing/config.xml"
        #expect(ConfigLocator.probe([path], fileSystem: fs) == .notFound(searched: [path]))
        let clock = ManualRuntime()
        let result = ConfigLocator.locate(
            candidates: [path], fileSystem: fs, explicit: true, wait: .seconds(60), clock: clock)
        #expect(result == .unreadable(BlockedConfig(path: "/home/u", isDirectory: true, info: theirDir)))
        #expect(clock.sleeps.isEmpty)
    }

    // MARK: SYNCTHING_CONFIG that gave nothing

    static let explicitCases: [(String, [(String, FakeConfigFileSystem.Entry)], ConfigFileError)] = {
        let dir = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o755)
        let file = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o644)
        let open = FakeConfigFileSystem.Entry.directory(dir, searchable: true)
        return [
            // Not there yet: the directory exists, the file does not.
            (
                "/srv/st/config.xml",
                [("/srv", open), ("/srv/st", open), ("/srv/st/cert.pem", .file(file, readable: true))],
                .explicitPath("/srv/st/config.xml", .notThereYet)
            ),
            // Below an empty directory: a mount point whose volume is not mounted yet.
            (
                "/volume1/@appdata/syncthing/config.xml", [("/volume1", open)],
                .explicitPath("/volume1/@appdata/syncthing/config.xml", .notThereYet)
            ),
            // An empty directory named as the config directory: Syncthing has not written into it yet.
            (
                "/var/syncthing/config", [("/var/syncthing", open), ("/var/syncthing/config", open)],
                .explicitPath("/var/syncthing/config/config.xml", .notThereYet)
            ),
            // A directory with files but no config.xml.
            (
                "/srv/st", [("/srv", open), ("/srv/st", open), ("/srv/st/notes.txt", .file(file, readable: true))],
                .explicitPath("/srv/st", .directoryWithoutConfig)
            ),
            // Its parent directory does not exist, under a directory that holds other things (a typo).
            (
                "/srv/syncthnig/config.xml", [("/srv", open), ("/srv/other", open)],
                .explicitPath("/srv/syncthnig/config.xml", .noParentDirectory)
            ),
            (
                "/srv/a/b/config.xml", [("/srv", open), ("/srv/x", .file(file, readable: true))],
                .explicitPath("/srv/a/b/config.xml", .noParentDirectory)
            ),
            // Not a regular file.
            ("/srv/fifo", [("/srv", open), ("/srv/fifo", .other(file))], .explicitPath("/srv/fifo", .notAFile)),
            (
                "/srv/st", [("/srv", open), ("/srv/st", open), ("/srv/st/config.xml", open)],
                .explicitPath("/srv/st/config.xml", .notAFile)
            ),
        ]
    }()

    @Test(arguments: explicitCases)
    func explicitPathThatGaveNothingSaysWhy(
        _ path: String, _ entries: [(String, FakeConfigFileSystem.Entry)], _ expected: ConfigFileError
    ) {
        let fs = FakeConfigFileSystem()
        for (p, e) in entries { fs.add(p, e) }
        #expect(ConfigLocator.probe([path], fileSystem: fs, explicit: true) == .notFound(searched: [path]))
        #expect(ConfigLocator.explainMissing(path, fileSystem: fs) == expected)
        guard case .explicitPath(let named, let problem) = expected else {
            Issue.record("every case here is an explicit path")
            return
        }
        #expect(expected.isTemporary == (problem == .notThereYet))
        #expect(expected.message.contains(named), "the message names the path that was tried")
        if problem == .notThereYet {
            #expect(!expected.fix.contains("Set SYNCTHING_CONFIG"), "it is set already")
        }
    }

    @Test func realFilesystemEmptyDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let fs = SystemFileSystem()
        #expect(fs.isEmptyDirectory(dir.path))
        try dir.write("sub/file", "x")
        #expect(!fs.isEmptyDirectory(dir.path))
        #expect(fs.isEmptyDirectory(dir.file("nothing")) == false)
        #expect(!fs.isEmptyDirectory(dir.file("sub/file")))
        #expect(
            ConfigLocator.explainMissing(dir.file("sub/config.xml"), fileSystem: fs)
                == .explicitPath(dir.file("sub/config.xml"), .notThereYet))
        #expect(
            ConfigLocator.explainMissing(dir.file("sub"), fileSystem: fs)
                == .explicitPath(dir.file("sub"), .directoryWithoutConfig))
        #expect(
            ConfigLocator.explainMissing(dir.file("a/b/config.xml"), fileSystem: fs)
                == .explicitPath(dir.file("a/b/config.xml"), .noParentDirectory))
    }

    // MARK: Real filesystem

    @Test func realFilesystemFindsConfigThroughSTHOMEDIR() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("home/config.xml", "<configuration/>")
        let candidates = ConfigLocator.candidates(
            environment: ["STHOMEDIR": dir.file("home")], home: dir.file("nohome"), isMacOS: false)
        let result = ConfigLocator.locate(
            candidates: candidates, fileSystem: SystemFileSystem(), wait: .zero, clock: SystemClock())
        #expect(result == .found(.init(path: dir.file("home/config.xml"))))
    }

    @Test func realFilesystemStatus() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = try dir.write("config.xml", "<configuration/>", mode: 0o640)
        let fs = SystemFileSystem()
        #expect(fs.status(of: file) == .file(FileInfo(ownerUID: geteuid(), ownerGID: getegid(), permissions: 0o640)))
        #expect(fs.status(of: dir.file("missing")) == .missing)
        #expect(fs.status(of: file + "/below") == .missing)
        #expect(fs.isReadable(file))
        #expect(!fs.isReadable(dir.file("missing")))
        #expect(mkfifo(dir.file("fifo"), 0o600) == 0)
        guard case .other = fs.status(of: dir.file("fifo")) else {
            Issue.record("a FIFO is .other")
            return
        }
    }

    @Test(.enabled(if: canTestForeignOwnership, "needs root with CAP_SETUID/CAP_CHOWN"))
    func realFilesystemReportsForeignOwner() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        chmod(dir.path, 0o755)
        let owned = try dir.write("a/config.xml", "<configuration/>", mode: 0o600)
        #expect(chown(owned, 4242, 4343) == 0)
        let hidden = try dir.write("b/config.xml", "<configuration/>", mode: 0o600)
        #expect(chown(dir.file("b"), 4242, 4343) == 0)
        #expect(chmod(dir.file("b"), 0o700) == 0)
        _ = hidden
        let candidates = [owned, hidden]

        // Root can read both.
        #expect(ConfigLocator.probe(candidates, fileSystem: SystemFileSystem()) == .found(.init(path: owned)))

        let result = withFilesystemIdentity(uid: 5151, gid: 5151) {
            (
                ConfigLocator.probe(candidates, fileSystem: SystemFileSystem()),
                ConfigLocator.probe([hidden], fileSystem: SystemFileSystem()),
                SystemFileSystem().status(of: hidden)
            )
        }
        let (both, onlyHidden, hiddenStatus) = try #require(result)
        #expect(
            both
                == .unreadable(
                    BlockedConfig(
                        path: owned, isDirectory: false, info: .init(ownerUID: 4242, ownerGID: 4343, permissions: 0o600)
                    )))
        #expect(
            onlyHidden
                == .unreadable(
                    BlockedConfig(
                        path: dir.file("b"), isDirectory: true,
                        info: .init(ownerUID: 4242, ownerGID: 4343, permissions: 0o700))))
        #expect(hiddenStatus == .hidden)
    }

    @Test func homeDirectoryPrefersHOME() {
        #expect(ConfigLocator.homeDirectory(environment: ["HOME": "/home/u"]) == "/home/u")
        #expect(ConfigLocator.homeDirectory(environment: ["HOME": "relative"])?.hasPrefix("/") ?? true)
        let never: (UInt32) -> PasswdFile.Entry? = { _ in
            Issue.record("/etc/passwd read although HOME is set")
            return nil
        }
        #expect(ConfigLocator.homeDirectory(environment: ["HOME": "/h"], uid: 7, passwdEntry: never) == "/h")
    }

    @Test func withoutHOMEThePasswdLineOfTheEffectiveUIDGivesTheHome() {
        let table = [1000: PasswdFile.Entry(name: "st", uid: 1000, home: "/home/st")]
        let lookup: (UInt32) -> PasswdFile.Entry? = { table[Int($0)] }
        #expect(ConfigLocator.homeDirectory(environment: [:], uid: 1000, passwdEntry: lookup) == "/home/st")
        #expect(ConfigLocator.homeDirectory(environment: ["HOME": "rel"], uid: 1000, passwdEntry: lookup) == "/home/st")
        #expect(ConfigLocator.homeDirectory(environment: [:], uid: 1001, passwdEntry: lookup) == nil)
    }
}
