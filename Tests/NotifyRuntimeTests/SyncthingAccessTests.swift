import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

typealias ConfigLookup = SyncthingAccess.ConfigFileLookup

private let configPath = "/var/syncthing/config/config.xml"
private let certPath = "/var/syncthing/config/https-cert.pem"

private func config(_ env: [String: String]) throws -> Configuration {
    var full = ["RELAY_URL": "https://relay.vaultsync.eu"]
    full.merge(env) { _, new in new }
    return try Configuration.parse(environment: full).get()
}

func guiFile(_ address: String?, _ key: String?, tls: Bool = false, enabled: Bool = true) -> ConfigLookup {
    ConfigLookup(
        location: ConfigFileLocation(path: configPath),
        result: .success(SyncthingGUIConfig(address: address, apiKey: key, tls: tls, enabled: enabled)))
}

@Suite struct SyncthingAccessTests {
    @Test func configFileAloneGivesEverything() throws {
        let access = try SyncthingAccess.resolve(
            configuration: config([:]), configFile: guiFile("0.0.0.0:8384", "file-key")
        ).get()
        #expect(
            access
                == SyncthingAccess(
                    endpoint: .init(baseURLs: ["http://127.0.0.1:8384"], tls: false), apiKey: "file-key",
                    certificatePath: nil, source: .configFile, keySource: .configFile, configFilePath: configPath))
    }

    @Test func tlsFromConfigFilePointsAtTheCertificateBesideIt() throws {
        let access = try SyncthingAccess.resolve(
            configuration: config([:]), configFile: guiFile("127.0.0.1:8384", "k", tls: true)
        ).get()
        #expect(access.endpoint == .init(baseURLs: ["https://127.0.0.1:8384"], tls: true))
        #expect(access.certificatePath == certPath)
    }

    @Test func missingAddressMeansSyncthingsDefault() throws {
        let access = try SyncthingAccess.resolve(configuration: config([:]), configFile: guiFile(nil, "k")).get()
        #expect(access.endpoint.baseURLs == ["http://127.0.0.1:8384"])
    }

    @Test func stGUIAddressOverridesConfigFileAndItsTLS() throws {
        // Syncthing takes TLS from STGUIADDRESS's scheme alone once it is set (GUIConfiguration.UseTLS).
        let access = try SyncthingAccess.resolve(
            configuration: config(["STGUIADDRESS": "127.0.0.1:18999"]),
            configFile: guiFile("127.0.0.1:18384", "k", tls: true)
        ).get()
        #expect(access.endpoint == .init(baseURLs: ["http://127.0.0.1:18999"], tls: false))
        #expect(access.source == .stGUIAddress)
        #expect(access.keySource == .configFile)
        #expect(access.certificatePath == nil)
    }

    @Test func httpsSTGUIAddressUsesTheConfigDirectoryCertificate() throws {
        let access = try SyncthingAccess.resolve(
            configuration: config(["STGUIADDRESS": "https://0.0.0.0:8384"]), configFile: guiFile("127.0.0.1:8384", "k")
        ).get()
        #expect(access.endpoint == .init(baseURLs: ["https://127.0.0.1:8384"], tls: true))
        #expect(access.certificatePath == certPath)
    }

    @Test func apiURLBeatsSTGUIAddress() throws {
        let access = try SyncthingAccess.resolve(
            configuration: config(["SYNCTHING_API_URL": "http://syncthing:8384", "STGUIADDRESS": "127.0.0.1:18999"]),
            configFile: guiFile("127.0.0.1:8384", "k")
        ).get()
        #expect(access.endpoint == .init(baseURLs: ["http://syncthing:8384"], tls: false))
        #expect(access.source == .apiURLVariable)
    }

    @Test(
        arguments: [
            ([:], "file-key", SyncthingAccess.KeySource.configFile),
            (["STGUIAPIKEY": "env-key-123"], "env-key-123", .stGUIAPIKey),
            (["STGUIAPIKEY": "env-key-123", "SYNCTHING_API_KEY": "own-key"], "own-key", .apiKeyVariable),
            (["SYNCTHING_API_KEY": "own-key"], "own-key", .apiKeyVariable),
        ] as [([String: String], String, SyncthingAccess.KeySource)])
    func keyPrecedence(_ env: [String: String], _ key: String, _ source: SyncthingAccess.KeySource) throws {
        let access = try SyncthingAccess.resolve(
            configuration: config(env), configFile: guiFile("127.0.0.1:8384", "file-key")
        ).get()
        #expect(access.apiKey == key)
        #expect(access.keySource == source)
    }

    @Test func environmentAloneNeedsNoConfigFile() throws {
        let configuration = try config(["SYNCTHING_API_URL": "http://syncthing:8384", "SYNCTHING_API_KEY": "k"])
        #expect(!SyncthingAccess.needsConfigFile(configuration))
        let access = try SyncthingAccess.resolve(configuration: configuration, configFile: nil).get()
        #expect(access.source == .apiURLVariable && access.keySource == .apiKeyVariable)
        #expect(access.configFilePath == nil && access.certificatePath == nil)
        #expect(!SyncthingAccess.needsConfigFile(try config(["STGUIADDRESS": "127.0.0.1:8384", "STGUIAPIKEY": "k"])))
        #expect(SyncthingAccess.needsConfigFile(try config(["SYNCTHING_API_URL": "http://syncthing:8384"])))
        #expect(SyncthingAccess.needsConfigFile(try config(["SYNCTHING_API_KEY": "k"])))
    }

    @Test(
        arguments: [
            ([:] as [String: String], guiFile("127.0.0.1:8384", nil), SyncthingAccessError.noAPIKey),
            ([:], guiFile("garbage", "k"), .invalidAddress),
            ([:], guiFile("127.0.0.1:8384", "k", enabled: false), .guiDisabled),
            (["STGUIADDRESS": "127.0.0.1:8384"], guiFile(nil, "k", enabled: false), .guiDisabled),
            ([:], ConfigLookup(location: nil, result: .failure(.notFound)), .configFile(.notFound)),
            (
                ["SYNCTHING_API_URL": "http://syncthing:8384"],
                ConfigLookup(
                    location: .init(path: configPath),
                    result: .failure(.unreadable(permissions: 0o600, ownerUID: 1000, ownerGID: 1000))),
                .configFile(.unreadable(permissions: 0o600, ownerUID: 1000, ownerGID: 1000))
            ),
            (
                ["SYNCTHING_API_KEY": "k"], ConfigLookup(location: nil, result: .failure(.malformed(.notXML))),
                .configFile(.malformed(.notXML))
            ),
            (["SYNCTHING_API_URL": "http://syncthing:8384"], guiFile("127.0.0.1:8384", nil), .noAPIKey),
        ] as [([String: String], ConfigLookup, SyncthingAccessError)])
    func missingPiecesAreClearErrors(_ env: [String: String], _ lookup: ConfigLookup, _ expected: SyncthingAccessError)
        throws
    {
        #expect(SyncthingAccess.resolve(configuration: try config(env), configFile: lookup) == .failure(expected))
        #expect(!expected.message.isEmpty && !expected.fix.isEmpty)
        #expect(SyncthingAccessError.exitStatus == 78)
    }

    @Test func disabledGUIIsIgnoredForAnExplicitAPIURL() throws {
        let access = SyncthingAccess.resolve(
            configuration: try config(["SYNCTHING_API_URL": "http://syncthing:8384"]),
            configFile: guiFile(nil, "k", enabled: false))
        #expect(try access.get().apiKey == "k")
    }

    @Test func noKeyErrorCodes() {
        #expect(SyncthingAccessError.noAPIKey.code == .configInvalid)
        #expect(SyncthingAccessError.configFile(.notFound).code == .configNotFound)
        #expect(SyncthingAccessError.noAPIKey.fix.contains("SYNCTHING_API_KEY"))
    }

    @Test func descriptionRedactsTheKey() throws {
        let access = try SyncthingAccess.resolve(configuration: config([:]), configFile: guiFile(nil, "ZZKEYZZ")).get()
        #expect(!access.description.contains("ZZKEYZZ"))
        var dumped = ""
        dump(access, to: &dumped)
        #expect(!dumped.contains("ZZKEYZZ"))
    }

    // MARK: With locator and loader

    @Test func environmentOnlyTouchesNoFile() throws {
        let fs = FakeConfigFileSystem()
        let result = SyncthingAccess.resolve(
            configuration: try config(["SYNCTHING_API_URL": "http://syncthing:8384", "SYNCTHING_API_KEY": "k"]),
            environment: [:], home: "/home/u", fileSystem: fs, clock: ManualRuntime(),
            load: { (_: String) throws(ConfigFileError) in
                Issue.record("must not load")
                throw .notFound
            })
        #expect(try result.get().apiKey == "k")
        #expect(fs.statusCalls.isEmpty)
    }

    @Test func tlsFromEnvironmentLooksForTheCertificateWithoutWaiting() throws {
        let configuration = try config(["SYNCTHING_API_URL": "https://127.0.0.1:8384", "SYNCTHING_API_KEY": "k"])
        let fs = FakeConfigFileSystem()
        let clock = ManualRuntime()
        let missing = SyncthingAccess.resolve(
            configuration: configuration, environment: [:], home: nil, fileSystem: fs, clock: clock)
        #expect(try missing.get().certificatePath == nil)
        #expect(clock.sleeps.isEmpty)

        fs.add(configPath, .file(FileInfo(ownerUID: 0, ownerGID: 0, permissions: 0o600), readable: true))
        let found = SyncthingAccess.resolve(
            configuration: configuration, environment: [:], home: nil, fileSystem: fs, clock: clock,
            load: { (_: String) throws(ConfigFileError) in SyncthingGUIConfig(address: nil, apiKey: "other", tls: true)
            })
        #expect(try found.get().certificatePath == certPath)
        #expect(try found.get().apiKey == "k")
    }

    @Test func waitsForConfigThenReadsIt() throws {
        let configuration = try config(["SYNCTHING_CONFIG_WAIT_SECONDS": "10"])
        let fs = FakeConfigFileSystem()
        let clock = ManualRuntime()
        _ = clock.schedule(at: clock.now() + .seconds(2), alsoOnWallClock: false) {
            fs.add(configPath, .file(FileInfo(ownerUID: 0, ownerGID: 0, permissions: 0o600), readable: true))
        }
        let result = SyncthingAccess.resolve(
            configuration: configuration, environment: [:], home: nil, fileSystem: fs, clock: clock,
            load: { (path: String) throws(ConfigFileError) in
                #expect(path == configPath)
                return SyncthingGUIConfig(address: "0.0.0.0:8384", apiKey: "file-key", tls: false)
            })
        #expect(try result.get().apiKey == "file-key")
        #expect(clock.sleeps == [.seconds(1), .seconds(1)])
    }

    @Test func unreadableConfigBecomesAnOwnerError() throws {
        let fs = FakeConfigFileSystem()
        fs.add(configPath, .file(FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o600), readable: false))
        let result = SyncthingAccess.resolve(
            configuration: try config([:]), environment: [:], home: nil, fileSystem: fs, clock: ManualRuntime())
        #expect(result == .failure(.configFile(.unreadable(permissions: 0o600, ownerUID: 1000, ownerGID: 1000))))
        guard case .failure(let error) = result else { return }
        #expect(error.fix.contains("docker run --user 1000:1000"))
    }

    @Test func realFixtureThroughSYNCTHING_CONFIG() throws {
        let path = ConfigFixture.path("nas-synology.xml")
        let result = SyncthingAccess.resolve(
            configuration: try config(["SYNCTHING_CONFIG": path]), environment: ["SYNCTHING_CONFIG": path], home: nil,
            clock: ManualRuntime())
        let access = try result.get()
        #expect(access.endpoint == .init(baseURLs: ["https://192.168.1.20:8384"], tls: true))
        #expect(access.apiKey == "nas-apikey-Zx9Qw3")
        #expect(access.configFilePath == path)
        #expect(access.certificatePath == ConfigFileLocation(path: path).httpsCertificatePath)
    }
}

