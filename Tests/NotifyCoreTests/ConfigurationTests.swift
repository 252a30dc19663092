import Testing

@testable import NotifyCore

private let relay = "https://relay.vaultsync.eu"

private func parse(_ extra: [String: String]) -> Result<Configuration, ConfigurationError> {
    var env = ["RELAY_URL": relay]
    env.merge(extra) { _, new in new }
    return Configuration.parse(environment: env)
}

private func problem(_ extra: [String: String]) -> ConfigurationError? {
    if case .failure(let error) = parse(extra) { return error }
    return nil
}

@Suite struct ConfigurationTests {
    // MARK: The process environment

    @Test("environ entries: split at the first =, entries without a name skipped, the first of two kept")
    func environmentEntries() {
        let entries = ["A=1", "B==2=", "C=", "NOEQUALS", "=x", "A=ignored", "Ü=ä"]
        #expect(EnvironmentEntries.parse(entries) == ["A": "1", "B": "=2=", "C": "", "Ü": "ä"])
        #expect(EnvironmentEntries.parse([]).isEmpty)
    }

    // MARK: Defaults

    @Test func onlyRelayURLGivesTheDefaults() throws {
        let config = try parse([:]).get()
        #expect(config == Configuration(relayBaseURL: relay))
        #expect(config.syncthingAPIKey == nil && config.syncthingAPIURL == nil && config.syncthingConfigPath == nil)
        #expect(config.startupAnnounce)
        #expect(config.configWait == .seconds(60))
        #expect(config.debounce == .seconds(5))
        #expect(config.debounceMax == .seconds(30))
        #expect(config.watchedFolders.isEmpty)
        #expect(config.staleRetrigger == .seconds(21_600))
        #expect(config.relayWindow == .seconds(30))
        #expect(config.logLevel == .info)
        #expect(config.stGUIAddress == nil && config.stGUIAPIKey == nil)
    }

    @Test(arguments: ConfigVariable.allCases.filter { $0 != .relayURL && $0 != .syncthingAPIKey })
    func emptyValueCountsAsUnset(_ variable: ConfigVariable) throws {
        #expect(try parse([variable.rawValue: ""]).get() == Configuration(relayBaseURL: relay))
    }

    /// `SYNCTHING_API_KEY=` in an env file reads as "no key", which Syncthing always rejects: refused at once.
    @Test func emptyAPIKeyIsRefused() throws {
        let error = try #require(problem(["SYNCTHING_API_KEY": ""]))
        #expect(error == ConfigurationError(.syncthingAPIKey, .empty))
        #expect(error.message.hasPrefix("SYNCTHING_API_KEY: is set but empty; expected "))
        #expect(error.fix.contains("remove the line"))
    }

    /// A number, boolean or word with white space around it is refused with a line that says so, not trimmed.
    @Test(arguments: [
        (ConfigVariable.debounceSeconds, " 5"), (.debounceMaxSeconds, "30 "), (.configWaitSeconds, " 5\t"),
        (.staleRetriggerSeconds, " 0 "), (.relayWindowSeconds, "\t45"), (.startupAnnounce, "true\n"),
        (.logLevel, " debug "), (.logFormat, "json "), (.debounceSeconds, "  "),
    ])
    func surroundingSpaceIsRefused(_ variable: ConfigVariable, _ value: String) throws {
        let error = try #require(problem([variable.rawValue: value]))
        #expect(error == ConfigurationError(variable, .surroundingSpace))
        #expect(error.message.hasPrefix("\(variable.rawValue): has spaces, tabs or line breaks around its value"))
        #expect(error.fix.hasPrefix("Remove the spaces around \(variable.rawValue)'s value"))
    }

