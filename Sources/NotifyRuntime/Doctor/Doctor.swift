import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `vaultsync-notify --doctor`: runs every check (never stopping at the first failure) with the service's own
/// configuration parser, config.xml locator, Syncthing client and relay client, and reports a `DoctorReport`.
///
/// Requests, in this order: Syncthing `GET /rest/system/status`, `GET /rest/events?…&since=0&limit=1&timeout=0`,
/// `GET /rest/system/connections`, `GET /rest/config/folders` (each only while Syncthing answers with the key
/// accepted); relay `GET /api/v1/health` and, unless `--no-trigger`, one real `POST /api/v1/trigger`.
/// config.xml is probed once, without the first-boot wait.
///
/// - Important: No reason or fix contains the API key or a full Device ID: only Syncthing's short ID (the first
///   block) is shown. Paths, addresses and the config owner's uid:gid may be shown (the doctor is run by hand).
package enum Doctor {
    /// Everything the checks touch, injectable for tests.
    package struct Dependencies: Sendable {
        /// For the config.xml probe (`ConfigLocator.probe`) and the owner shown in `config.file`.
        package var fileSystem: any ConfigFileSystem
        /// Reads a config.xml (default `SyncthingConfigFile.load(path:)`).
        package var loadConfig: @Sendable (String) throws(ConfigFileError) -> SyncthingGUIConfig
        /// The `sha256//…` pin of a PEM certificate file, nil when unreadable (default `PublicKeyPin`).
        package var certificatePin: @Sendable (String) -> String?
        package var syncthingTransport: any HTTPTransport
        package var relayTransport: any HTTPTransport
        /// Home directory for the config.xml search order; nil when unknown.
        package var home: String?
        package var isMacOS: Bool
        /// The CA certificates the relay transport verifies against (`relay.ca-bundle`).
        package var trustStore: TrustStore
        /// METRICS_FILE's place, as the service's start looks at it (default `MetricsFile.place(of:)`).
        var metricsPlace: @Sendable (String) -> MetricsFilePlace = MetricsFile.place(of:)

        package init(
            fileSystem: any ConfigFileSystem,
            loadConfig: @escaping @Sendable (String) throws(ConfigFileError) -> SyncthingGUIConfig,
            certificatePin: @escaping @Sendable (String) -> String?, syncthingTransport: any HTTPTransport,
            relayTransport: any HTTPTransport, home: String?, isMacOS: Bool, trustStore: TrustStore = .process
        ) {
            self.fileSystem = fileSystem
            self.loadConfig = loadConfig
            self.certificatePin = certificatePin
            self.syncthingTransport = syncthingTransport
            self.relayTransport = relayTransport
            self.home = home
            self.isMacOS = isMacOS
            self.trustStore = trustStore
        }

        /// The real filesystem, libxml2, OpenSSL and libcurl.
        package static func system(environment: [String: String]) -> Dependencies {
            let trustStore = TrustStore(environment: environment)
            return Dependencies(
                fileSystem: SystemFileSystem(),
                loadConfig: { (path: String) throws(ConfigFileError) -> SyncthingGUIConfig in
                    try SyncthingConfigFile.load(path: path)
                },
                certificatePin: { PublicKeyPin.sha256Pin(certificateFile: $0) }, syncthingTransport: CurlTransport(),
                relayTransport: CurlTransport(trustStore: trustStore),
                home: ConfigLocator.homeDirectory(environment: environment), isMacOS: ConfigLocator.isMacOS,
                trustStore: trustStore)
        }
    }

    /// Runs the checks for real and prints the report to standard output.
    /// - Parameters:
    ///   - json: print `DoctorReport.json()` instead of the checklist.
    ///   - trigger: send the one real wake-up (false with `--no-trigger`).
    /// - Returns: `.ok` (0) when nothing failed, else `.checkFailed` (1).
    package static func run(environment: [String: String], json: Bool, trigger: Bool) -> ExitStatus {
        let report = check(environment: environment, trigger: trigger, dependencies: .system(environment: environment))
        let color = useColor(environment: environment, isTerminal: isatty(1) == 1)
        writeFully(1, json ? report.json() : report.text(color: color))
        return report.exitStatus
    }

    /// Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value (no-color.org).
    package static func useColor(environment: [String: String], isTerminal: Bool) -> Bool {
        isTerminal && (environment["NO_COLOR"] ?? "").isEmpty
    }

    /// The short ID Syncthing shows: the first block of a Device ID (up to the first dash; at most 7 characters).
    package static func shortID(_ deviceID: String) -> String {
        String(deviceID.prefix { $0 != "-" }.prefix(7))
    }

    /// Runs every check. Pure apart from the dependencies.
    /// - Parameters:
    ///   - environment: the process environment (parsed with `Configuration.parse`).
    ///   - trigger: send the one real `POST /api/v1/trigger`.
    package static func check(environment: [String: String], trigger: Bool, dependencies deps: Dependencies)
        -> DoctorReport
    {
        let parsed = parseEnvironment(environment, metricsPlace: deps.metricsPlace)
        var checks = [parsed.check]

        var myID: String?
        var peers: [DoctorCheck] = []
        if let configuration = parsed.configuration, parsed.blockingVariable == nil {
            (myID, peers) = syncthingChecks(configuration, parsed.environment, deps, &checks)
        } else {
            checks += syncthingNotChecked(parsed)
        }

        checks += relayChecks(parsed.configuration, parsed.relayProblem, myID, trigger, deps)

        // Peers: computed while Syncthing was at hand, printed last.
        if peers.isEmpty {
            let why = "not checked: Syncthing did not answer with the key accepted"
            peers = [.init(.peersConnected, .skip, why), .init(.peersSharedFolders, .skip, why)]
        }
        checks += peers
        return DoctorReport(version: Version.current, checks: checks)
    }
}