/// SYNCTHING_CONFIG that is not there yet, EACCES at once, and what each exits with.
@Suite struct SyncthingAccessLateMountTests {
    static let path = "/srv/syncthing/config.xml"
    static let dirInfo = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o755)
    static let fileInfo = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o600)

    func resolve(_ fs: FakeConfigFileSystem, _ clock: ManualRuntime, wait: String = "5")
        -> Result<SyncthingAccess, SyncthingAccessError>
    {
        let env = ["SYNCTHING_CONFIG": Self.path, "SYNCTHING_CONFIG_WAIT_SECONDS": wait]
        var full = env
        full["RELAY_URL"] = "https://relay.vaultsync.eu"
        let configuration = try! Configuration.parse(environment: full).get()
        return SyncthingAccess.resolve(
            configuration: configuration, environment: env, home: nil, fileSystem: fs, clock: clock,
            load: { (_: String) throws(ConfigFileError) in
                SyncthingGUIConfig(address: "127.0.0.1:8384", apiKey: "file-key", tls: false)
            })
    }

    @Test func notThereYetAfterTheWaitIsTemporaryAndNamesThePath() {
        let fs = FakeConfigFileSystem()
        fs.add("/srv", .directory(Self.dirInfo, searchable: true))
        fs.add("/srv/syncthing", .directory(Self.dirInfo, searchable: true))
        fs.add("/srv/syncthing/cert.pem", .file(Self.fileInfo, readable: true))
        let clock = ManualRuntime()
        let result = resolve(fs, clock)
        let expected = SyncthingAccessError.configFile(.explicitPath(Self.path, .notThereYet))
        #expect(result == .failure(expected))
        #expect(clock.now() == ServiceRig.t0 + .seconds(5), "it waited the whole SYNCTHING_CONFIG_WAIT_SECONDS")
        #expect(expected.status == .temporary)
        #expect(expected.message.contains(Self.path))
        #expect(!expected.fix.contains("Set SYNCTHING_CONFIG"))
        #expect(expected.code == .configNotFound)
    }

    @Test func theSameRunSucceedsWhenTheFileAppearsWithinTheWait() throws {
        let fs = FakeConfigFileSystem()
        fs.add("/srv", .directory(Self.dirInfo, searchable: true))
        fs.add("/srv/syncthing", .directory(Self.dirInfo, searchable: true))
        let clock = ManualRuntime()
        _ = clock.schedule(at: clock.now() + .seconds(3), alsoOnWallClock: false) {
            fs.add(Self.path, .file(Self.fileInfo, readable: true))
        }
        let access = try resolve(fs, clock, wait: "10").get()
        #expect(access.apiKey == "file-key" && access.configFilePath == Self.path)
        #expect(clock.now() == ServiceRig.t0 + .seconds(3))
    }

    @Test func noParentDirectoryAfterTheWaitIsAConfigurationError() {
        let fs = FakeConfigFileSystem()
        fs.add("/srv", .directory(Self.dirInfo, searchable: true))
        fs.add("/srv/other", .directory(Self.dirInfo, searchable: true))
        let clock = ManualRuntime()
        let result = resolve(fs, clock)
        #expect(result == .failure(.configFile(.explicitPath(Self.path, .noParentDirectory))))
        #expect(
            clock.now() == ServiceRig.t0 + .seconds(5),
            "a parent directory may still appear (a late mount) within the wait")
        guard case .failure(let error) = result else { return }
        #expect(error.status == .configuration)
        #expect(error.message == "SYNCTHING_CONFIG names \(Self.path), but its directory /srv/syncthing does not exist")
    }

    @Test func anUnreadableFileIsReportedAtOnceWithItsMode() {
        let fs = FakeConfigFileSystem()
        fs.add(Self.path, .file(FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o600), readable: false))
        let clock = ManualRuntime()
        let result = resolve(fs, clock, wait: "60")
        #expect(clock.sleeps.isEmpty)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.status == .configuration)
        #expect(error.message.contains("mode 0600") && error.message.contains("uid:gid 1000:1000"))
    }

    @Test func anUnsearchableConfigDirectoryIsReportedAtOnceAsTheDirectory() {
        let fs = FakeConfigFileSystem()
        fs.add("/srv", .directory(Self.dirInfo, searchable: true))
        fs.add(
            "/srv/syncthing",
            .directory(FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o700), searchable: false))
        let clock = ManualRuntime()
        let result = resolve(fs, clock, wait: "60")
        #expect(clock.sleeps.isEmpty)
        #expect(
            result
                == .failure(
                    .configFile(.unreadable(permissions: 0o700, ownerUID: 1000, ownerGID: 1000, directory: true))))
        guard case .failure(let error) = result else { return }
        #expect(error.status == .configuration)
        #expect(error.message.contains("a directory on its path cannot be searched"))
        #expect(error.message.contains("mode 0700"))
    }

    @Test func onlyNotThereYetAndASearchThatFoundNothingAreTemporary() {
        #expect(SyncthingAccessError.configFile(.notFound).status == .temporary)
        for problem in ConfigFileError.ExplicitPathProblem.allCases {
            let error = SyncthingAccessError.configFile(.explicitPath("/x/config.xml", problem))
            #expect(error.status == (problem == .notThereYet ? .temporary : .configuration))
            #expect(!error.fix.isEmpty)
        }
        for error: SyncthingAccessError in [
            .noAPIKey, .guiDisabled, .invalidAddress, .configFile(.malformed(.notSyncthingConfig)),
            .configFile(.notRegularFile), .configFile(.unreadable(permissions: nil, ownerUID: nil, ownerGID: nil)),
        ] {
            #expect(error.status == .configuration)
        }
    }

    @Test(arguments: [
        (SyncthingAccess.KeySource.configFile, "config.xml (<gui><apikey>)", "point SYNCTHING_CONFIG"),
        (.apiKeyVariable, "the environment (SYNCTHING_API_KEY)", "Set SYNCTHING_API_KEY"),
        (.stGUIAPIKey, "the environment (STGUIAPIKEY)", "same STGUIAPIKEY"),
    ])
    func aRejectedKeySaysWhereItCameFrom(_ source: SyncthingAccess.KeySource, _ origin: String, _ fix: String) {
        #expect(source.rejectedMessage.hasPrefix("Syncthing rejected the API key from \(origin)"))
        #expect(source.rejectedFix.contains(fix))
        #expect(!source.rejectedFix.contains("/"), "no path: the line is printed while the service runs")
    }
}