    @Test func unknownVariablesAreIgnored() throws {
        #expect(
            try parse(["PATH": "/bin", "DEBOUNCE": "x", "relay_url": "nope"]).get()
                == Configuration(relayBaseURL: relay))
    }

    // MARK: RELAY_URL

    @Test func missingOrEmptyRelayURLIsMissing() {
        #expect(Configuration.parse(environment: [:]) == .failure(ConfigurationError(.relayURL, .missing)))
        #expect(
            Configuration.parse(environment: ["RELAY_URL": ""]) == .failure(ConfigurationError(.relayURL, .missing)))
    }

    static let goodRelayURLs: [(String, String)] = [
        ("https://relay.vaultsync.eu", "https://relay.vaultsync.eu"),
        ("https://relay.vaultsync.eu/", "https://relay.vaultsync.eu"),
        ("https://relay.vaultsync.eu:8443/", "https://relay.vaultsync.eu:8443"),
        ("HTTPS://relay.vaultsync.eu", "https://relay.vaultsync.eu"),
        ("https://example.com/relay//", "https://example.com/relay"),
        ("https://[2001:db8::1]:443", "https://[2001:db8::1]:443"),
        ("https://10.0.0.1", "https://10.0.0.1"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://127.1.2.3/", "http://127.1.2.3"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
        ("http://localhost:9000", "http://localhost:9000"),
        ("http://LOCALHOST", "http://LOCALHOST"),
        ("https://relay.vaultsync.eu/api/v1", "https://relay.vaultsync.eu"),
        ("https://relay.vaultsync.eu/api/v1/", "https://relay.vaultsync.eu"),
        ("https://example.com/relay/api/v1", "https://example.com/relay"),
    ]

    @Test(arguments: goodRelayURLs)
    func relayURLIsNormalised(_ value: String, _ expected: String) throws {
        #expect(try parse(["RELAY_URL": value]).get().relayBaseURL == expected)
    }

    static let badRelayURLs: [(String, ConfigurationError.Problem)] = [
        ("relay.vaultsync.eu", .notAURL),
        ("//relay.vaultsync.eu", .notAURL),
        ("http://relay.vaultsync.eu", .insecureScheme),
        ("http://10.0.0.1:8080", .insecureScheme),
        ("http://0177.0.0.1", .insecureScheme),
        ("http://127.0.0.1.nip.io", .insecureScheme),
        ("http://[::ffff:10.0.0.1]", .insecureScheme),
        ("http://0.0.0.0", .insecureScheme),
        ("ftp://relay.vaultsync.eu", .unsupportedScheme),
        ("wss://relay.vaultsync.eu", .unsupportedScheme),
        ("https://user:pass@relay.vaultsync.eu", .userInfo),
        ("https://user@relay.vaultsync.eu", .userInfo),
        ("https://relay.vaultsync.eu/?token=1", .query),
        ("https://relay.vaultsync.eu?", .query),
        ("https://relay.vaultsync.eu/#x", .fragment),
        ("https://", .noHost),
        ("https:///trigger", .noHost),
        ("https://:443", .noHost),
        ("https://relay.vaultsync.eu:0", .notAURL),
        ("https://relay.vaultsync.eu:65536", .notAURL),
        ("https://relay.vaultsync.eu:https", .notAURL),
        ("https://[::1", .notAURL),
        ("https://relay.vaultsync.eu\u{E9}", .notAURL),
        ("https://relay vaultsync.eu", .whitespace),
        (" https://relay.vaultsync.eu", .whitespace),
        ("https://relay.vaultsync.eu\n", .whitespace),
        ("   ", .whitespace),
    ]

    @Test(arguments: badRelayURLs)
    func badRelayURLIsRejected(_ value: String, _ expected: ConfigurationError.Problem) {
        #expect(problem(["RELAY_URL": value]) == ConfigurationError(.relayURL, expected))
    }

    // MARK: Keys, URLs, paths

    @Test(arguments: [ConfigVariable.syncthingAPIKey, .stGUIAPIKey])
    func apiKeysAreCarried(_ variable: ConfigVariable) throws {
        let config = try parse([variable.rawValue: "KhKeQpx7USKrrX36Qsf32ywgDmmxJJxf"]).get()
        let value = variable == .syncthingAPIKey ? config.syncthingAPIKey : config.stGUIAPIKey
        #expect(value == "KhKeQpx7USKrrX36Qsf32ywgDmmxJJxf")
    }

    @Test(arguments: [ConfigVariable.syncthingAPIKey, .stGUIAPIKey], ["a b", "key\n", "\tkey", "k\u{7}y", "k\u{A0}y"])
    func apiKeyWithWhitespaceIsRejected(_ variable: ConfigVariable, _ value: String) {
        #expect(problem([variable.rawValue: value]) == ConfigurationError(variable, .whitespace))
    }

    @Test func apiURLIsParsedToEndpoint() throws {
        let config = try parse(["SYNCTHING_API_URL": "http://syncthing:8384"]).get()
        #expect(config.syncthingAPIURL == SyncthingEndpoint(baseURLs: ["http://syncthing:8384"], tls: false))
        let socket = try parse(["SYNCTHING_API_URL": "/var/run/syncthing.sock"]).get()
        #expect(socket.syncthingAPIURL?.unixSocketPath == "/var/run/syncthing.sock")
    }

    @Test(arguments: [
        ("syncthing:8384", ConfigurationError.Problem.notAURL), ("http://syncthing:8384/rest", .hasPath),
        ("http://a:b@syncthing:8384", .userInfo), ("gopher://syncthing", .unsupportedScheme),
        ("relative.sock", .notAURL),
    ])
    func badAPIURLIsRejected(_ value: String, _ expected: ConfigurationError.Problem) {
        #expect(problem(["SYNCTHING_API_URL": value]) == ConfigurationError(.syncthingAPIURL, expected))
    }

    @Test(arguments: ["/var/syncthing/config", "/var/syncthing/config/config.xml", "/dir with space/config.xml"])
    func configPathIsCarried(_ value: String) throws {
        #expect(try parse(["SYNCTHING_CONFIG": value]).get().syncthingConfigPath == value)
    }

    @Test(arguments: ["/etc/syncthing/config.xml ", " /etc/x", "/etc/x\t"])
    func configPathWithSpacesAroundIsRefused(_ value: String) {
        #expect(problem(["SYNCTHING_CONFIG": value]) == ConfigurationError(.syncthingConfig, .surroundingSpace))
        #expect(problem(["METRICS_FILE": value]) == ConfigurationError(.metricsFile, .surroundingSpace))
    }

    @Test(arguments: ["config.xml", "./config.xml", "~/.config/syncthing"])
    func relativeConfigPathIsRejected(_ value: String) {
        #expect(problem(["SYNCTHING_CONFIG": value]) == ConfigurationError(.syncthingConfig, .notAbsolutePath))
    }

    @Test("METRICS_FILE: an absolute path, carried as written; unset means no metrics")
    func metricsFileIsAnAbsolutePath() throws {
        #expect(try parse([:]).get().metricsFile == nil)
        let path = "/var/lib/node_exporter/textfile/vaultsync-notify.prom"
        #expect(try parse(["METRICS_FILE": path]).get().metricsFile == path)
        for value in ["vaultsync-notify.prom", "./m.prom", "~/m.prom"] {
            #expect(problem(["METRICS_FILE": value]) == ConfigurationError(.metricsFile, .notAbsolutePath))
        }
        #expect(problem(["METRICS_FILE": "/m\u{7}.prom"]) == ConfigurationError(.metricsFile, .whitespace))
    }

    @Test func stGUIAddressIsParsedWithItsOwnTLS() throws {
        let plain = try parse(["STGUIADDRESS": "0.0.0.0:8384"]).get()
        #expect(plain.stGUIAddress == SyncthingEndpoint(baseURLs: ["http://127.0.0.1:8384"], tls: false))
        let tls = try parse(["STGUIADDRESS": "https://0.0.0.0:8384"]).get()
        #expect(tls.stGUIAddress == SyncthingEndpoint(baseURLs: ["https://127.0.0.1:8384"], tls: true))
    }

    @Test(arguments: ["8384", "syncthing", "http://h:8384/x", "tcp://0.0.0.0:8384"])
    func badSTGUIAddressIsRejected(_ value: String) {
        #expect(problem(["STGUIADDRESS": value]) == ConfigurationError(.stGUIAddress, .notAnAddress))
    }

    // MARK: STARTUP_ANNOUNCE

    @Test(arguments: [
        ("true", true), ("TRUE", true), ("1", true), ("yes", true), ("On", true),
        ("false", false), ("False", false), ("0", false), ("no", false), ("OFF", false),
    ])
    func startupAnnounceAcceptsBooleanWords(_ value: String, _ expected: Bool) throws {
        #expect(try parse(["STARTUP_ANNOUNCE": value]).get().startupAnnounce == expected)
    }

    @Test(arguments: ["maybe", "2", "y", "n", "truee", "t"])
    func startupAnnounceRejectsOtherWords(_ value: String) {
        #expect(problem(["STARTUP_ANNOUNCE": value]) == ConfigurationError(.startupAnnounce, .unknownValue))
    }

    // MARK: Whole seconds

    @Test(arguments: [("0", 0), ("60", 60), ("86400", 86_400), ("007", 7)])
    func configWaitAcceptsWholeSeconds(_ value: String, _ seconds: Int) throws {
        #expect(try parse(["SYNCTHING_CONFIG_WAIT_SECONDS": value]).get().configWait == .seconds(seconds))
    }

    @Test(arguments: [
        ("86401", ConfigurationError.Problem.outOfRange), ("99999999999999999999999", .outOfRange),
        ("-1", .outOfRange), ("-60", .outOfRange), ("-99999999999999999999", .outOfRange), ("1.5", .notAWholeNumber),
        ("abc", .notANumber), ("1e3", .notANumber), ("+5", .notANumber), ("-", .notANumber), ("--1", .notANumber),
        ("-1.5", .notANumber), ("-x", .notANumber),
    ])
    func configWaitRejects(_ value: String, _ expected: ConfigurationError.Problem) {
        #expect(problem(["SYNCTHING_CONFIG_WAIT_SECONDS": value]) == ConfigurationError(.configWaitSeconds, expected))
    }

    @Test(
        arguments: [("0", nil), ("10", 10), ("21600", 21_600), ("31536000", 31_536_000)]
            as [(String, Int?)])
    func staleRetriggerAcceptsZeroOrRange(_ value: String, _ seconds: Int?) throws {
        #expect(try parse(["STALE_RETRIGGER_SECONDS": value]).get().staleRetrigger == seconds.map { .seconds($0) })
    }

    @Test(arguments: [
        ("1", ConfigurationError.Problem.outOfRange), ("9", .outOfRange), ("31536001", .outOfRange),
        ("1.5", .notAWholeNumber), ("-0", .outOfRange), ("-21600", .outOfRange), ("six hours", .notANumber),
        ("-six", .notANumber),
    ])
    func staleRetriggerRejects(_ value: String, _ expected: ConfigurationError.Problem) {
        #expect(problem(["STALE_RETRIGGER_SECONDS": value]) == ConfigurationError(.staleRetriggerSeconds, expected))
    }

    @Test(arguments: [("0", nil), ("1", 1), ("30", 30), ("3600", 3_600)] as [(String, Int?)])
    func relayWindowAcceptsZeroOrRange(_ value: String, _ seconds: Int?) throws {
        #expect(try parse(["RELAY_WINDOW_SECONDS": value]).get().relayWindow == seconds.map { .seconds($0) })
    }

    @Test(arguments: [
        ("3601", ConfigurationError.Problem.outOfRange), ("99999999999999", .outOfRange), ("0.5", .notAWholeNumber),
        ("1.", .notANumber), ("1.5.0", .notANumber),
        ("-1", .outOfRange), ("-30", .outOfRange), ("thirty", .notANumber), ("-thirty", .notANumber),
    ])
    func relayWindowRejects(_ value: String, _ expected: ConfigurationError.Problem) {
        let error = problem(["RELAY_WINDOW_SECONDS": value])
        #expect(error == ConfigurationError(.relayWindowSeconds, expected))
        #expect(error?.message.hasPrefix("RELAY_WINDOW_SECONDS: ") == true)
        #expect(ConfigurationError.exitStatus == 78)
    }

    // MARK: Decimal seconds

    @Test(arguments: [
        ("0", Duration.zero), ("0.5", .milliseconds(500)), ("5", .seconds(5)), ("1.25", .milliseconds(1_250)),
        ("3600", .seconds(3_600)), ("2.0000000019", .seconds(2) + .nanoseconds(1)), ("3600.0", .seconds(3_600)),
    ])
    func debounceAcceptsDecimalSeconds(_ value: String, _ expected: Duration) throws {
        #expect(try parse(["DEBOUNCE_SECONDS": value]).get().debounce == expected)
    }

    @Test(arguments: [
        ("3600.001", ConfigurationError.Problem.outOfRange), ("-1", .outOfRange), ("-0.5", .outOfRange),
        ("-9999999999999999", .outOfRange), ("-", .notANumber), ("--1", .notANumber), ("-.5", .notANumber),
        ("-5.", .notANumber), ("-1e3", .notANumber), (".5", .notANumber),
        ("5.", .notANumber), ("1e3", .notANumber), ("1,5", .notANumber), ("5s", .notANumber),
        ("1.2.3", .notANumber), ("9999999999999999", .outOfRange),
    ])
    func debounceRejects(_ value: String, _ expected: ConfigurationError.Problem) {
        #expect(problem(["DEBOUNCE_SECONDS": value]) == ConfigurationError(.debounceSeconds, expected))
    }

    /// A negative number is a number, out of range; the line says so rather than "not a number".
    @Test func negativeDebounceSaysOutOfRange() throws {
        let error = try #require(problem(["DEBOUNCE_SECONDS": "-1"]))
        #expect(error.message.hasPrefix("DEBOUNCE_SECONDS: is out of range; expected seconds from 0 to 3600"))
        #expect(!error.message.contains("not a number"))
    }

    @Test(
        arguments: [
            ([:], Duration.seconds(30)),
            (["DEBOUNCE_MAX_SECONDS": "5"], .seconds(5)),  // equal to the default debounce is fine
            (["DEBOUNCE_MAX_SECONDS": "86400"], .seconds(86_400)),
            (["DEBOUNCE_MAX_SECONDS": "7.5"], .milliseconds(7_500)),
            (["DEBOUNCE_SECONDS": "60"], .seconds(60)),  // unset max follows a larger debounce
            (["DEBOUNCE_SECONDS": "0.5", "DEBOUNCE_MAX_SECONDS": "0.5"], .milliseconds(500)),
        ] as [([String: String], Duration)])
    func debounceMaxDefaultsAndBounds(_ env: [String: String], _ expected: Duration) throws {
        #expect(try parse(env).get().debounceMax == expected)
    }

    @Test(
        arguments: [
            (["DEBOUNCE_MAX_SECONDS": "4"], ConfigurationError.Problem.belowDebounce),
            (["DEBOUNCE_SECONDS": "10", "DEBOUNCE_MAX_SECONDS": "9.999"], .belowDebounce),
            (["DEBOUNCE_MAX_SECONDS": "86400.5"], .outOfRange),
            (["DEBOUNCE_MAX_SECONDS": "thirty"], .notANumber),
            (["DEBOUNCE_MAX_SECONDS": "-1"], .outOfRange),
            (["DEBOUNCE_MAX_SECONDS": "-30.5"], .outOfRange),
        ] as [([String: String], ConfigurationError.Problem)])
    func debounceMaxRejects(_ env: [String: String], _ expected: ConfigurationError.Problem) {
        #expect(problem(env) == ConfigurationError(.debounceMaxSeconds, expected))
    }

    // MARK: WATCHED_FOLDERS, LOG_LEVEL

    @Test(
        arguments: [
            (" vault , notes,,docs ", ["vault", "notes", "docs"]), ("vault", ["vault"]), (",,,", []), (" ", []),
            ("a,a", ["a"]), ("my folder", ["my folder"]),
        ] as [(String, Set<String>)])
    func watchedFoldersAreTrimmedAndDeduplicated(_ value: String, _ expected: Set<String>) throws {
        #expect(try parse(["WATCHED_FOLDERS": value]).get().watchedFolders == expected)
    }

    @Test func watchedFoldersRejectControlCharacters() {
        #expect(problem(["WATCHED_FOLDERS": "vault,no\u{7}tes"]) == ConfigurationError(.watchedFolders, .whitespace))
    }

    @Test(arguments: [
        ("error", LogLevel.error), ("WARN", .warn), ("Info", .info), ("debug", .debug),
    ])
    func logLevelAcceptsNames(_ value: String, _ expected: LogLevel) throws {
        #expect(try parse(["LOG_LEVEL": value]).get().logLevel == expected)
    }

    @Test(arguments: ["warning", "trace", "verbose", "3"])
    func logLevelRejectsOtherNames(_ value: String) {
        #expect(problem(["LOG_LEVEL": value]) == ConfigurationError(.logLevel, .unknownValue))
    }

    // MARK: Errors never leak

    static let leakProbes: [(ConfigVariable, String)] = [
        (.relayURL, "http://ZZSECRETZZ.example"), (.relayURL, "https://user:ZZSECRETZZ@relay.vaultsync.eu"),
        (.syncthingAPIKey, "ZZSECRETZZ with space"), (.stGUIAPIKey, "ZZSECRETZZ\n"),
        (.syncthingAPIURL, "ZZSECRETZZ:8384"), (.syncthingConfig, "ZZSECRETZZ/config.xml"),
        (.startupAnnounce, "ZZSECRETZZ"), (.configWaitSeconds, "ZZSECRETZZ"), (.debounceSeconds, "ZZSECRETZZ"),
        (.debounceMaxSeconds, "ZZSECRETZZ"), (.watchedFolders, "ZZSECRETZZ\u{1}"),
        (.staleRetriggerSeconds, "ZZSECRETZZ"),
        (.logLevel, "ZZSECRETZZ"), (.stGUIAddress, "ZZSECRETZZ"),
    ]

    @Test(arguments: leakProbes)
    func errorNamesTheVariableButNeverTheValue(_ variable: ConfigVariable, _ value: String) throws {
        let error = try #require(problem([variable.rawValue: value]))
        #expect(error.variable == variable)
        #expect(error.message.hasPrefix("\(variable.rawValue): "))
        #expect(error.message.contains("; expected \(error.accepts)"))
        #expect(!error.message.contains("ZZSECRETZZ"))
        #expect(!error.message.contains("\n"))
        #expect(error.code == .configInvalid)
    }

    @Test func errorMessageShape() {
        let error = ConfigurationError(.relayURL, .insecureScheme)
        #expect(
            error.message
                == "RELAY_URL: uses http:// for a host that is not loopback; expected an https:// URL with a host, optional "
                + "port and path, e.g. https://relay.vaultsync.eu (http:// only for 127.0.0.0/8, ::1 or localhost), "
                + "without user name, query or fragment")
        #expect(ConfigurationError.exitStatus == 78)
    }

    @Test(arguments: ConfigVariable.allCases)
    func everyVariableSaysWhatItAccepts(_ variable: ConfigVariable) {
        #expect(!ConfigurationError.accepts(variable).isEmpty)
    }

    @Test func firstInvalidVariableInTableOrderIsReported() {
        #expect(problem(["DEBOUNCE_SECONDS": "x", "STARTUP_ANNOUNCE": "x"])?.variable == .startupAnnounce)
    }

    @Test("parseAll names every invalid variable in table order, and parses the rest with them unset")
    func parseAllNamesEveryInvalidVariable() throws {
        let env = [
            "RELAY_URL": "ftp://x", "DEBOUNCE_SECONDS": "abc", "SYNCTHING_API_KEY": "", "LOG_LEVEL": "verbose",
            "LOG_FORMAT": "xml", "RELAY_WINDOW_SECONDS": "1.5", "STALE_RETRIGGER_SECONDS": "60",
        ]
        let survey = Configuration.parseAll(environment: env)
        #expect(
            survey.errors == [
                ConfigurationError(.relayURL, .unsupportedScheme), ConfigurationError(.syncthingAPIKey, .empty),
                ConfigurationError(.debounceSeconds, .notANumber),
                ConfigurationError(.relayWindowSeconds, .notAWholeNumber),
                ConfigurationError(.logLevel, .unknownValue), ConfigurationError(.logFormat, .unknownValue),
            ])
        let remainder = try #require(survey.remainder)
        #expect(remainder.relayBaseURL == Configuration.placeholderRelayURL)
        #expect(remainder.staleRetrigger == .seconds(60) && remainder.debounce == Configuration.defaultDebounce)
        #expect(survey.environment["DEBOUNCE_SECONDS"] == nil && survey.environment["STALE_RETRIGGER_SECONDS"] == "60")
        #expect(survey.errors.first == problem(env))
    }

    @Test func parseAllOfAValidEnvironmentIsParse() throws {
        let env = ["RELAY_URL": relay, "DEBOUNCE_SECONDS": "2"]
        let survey = Configuration.parseAll(environment: env)
        let parsed = try Configuration.parse(environment: env).get()
        #expect(survey.errors.isEmpty && survey.remainder == parsed)
        #expect(survey.environment == env)
    }

    @Test func descriptionRedactsKeys() throws {
        let config = try parse(["SYNCTHING_API_KEY": "ZZKEY1ZZ", "STGUIAPIKEY": "ZZKEY2ZZ"]).get()
        for text in [config.description, config.debugDescription, String(reflecting: config)] {
            #expect(!text.contains("ZZKEY1ZZ") && !text.contains("ZZKEY2ZZ"))
            #expect(text.contains("<redacted>"))
        }
        var dumped = ""
        dump(config, to: &dumped)
        #expect(!dumped.contains("ZZKEY1ZZ") && !dumped.contains("ZZKEY2ZZ"))
    }
}
