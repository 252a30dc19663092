import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// `--check-config` and the fatal lines every exit prints.
@Suite struct CheckConfigTests {
    static let path = "/srv/syncthing/config.xml"
    static let dir = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o700)
    static let file = FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o600)

    static func env(_ extra: [String: String]) -> [String: String] {
        var env = ["RELAY_URL": "https://relay.vaultsync.eu", "SYNCTHING_CONFIG": path, "HOME": "/nonexistent"]
        env.merge(extra) { $1 }
        return env
    }

    static func fileSystem(withConfig: Bool = true) -> FakeConfigFileSystem {
        let fs = FakeConfigFileSystem()
        fs.add("/srv", .directory(dir, searchable: true))
        fs.add("/srv/syncthing", .directory(dir, searchable: true))
        if withConfig { fs.add(path, .file(file, readable: true)) }
        return fs
    }

    static func load(_ path: String) throws(ConfigFileError) -> SyncthingGUIConfig {
        SyncthingGUIConfig(address: "127.0.0.1:8384", apiKey: "SECRET-KEY-123", tls: false)
    }

    @Test func goodEnvironmentAndConfigSayOKOnOneLine() {
        let result = App.checkConfig(environment: Self.env([:]), fileSystem: Self.fileSystem(), load: Self.load)
        #expect(result.status == .ok)
        #expect(result.stderr == nil)
        #expect(
            result.stdout
                == "vaultsync-notify: configuration OK (Syncthing address from config.xml, API key from config.xml; "
                + "config.xml at \(Self.path))")
        #expect(result.stdout?.contains("SECRET-KEY-123") == false)
    }

    @Test func environmentAloneNeedsNoConfigFile() {
        let env = Self.env([
            "SYNCTHING_CONFIG": "", "SYNCTHING_API_URL": "http://syncthing:8384", "SYNCTHING_API_KEY": "ENV-KEY-456",
        ])
        let fs = FakeConfigFileSystem()
        let result = App.checkConfig(
            environment: env, fileSystem: fs,
            load: { (_: String) throws(ConfigFileError) in
                Issue.record("must not read config.xml")
                throw .notFound
            })
        #expect(result.status == .ok)
        #expect(
            result.stdout
                == "vaultsync-notify: configuration OK (Syncthing address from SYNCTHING_API_URL, API key from "
                + "the environment (SYNCTHING_API_KEY))")
        #expect(fs.statusCalls.isEmpty)
        #expect(result.stdout?.contains("ENV-KEY-456") == false)
    }

    @Test(arguments: [
        ("http://relay.example", "RELAY_URL: uses http:// for a host that is not loopback"),
        ("https://relay.vaultsync.eu/?x=1", "RELAY_URL: contains a query"),
        ("http://[::+1]", "RELAY_URL: is not an absolute URL"),
    ])
    func badRelayURLIsAConfigurationError(_ url: String, _ problem: String) throws {
        let result = App.checkConfig(
            environment: Self.env(["RELAY_URL": url]), fileSystem: Self.fileSystem(), load: Self.load)
        #expect(result.status == .configuration)
        #expect(result.stdout == nil)
        let lines = try #require(result.stderr).split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("vaultsync-notify: \(problem); expected "))
        #expect(lines[1].hasPrefix("  fix: Set RELAY_URL to the relay's base URL"))
        #expect(lines[1].hasSuffix("; run `vaultsync-notify --doctor` for details"))
        #expect(!(result.stderr ?? "").contains(url))
    }

    @Test func negativeDebounceIsOutOfRangeWithItsFix() {
        let result = App.checkConfig(
            environment: Self.env(["DEBOUNCE_SECONDS": "-1"]), fileSystem: Self.fileSystem(), load: Self.load)
        #expect(result.status == .configuration)
        #expect(
            result.stderr
                == "vaultsync-notify: DEBOUNCE_SECONDS: is out of range; expected seconds from 0 to 3600, decimals "
                + "allowed (e.g. 0.5)\n  fix: Set DEBOUNCE_SECONDS to seconds from 0 to 3600, decimals allowed (e.g. "
                + "0.5), or unset it for its default; run `vaultsync-notify --doctor` for details")
    }

    /// One run names every invalid variable, each with its fix, so that an operator fixes them all in one round.
    @Test func everyInvalidVariableIsNamedAtOnce() throws {
        let env = Self.env([
            "RELAY_URL": "ftp://x", "DEBOUNCE_SECONDS": "abc", "SYNCTHING_API_KEY": "", "LOG_LEVEL": "verbose",
            "LOG_FORMAT": "xml",
        ])
        let result = App.checkConfig(environment: env, fileSystem: Self.fileSystem(), load: Self.load)
        #expect(result.status == .configuration)
        let lines = try #require(result.stderr).split(separator: "\n").map(String.init)
        let named = ["RELAY_URL", "SYNCTHING_API_KEY", "DEBOUNCE_SECONDS", "LOG_LEVEL", "LOG_FORMAT"]
        #expect(lines.count == 2 * named.count)
        for (i, variable) in named.enumerated() {
            #expect(lines[2 * i].hasPrefix("vaultsync-notify: \(variable): "))
            #expect(lines[2 * i + 1].hasPrefix("  fix: ") && lines[2 * i + 1].contains(variable))
        }
        #expect(!(result.stderr ?? "").contains("ftp://x") && !(result.stderr ?? "").contains("verbose"))
    }

    @Test func wholeSecondsSayNotAWholeNumber() {
        let result = App.checkConfig(
            environment: Self.env(["RELAY_WINDOW_SECONDS": "1.5"]), fileSystem: Self.fileSystem(), load: Self.load)
        #expect(result.status == .configuration)
        #expect(result.stderr?.hasPrefix("vaultsync-notify: RELAY_WINDOW_SECONDS: is not a whole number; ") == true)
    }

    /// A CA variable that is set but names nothing usable has no fallback: no https peer could ever be verified.
    @Test func caVariableThatNamesNothingUsableIs78() throws {
        let fs = FakeTrustFileSystem()
        fs.addFile("/etc/ssl/notes.txt", pem: false)
        fs.addFile("/etc/ssl/certs/ca-certificates.crt")
        let result = App.checkConfig(
            environment: Self.env(["SSL_CERT_FILE": "/etc/ssl/notes.txt", "DEBOUNCE_SECONDS": " 5"]),
            fileSystem: Self.fileSystem(), caFileSystem: fs, load: Self.load)
        #expect(result.status == .configuration)
        let lines = try #require(result.stderr).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("vaultsync-notify: DEBOUNCE_SECONDS: has spaces, tabs or line breaks around"))
        #expect(lines[2] == "vaultsync-notify: SSL_CERT_FILE is set but names no readable file of PEM certificates")
        #expect(!(result.stderr ?? "").contains("notes.txt"))
        let good = App.checkConfig(
            environment: Self.env(["SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"]),
            fileSystem: Self.fileSystem(), caFileSystem: fs, load: Self.load)
        #expect(good.status == .ok)
        let both = App.checkConfig(
            environment: Self.env(["SSL_CERT_FILE": "/etc/ssl/notes.txt", "SSL_CERT_DIR": "/nonexistent"]),
            fileSystem: Self.fileSystem(), caFileSystem: fs, load: Self.load)
        let bothLines = (both.stderr ?? "").split(separator: "\n").filter { $0.hasPrefix("vaultsync-notify: ") }
        #expect(bothLines.map { $0.split(separator: " ")[1] } == ["SSL_CERT_FILE", "SSL_CERT_DIR"], "\(bothLines)")
    }

    @Test func configNotThereYetIs75WithoutWaiting() throws {
        // SYNCTHING_CONFIG_WAIT_SECONDS is ignored: --check-config never waits.
        let result = App.checkConfig(
            environment: Self.env(["SYNCTHING_CONFIG_WAIT_SECONDS": "86400"]),
            fileSystem: Self.fileSystem(withConfig: false), load: Self.load)
        #expect(result.status == .temporary)
        let text = try #require(result.stderr)
        #expect(text.hasPrefix("vaultsync-notify: Syncthing's config.xml is not there (yet) at \(Self.path)"))
        #expect(text.hasSuffix("run `vaultsync-notify --doctor` for details"))
    }

    @Test func configThatIsNotSyncthingsIs78() throws {
        let result = App.checkConfig(
            environment: Self.env([:]), fileSystem: Self.fileSystem(),
            load: { (_: String) throws(ConfigFileError) in throw .malformed(.notSyncthingConfig) })
        #expect(result.status == .configuration)
        #expect(try #require(result.stderr).hasPrefix("vaultsync-notify: config.xml has no <configuration> root"))
    }

    @Test func unreadableConfigIs78WithItsMode() throws {
        let fs = Self.fileSystem(withConfig: false)
        fs.add(Self.path, .file(FileInfo(ownerUID: 1000, ownerGID: 1000, permissions: 0o600), readable: false))
        let result = App.checkConfig(environment: Self.env([:]), fileSystem: fs, load: Self.load)
        #expect(result.status == .configuration)
        let text = try #require(result.stderr)
        #expect(text.contains("mode 0600"))
        #expect(text.contains("docker run --user 1000:1000"))
    }

    /// journald stores a line at the priority it starts with; without one, a fatal exit would be stored as info.
    @Test func fatalLinesUnderJournaldCarryTheirPriority() {
        let line = FatalLine("something is wrong", fix: "Do this.", status: .configuration)
        #expect(
            FatalLine.render([line], format: .text, journald: true, time: nil)
                == "<3>vaultsync-notify: something is wrong\n<3>  fix: Do this; run `vaultsync-notify --doctor` for details"
        )
        let temporary = FatalLine("not there yet", fix: "Wait.", status: .temporary)
        #expect(
            FatalLine.render([temporary], format: .text, journald: true, time: nil).hasPrefix("<4>vaultsync-notify: "))
        #expect(FatalLine.render([line], format: .text, journald: false, time: nil) == line.text)
        #expect(
            FatalLine.render([line], format: .json, journald: true, time: nil).hasPrefix("<3>{\"level\":\"error\","))
    }

    @Test func fatalTextIsTheDoctorsShape() {
        #expect(
            App.fatalText("something is wrong", fix: "Do this.")
                == "vaultsync-notify: something is wrong\n  fix: Do this; run `vaultsync-notify --doctor` for details")
        #expect(
            App.fatalText("m", fix: "No stop")
                == "vaultsync-notify: m\n  fix: No stop; run `vaultsync-notify --doctor` for details")
    }

    @Test(arguments: ConfigVariable.allCases)
    func everyConfigurationErrorNamesAFixForItsVariable(_ variable: ConfigVariable) {
        for problem in ConfigurationError.Problem.allCases {
            let error = ConfigurationError(variable, problem)
            #expect(error.fix.contains(variable == .debounceMaxSeconds ? "DEBOUNCE_MAX_SECONDS" : variable.rawValue))
        }
    }

    @Test func checkConfigIsAModeOfItsOwn() {
        #expect(Mode.parse(["vaultsync-notify", "--check-config"]) == .checkConfig)
        #expect(
            Mode.parse(["vaultsync-notify", "--check-config", "--doctor"])
                == .usage("modes cannot be combined: --check-config and --doctor"))
        #expect(
            Mode.parse(["vaultsync-notify", "--check-config", "--json"])
                == .usage("--json is only valid with --doctor or --status"))
        #expect(
            Mode.parse(["vaultsync-notify", "--check-config", "--check-config"]) == .usage("--check-config given twice")
        )
        #expect(Mode.helpText.contains("--check-config"))
        #expect(Mode.usageLine.contains("--check-config"))
    }

    @Test func theDoctorGivesTheSameVerdictOnSYNCTHING_CONFIG() throws {
        var s = DoctorScenario("explicit-missing")
        s.environment["SYNCTHING_CONFIG"] = "/var/syncthing/config/sub/config.xml"
        s.relayHealthy()
        let report = s.run()
        let check = try #require(report.checks.first { $0.name == .configFile })
        #expect(check.status == .fail)
        #expect(
            check.reason
                == "SYNCTHING_CONFIG names /var/syncthing/config/sub/config.xml, but its directory "
                + "/var/syncthing/config/sub does not exist")
        #expect(check.fix?.contains("Set SYNCTHING_CONFIG") == false)
    }
}
