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
public enum Doctor {
    /// Everything the checks touch, injectable for tests.
    public struct Dependencies: Sendable {
        /// For the config.xml probe (`ConfigLocator.probe`) and the owner shown in `config.file`.
        public var fileSystem: any ConfigFileSystem
        /// Reads a config.xml (default `SyncthingConfigFile.load(path:)`).
        public var loadConfig: @Sendable (String) throws(ConfigFileError) -> SyncthingGUIConfig
        /// The `sha256//…` pin of a PEM certificate file, nil when unreadable (default `PublicKeyPin`).
        public var certificatePin: @Sendable (String) -> String?
        public var syncthingTransport: any HTTPTransport
        public var relayTransport: any HTTPTransport
        /// Home directory for the config.xml search order; nil when unknown.
        public var home: String?
        public var isMacOS: Bool
        /// The CA certificates the relay transport verifies against (`relay.ca-bundle`).
        public var trustStore: TrustStore

        public init(
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
        public static func system(environment: [String: String]) -> Dependencies {
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
    public static func run(environment: [String: String], json: Bool, trigger: Bool) -> ExitStatus {
        let report = check(environment: environment, trigger: trigger, dependencies: .system(environment: environment))
        let color = useColor(environment: environment, isTerminal: isatty(1) == 1)
        writeFully(1, json ? report.json() : report.text(color: color))
        return report.exitStatus
    }

    /// Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value (no-color.org).
    public static func useColor(environment: [String: String], isTerminal: Bool) -> Bool {
        isTerminal && (environment["NO_COLOR"] ?? "").isEmpty
    }

    /// The short ID Syncthing shows: the first block of a Device ID (up to the first dash; at most 7 characters).
    public static func shortID(_ deviceID: String) -> String {
        String(deviceID.prefix { $0 != "-" }.prefix(7))
    }

    /// Runs every check. Pure apart from the dependencies.
    /// - Parameters:
    ///   - environment: the process environment (parsed with `Configuration.parse`).
    ///   - trigger: send the one real `POST /api/v1/trigger`.
    public static func check(environment: [String: String], trigger: Bool, dependencies deps: Dependencies)
        -> DoctorReport
    {
        var checks: [DoctorCheck] = []

        // MARK: Environment. Every invalid variable is reported; parsing goes on without it (RELAY_URL is replaced by
        // a placeholder and reported under relay.url), so that the other checks still run.
        var env = environment
        var problems: [ConfigurationError] = []
        var relayProblem: ConfigurationError?
        var parsed: Configuration?
        for _ in 0...ConfigVariable.allCases.count {
            switch Configuration.parse(environment: env) {
            case .success(let c):
                parsed = c
            case .failure(let error) where error.variable == .relayURL:
                relayProblem = error
                env[ConfigVariable.relayURL.rawValue] = "https://relay.invalid"
            case .failure(let error):
                problems.append(error)
                env[error.variable.rawValue] = nil
            }
            if parsed != nil { break }
        }
        let syncthingVariables: Set<ConfigVariable> = [
            .syncthingAPIKey, .syncthingAPIURL, .syncthingConfig, .stGUIAddress, .stGUIAPIKey,
        ]
        let blockingVariable = problems.first { syncthingVariables.contains($0.variable) }?.variable
        if problems.isEmpty {
            checks.append(
                .init(
                    .configEnvironment, .pass,
                    "every variable that is set is valid (RELAY_URL is checked under relay.url)"))
        } else {
            checks.append(
                .init(
                    .configEnvironment, .fail, problems.map(\.message).joined(separator: "; "),
                    fix: "Correct the variable\(problems.count == 1 ? "" : "s") named above; "
                        + "`vaultsync-notify --help` lists every variable and its default."))
        }

        // MARK: Syncthing
        var myID: String?
        var peers: [DoctorCheck] = []
        if let configuration = parsed, blockingVariable == nil {
            (myID, peers) = syncthingChecks(configuration, env, deps, &checks)
        } else {
            let why =
                parsed == nil
                ? "not checked: the environment could not be parsed"
                : "not checked: \(blockingVariable?.rawValue ?? "a variable") is invalid (see config.environment)"
            for name in [
                DoctorCheck.Name.configFile, .addressSource, .reachable, .apiKey, .tlsPin, .deviceID,
                .eventStream,
            ] {
                checks.append(.init(name, .skip, why))
            }
        }

        // MARK: Relay
        relayChecks(parsed, relayProblem, myID, trigger, deps, &checks)

        // MARK: Peers (computed while Syncthing was at hand, printed last)
        if peers.isEmpty {
            let why = "not checked: Syncthing did not answer with the key accepted"
            peers = [.init(.peersConnected, .skip, why), .init(.peersSharedFolders, .skip, why)]
        }
        checks += peers
        return DoctorReport(version: Version.current, checks: checks)
    }

    // MARK: - Syncthing checks

    /// Appends config.file through syncthing.event-stream to `checks`. Returns the Device ID when Syncthing gave a
    /// well-formed one, and the peer checks (empty when Syncthing did not answer with the key accepted).
    private static func syncthingChecks(
        _ configuration: Configuration, _ env: [String: String], _ deps: Dependencies, _ checks: inout [DoctorCheck]
    ) -> (myID: String?, peers: [DoctorCheck]) {
        // config.file: probed once, no first-boot wait.
        let needed = SyncthingAccess.needsConfigFile(configuration)
        let envTLS = (configuration.syncthingAPIURL ?? configuration.stGUIAddress)?.tls ?? false
        let candidates = ConfigLocator.candidates(environment: env, home: deps.home, isMacOS: deps.isMacOS)
        let explicit = ConfigLocator.explicitPath(environment: env)
        let location = ConfigLocator.probe(candidates, fileSystem: deps.fileSystem, explicit: explicit != nil)
        var lookup = SyncthingAccess.lookup(location, load: deps.loadConfig)
        if case .notFound = location, let explicit {
            // The service's own verdict on SYNCTHING_CONFIG: not there yet, or not a possible config.xml.
            lookup.result = .failure(ConfigLocator.explainMissing(explicit, fileSystem: deps.fileSystem))
        }
        checks.append(configFileCheck(location, lookup, candidates, needed: needed, env: env, deps))

        let access: SyncthingAccess
        switch SyncthingAccess.resolve(configuration: configuration, configFile: needed || envTLS ? lookup : nil) {
        case .success(let a):
            access = a
        case .failure(let error):
            let skip = "not checked: no usable Syncthing address and key"
            switch error {
            case .configFile:
                checks.append(.init(.addressSource, .skip, "no address: config.xml is needed (see config.file)"))
                checks.append(.init(.reachable, .skip, skip))
                checks.append(.init(.apiKey, .skip, "no key: config.xml is needed (see config.file)"))
            case .guiDisabled, .invalidAddress:
                checks.append(.init(.addressSource, .fail, error.message, fix: error.fix))
                checks.append(.init(.reachable, .skip, skip))
                checks.append(.init(.apiKey, .skip, skip))
            case .noAPIKey:
                checks.append(.init(.addressSource, .skip, "not resolved without an API key (see syncthing.api-key)"))
                checks.append(.init(.reachable, .skip, skip))
                checks.append(.init(.apiKey, .fail, error.message, fix: error.fix))
            }
            for name in [DoctorCheck.Name.tlsPin, .deviceID, .eventStream] { checks.append(.init(name, .skip, skip)) }
            return (nil, [])
        }

        let client = SyncthingClient(transport: deps.syncthingTransport, access: access)
        let status = client.status()
        let answered: Bool  // an HTTP answer came back (TLS, if any, completed)
        let accepted: Bool  // ... and with the key accepted
        switch status {
        case .success: (answered, accepted) = (true, true)
        case .failure(.transport): (answered, accepted) = (false, false)
        case .failure: (answered, accepted) = (true, false)
        }
        let whereText = describe(access.endpoint)

        // syncthing.address-source
        var sourceText =
            switch access.source {
            case .apiURLVariable: "SYNCTHING_API_URL: \(whereText)"
            case .stGUIAddress: "STGUIADDRESS: \(whereText)"
            case .configFile: "config.xml <gui><address>: \(whereText)"
            }
        if case .success(let st) = status, let overridden = st.guiAddressOverridden {
            sourceText += "; Syncthing reports guiAddressOverridden=\(overridden)"
            if overridden && access.source == .configFile {
                checks.append(
                    .init(
                        .addressSource, .warn,
                        sourceText + " (STGUIADDRESS or --gui-address, which config.xml does not show)",
                        fix: "Give vaultsync-notify the same STGUIADDRESS as Syncthing (or set SYNCTHING_API_URL), "
                            + "so that it does not depend on config.xml's address matching the override."))
            } else {
                checks.append(.init(.addressSource, .pass, sourceText))
            }
        } else if case .success = status {
            checks.append(.init(.addressSource, .pass, sourceText + "; Syncthing does not report guiAddressOverridden"))
        } else {
            checks.append(.init(.addressSource, .pass, sourceText + "; guiAddressOverridden unknown (status not read)"))
        }

        // syncthing.reachable
        let tlsFix = tlsPinFix(access)
        switch status {
        case .success, .failure(.unauthorized), .failure(.hostCheck):
            checks.append(.init(.reachable, .pass, "Syncthing answered at \(whereText)"))
        case .failure(.redirect):
            checks.append(
                .init(
                    .reachable, .fail,
                    "\(whereText) answered with a redirect: Syncthing's GUI there uses HTTPS and this process spoke "
                        + "plain HTTP",
                    fix: redirectFix(access)))
        case .failure(.transport(let error)):
            checks.append(
                .init(
                    .reachable, .fail, "no answer from \(whereText): \(describe(error))",
                    fix: error == .tls ? "Apply the fix under syncthing.tls-pin." : unreachableFix(access)))
        case .failure(let error):
            let what =
                error == .malformed
                ? "answered 200 with a body that is not Syncthing's /rest/system/status"
                : "answered HTTP \(error.status.map(String.init) ?? "?"), not Syncthing's REST API"
            checks.append(
                .init(
                    .reachable, .fail, "\(whereText) \(what)",
                    fix: "Point SYNCTHING_API_URL (or STGUIADDRESS) at Syncthing's GUI address itself, not at a "
                        + "proxy or another service."))
        }

        // syncthing.api-key
        let keyFrom =
            switch access.keySource {
            case .apiKeyVariable: "SYNCTHING_API_KEY"
            case .stGUIAPIKey: "STGUIAPIKEY"
            case .configFile: "config.xml"
            }
        switch status {
        case .success:
            checks.append(.init(.apiKey, .pass, "accepted (the key comes from \(keyFrom); it is never shown)"))
        case .failure(.unauthorized):
            checks.append(
                .init(
                    .apiKey, .fail,
                    "Syncthing rejected the API key from \(keyFrom) (HTTP 401, or 403 \"CSRF Error\"): the key is "
                        + "wrong; the address is right",
                    fix: wrongKeyFix(access)))
        case .failure(.hostCheck):
            checks.append(
                .init(
                    .apiKey, .fail,
                    "Syncthing answered 403 \"Host check error\": its GUI listens on a loopback address and then "
                        + "accepts only a loopback Host name, but this process reached it as \(whereText)",
                    fix: "Reach Syncthing through a loopback address (e.g. SYNCTHING_API_URL=http://127.0.0.1:8384 "
                        + "from the same host or network namespace); from another container, make Syncthing's GUI "
                        + "listen on 0.0.0.0:8384 (the host check then does not apply) or enable "
                        + "insecureSkipHostcheck in Syncthing's Settings > Advanced > GUI."))
        case .failure:
            checks.append(.init(.apiKey, .skip, "not checked: Syncthing did not answer (see syncthing.reachable)"))
        }

        // syncthing.tls-pin
        if !access.endpoint.tls {
            checks.append(.init(.tlsPin, .skip, "Syncthing's GUI uses plain HTTP here: nothing to pin"))
        } else if let certificate = access.certificatePath {
            if deps.certificatePin(certificate) == nil {
                checks.append(
                    .init(
                        .tlsPin, .fail, "\(certificate) cannot be read or holds no PEM certificate",
                        fix: "Run vaultsync-notify as the owner of Syncthing's config directory (see config.file); "
                            + "Syncthing writes https-cert.pem again at start when it is missing."))
            } else if answered {
                checks.append(.init(.tlsPin, .pass, "the certificate Syncthing presents matches \(certificate)"))
            } else if case .failure(.transport(.tls)) = status {
                checks.append(
                    .init(
                        .tlsPin, .fail,
                        "TLS failed: the certificate Syncthing presents does not match \(certificate), or the "
                            + "handshake failed", fix: tlsFix))
            } else {
                checks.append(.init(.tlsPin, .skip, "not checked: Syncthing did not answer (see syncthing.reachable)"))
            }
        } else {
            checks.append(
                .init(
                    .tlsPin, .fail,
                    "Syncthing's GUI uses HTTPS, but its config directory is unknown, so https-cert.pem cannot be "
                        + "pinned", fix: tlsFix))
        }

        // syncthing.device-id
        var myID: String?
        if case .success(let st) = status {
            if RelayClient.isDeviceID(st.myID) {
                myID = st.myID
                checks.append(
                    .init(.deviceID, .pass, "readable; short ID \(shortID(st.myID)) (the full ID is never shown)"))
            } else {
                checks.append(
                    .init(
                        .deviceID, .fail, "Syncthing's /rest/system/status has no well-formed Device ID",
                        fix: "Point SYNCTHING_API_URL at Syncthing itself, not at a proxy that rewrites its answers."))
            }
        } else {
            checks.append(.init(.deviceID, .skip, "not checked: Syncthing did not answer with the key accepted"))
        }

        // syncthing.event-stream
        if accepted {
            switch client.eventHead() {
            case .success(let head):
                checks.append(
                    .init(
                        .eventStream, .pass,
                        "the filtered subscription (\(WakeRules.eventMask)) answered since=0&limit=1&timeout=0; newest "
                            + "event id \(head)"))
            case .failure(let error):
                checks.append(
                    .init(
                        .eventStream, .fail, "GET /rest/events failed: \(describe(error))",
                        fix: "Syncthing answers /rest/system/status but not /rest/events: check that no proxy "
                            + "between them blocks or buffers /rest/events, and that Syncthing is 1.19 or newer."))
            }
        } else {
            checks.append(.init(.eventStream, .skip, "not checked: Syncthing did not answer with the key accepted"))
        }

        return (myID, accepted ? peerChecks(client, myID: myID, configuration) : [])
    }

    private static func configFileCheck(
        _ location: ConfigLocation, _ lookup: SyncthingAccess.ConfigFileLookup, _ candidates: [String],
        needed: Bool, env: [String: String], _ deps: Dependencies
    ) -> DoctorCheck {
        let notNeeded = "not needed: the address and the key come from the environment"
        switch location {
        case .found(let file):
            let index =
                (candidates.firstIndex { $0 == file.path || ConfigLocator.join($0, "config.xml") == file.path }
                    ?? 0) + 1
            let origin =
                (env["SYNCTHING_CONFIG"] ?? "").isEmpty
                ? "candidate \(index) of \(candidates.count) in the search order" : "from SYNCTHING_CONFIG"
            var owner = ""
            if case .file(let info) = deps.fileSystem.status(of: file.path) {
                owner = ", owner uid:gid \(info.ownerUID):\(info.ownerGID)"
            }
            switch lookup.result {
            case .success:
                return .init(
                    .configFile, .pass,
                    "\(file.path) (\(origin))\(owner), readable by this process" + (needed ? "" : "; \(notNeeded)"))
            case .failure(let error):
                return .init(
                    .configFile, needed ? .fail : .warn, "\(file.path) (\(origin)): \(error.message)", fix: error.fix)
            }
        case .unreadable(let blocked):
            return .init(
                .configFile, needed ? .fail : .warn, "\(blocked.message): \(blocked.path)", fix: blocked.fix)
        case .notFound(let searched):
            let probed = "probed \(searched.joined(separator: ", "))"
            guard needed else { return .init(.configFile, .skip, "\(notNeeded); none found (\(probed))") }
            if case .failure(let error) = lookup.result, case .explicitPath = error {
                return .init(.configFile, .fail, error.message, fix: error.fix)
            }
            return .init(
                .configFile, .fail, "Syncthing's config.xml was not found; \(probed)",
                fix: ConfigFileError.notFound.fix)
        }
    }

    private static func peerChecks(_ client: SyncthingClient, myID: String?, _ configuration: Configuration)
        -> [DoctorCheck]
    {
        var out: [DoctorCheck] = []
        var connected: Set<String>?
        // The devices as the connections list gives them (each with its config's `paused`), for the sweep's rule.
        var devices: [ConfiguredDevice] = []
        switch client.connections() {
        case .success(let connections):
            let remote = connections.filter { $0.key != myID }
            let up = Set(remote.filter { $0.value.connected }.map(\.key))
            connected = up
            devices = connections.map { ConfiguredDevice(deviceID: $0.key, paused: $0.value.paused) }
            if remote.isEmpty {
                out.append(
                    .init(
                        .peersConnected, .warn, "no remote device is configured in Syncthing",
                        fix: "Add the iPhone as a device in Syncthing and share the vault folder with it."))
            } else if up.isEmpty {
                out.append(
                    .init(
                        .peersConnected, .warn,
                        "no remote device is connected (0 of \(remote.count)); normal while the phone is offline or "
                            + "VaultSync is in the background",
                        fix: "Nothing to do if the phone is just offline; otherwise open VaultSync on it and check "
                            + "that it connects to this server."))
            } else {
                out.append(
                    .init(.peersConnected, .pass, "\(up.count) of \(remote.count) remote devices connected"))
            }
        case .failure(let error):
            out.append(
                .init(.peersConnected, .warn, "GET /rest/system/connections failed: \(describe(error))"))
        }

        switch client.folders() {
        case .success(let folders):
            let rules = WakeRules(watchedFolders: configuration.watchedFolders)
            let watched = folders.filter { !$0.paused && rules.watches($0.id) }
            let which = configuration.watchedFolders.isEmpty ? "" : " named in WATCHED_FOLDERS"
            if watched.isEmpty {
                out.append(
                    .init(
                        .peersSharedFolders, .warn, "no unpaused Syncthing folder\(which) is watched",
                        fix: configuration.watchedFolders.isEmpty
                            ? "Add (or resume) the vault folder in Syncthing."
                            : "Set WATCHED_FOLDERS to the folder IDs Syncthing shows (Edit folder > Folder ID), or "
                                + "unset it to watch every folder."))
            } else if let connected {
                let pairs = SharedPairs.of(myID: myID ?? "", devices: devices, folders: folders, rules: rules)
                let shared = Set(pairs.filter { connected.contains($0.device) }.map(\.folder))
                if shared.isEmpty {
                    out.append(
                        .init(
                            .peersSharedFolders, .warn,
                            "none of the \(watched.count) watched folder\(watched.count == 1 ? " is" : "s is") shared "
                                + "with a connected device"
                                + (connected.isEmpty ? " (none is connected)" : ""),
                            fix: "Nothing to do if the phone is just offline; otherwise share the vault folder with "
                                + "the iPhone in Syncthing (Edit folder > Sharing)."))
                } else {
                    out.append(
                        .init(
                            .peersSharedFolders, .pass,
                            "\(shared.count) of \(watched.count) watched folders shared with a connected device"))
                }
            } else {
                out.append(
                    .init(.peersSharedFolders, .warn, "not known: the connection state could not be read"))
            }
        case .failure(let error):
            out.append(.init(.peersSharedFolders, .warn, "GET /rest/config/folders failed: \(describe(error))"))
        }
        return out
    }

    // MARK: - Relay checks

    private static func relayChecks(
        _ configuration: Configuration?, _ relayProblem: ConfigurationError?, _ myID: String?, _ trigger: Bool,
        _ deps: Dependencies, _ checks: inout [DoctorCheck]
    ) {
        guard let configuration, relayProblem == nil else {
            checks.append(
                .init(
                    .relayURL, .fail, relayProblem?.message ?? "RELAY_URL could not be checked",
                    fix: "Set RELAY_URL to the relay's base URL, e.g. RELAY_URL=https://relay.vaultsync.eu "
                        + "(http:// only for a relay on loopback)."))
            checks.append(.init(.relayCABundle, .skip, "not checked: RELAY_URL is unusable"))
            checks.append(.init(.relayHealth, .skip, "not checked: RELAY_URL is unusable"))
            checks.append(.init(.relayTrigger, .skip, "not sent: RELAY_URL is unusable"))
            return
        }
        let base = configuration.relayBaseURL
        checks.append(.init(.relayURL, .pass, "\(base) (well-formed; https, or http on loopback)"))
        checks.append(caBundleCheck(relayBaseURL: base, trustStore: deps.trustStore))

        let relay = RelayClient(transport: deps.relayTransport, baseURL: base)
        let fix404 = RelayClient.notFoundFix
        switch relay.health() {
        case .ok(let version):
            checks.append(
                .init(
                    .relayHealth, .pass,
                    "GET /api/v1/health answered ok; relay version \(version ?? "not reported")"))
        case .endpointMissing:
            checks.append(
                .init(
                    .relayHealth, .fail, "GET /api/v1/health answered 404: there is no relay API at RELAY_URL",
                    fix: fix404))
        case .unhealthy(let status, let error):
            let what =
                if let status, status != 200 {
                    "GET /api/v1/health answered HTTP \(status)"
                } else if status == 200 {
                    "GET /api/v1/health answered 200 without \"status\": \"ok\""
                } else {
                    "GET /api/v1/health failed: \(describe(error))"
                }
            checks.append(.init(.relayHealth, .fail, "the relay is not healthy: \(what)", fix: relayDownFix))
        }

        guard trigger else {
            checks.append(.init(.relayTrigger, .skip, "not sent (--no-trigger)"))
            return
        }
        guard let myID else {
            checks.append(
                .init(
                    .relayTrigger, .skip,
                    "not sent: Syncthing's Device ID is unknown (see syncthing.device-id)"))
            return
        }
        let sent = "sent one real wake-up (POST /api/v1/trigger with this server's Device ID): "
        switch relay.trigger(deviceID: myID) {
        case .delivered(let status):
            checks.append(.init(.relayTrigger, .pass, sent + "HTTP \(status), accepted"))
        case .rateLimited:
            checks.append(
                .init(
                    .relayTrigger, .pass,
                    sent + "HTTP 429: the relay's rate limit (over 10 wake-ups a minute for this server)"))
        case .subscriptionInactive(let status):
            checks.append(
                .init(
                    .relayTrigger, .warn,
                    sent + "HTTP \(status): no active Cloud Relay subscription for this server yet: subscribe in "
                        + "the app",
                    fix: "In VaultSync on the iPhone, subscribe to Cloud Relay for this server (short ID "
                        + "\(shortID(myID))); the running service re-checks every 60 s, no restart needed."))
        case .endpointMissing:
            checks.append(
                .init(.relayTrigger, .fail, sent + "HTTP 404: there is no trigger endpoint at RELAY_URL", fix: fix404))
        case .transient(let status, let error):
            let what = status.map { "HTTP \($0)" } ?? describe(error)
            checks.append(
                .init(.relayTrigger, .fail, sent + "not delivered: \(what)", fix: relayDownFix))
        }
    }

    /// `relay.ca-bundle`: which CA certificates the relay's TLS certificate is verified against.
    static func caBundleCheck(relayBaseURL: String, trustStore: TrustStore) -> DoctorCheck {
        let https = CurlTransport.verifiesAgainstCAs(HTTPRequest(url: relayBaseURL))
        guard https else { return .init(.relayCABundle, .skip, "not needed: RELAY_URL is http on loopback") }
        let setFile =
            "Install the system's CA certificates (package ca-certificates), or set SSL_CERT_FILE to a PEM file of "
            + "trusted CAs: SSL_CERT_FILE=/path/to/ca-bundle.pem."
        switch trustStore.current() {
        case .platformDefault:
            return .init(.relayCABundle, .pass, "the system trust store (macOS keychain, through the system's libcurl)")
        case .found(let certificates):
            let named = [certificates.file, certificates.directory].compactMap { $0 }.joined(separator: " and ")
            let origin =
                certificates.fromEnvironment
                ? "named by " + CAVariable.allCases.map(\.rawValue).joined(separator: "/")
                : "the first usual location found"
            return .init(.relayCABundle, .pass, "CA certificates from \(named) (\(origin))")
        case .unusable(.sslCertFile):
            return .init(
                .relayCABundle, .fail, "SSL_CERT_FILE is set but names no readable file of PEM certificates",
                fix:
                    "Point SSL_CERT_FILE at a readable PEM file of trusted CAs, or unset it to use the usual locations."
            )
        case .unusable(.sslCertDir):
            return .init(
                .relayCABundle, .fail,
                "SSL_CERT_DIR is set but names no directory holding OpenSSL hash links (such as 5ad8a5d6.0)",
                fix: "Point SSL_CERT_DIR at a directory prepared with `openssl rehash`, set SSL_CERT_FILE to a PEM "
                    + "bundle instead, or unset it to use the usual locations.")
        case .notFound:
            let searched = (TrustStore.bundleFiles + TrustStore.bundleDirectories).joined(separator: ", ")
            return .init(.relayCABundle, .fail, "no CA certificate bundle found; probed \(searched)", fix: setFile)
        }
    }

    private static let relayDownFix =
        "Check that this host reaches the relay (DNS, firewall, proxy, the system clock for TLS); if the relay itself "
        + "is down, the running service keeps retrying with backoff and needs no restart."

    // MARK: - Texts

    /// Where Syncthing is reached: `http://127.0.0.1:8384`, `http://127.0.0.1:8384 then http://[::1]:8384`, or
    /// `unix socket /path (TLS)`.
    static func describe(_ endpoint: SyncthingEndpoint) -> String {
        if let socket = endpoint.unixSocketPath { return "unix socket \(socket)" + (endpoint.tls ? " (TLS)" : "") }
        return endpoint.baseURLs.joined(separator: " then ")
    }

    static func describe(_ error: TransportError) -> String {
        switch error {
        case .dns: "the host name does not resolve"
        case .connect: "connection refused (nothing listens there, or no route)"
        case .timeout: "no answer in time"
        case .tls: "the TLS handshake failed, or the certificate does not match the pin"
        case .bodyTooLarge: "the answer was larger than expected"
        case .truncated: "the answer was cut short"
        case .cancelled: "cancelled"
        case .other(let code): "the transfer failed (libcurl error \(code))"
        }
    }

    static func describe(_ error: SyncthingError) -> String {
        switch error {
        case .transport(let t): describe(t)
        case .unauthorized: "the API key was rejected"
        case .hostCheck: "403 Host check error"
        case .redirect: "a redirect (HTTPS expected)"
        case .notFound: "HTTP 404"
        case .status(let s): "HTTP \(s)"
        case .malformed: "the answer was not the expected JSON"
        }
    }

    static func describe(_ code: ErrorCode?) -> String {
        switch code {
        case .transportDNS: describe(TransportError.dns)
        case .transportConnect: describe(TransportError.connect)
        case .transportTimeout: describe(TransportError.timeout)
        case .transportTLS: "the TLS handshake or certificate check failed"
        case .transportBodyTooLarge: describe(TransportError.bodyTooLarge)
        case .transportTruncated: describe(TransportError.truncated)
        case let code?: code.rawValue
        case nil: "no answer"
        }
    }

    private static func unreachableFix(_ access: SyncthingAccess) -> String {
        switch access.source {
        case .configFile:
            "Start Syncthing, and check that \(access.configFilePath ?? "config.xml") belongs to the running "
                + "instance. If Syncthing runs in another container, set SYNCTHING_API_URL (e.g. "
                + "http://syncthing:8384) and make its GUI listen on 0.0.0.0:8384; if it runs with STGUIADDRESS or "
                + "--gui-address, give vaultsync-notify the same STGUIADDRESS."
        case .apiURLVariable:
            "Start Syncthing, or set SYNCTHING_API_URL to the address its GUI listens on (Syncthing's log says "
                + "\"GUI and API listening on …\")."
        case .stGUIAddress:
            "Start Syncthing, or set STGUIADDRESS to the same value Syncthing runs with (Syncthing's log says "
                + "\"GUI and API listening on …\")."
        }
    }

    private static func redirectFix(_ access: SyncthingAccess) -> String {
        switch access.source {
        case .apiURLVariable: "Use https:// in SYNCTHING_API_URL."
        case .stGUIAddress: "Use an https:// address in STGUIADDRESS, the same as Syncthing's."
        case .configFile:
            "config.xml says TLS is off, but Syncthing serves HTTPS: point SYNCTHING_CONFIG at the running "
                + "instance's config.xml, or set SYNCTHING_API_URL=https://…"
        }
    }

    private static func wrongKeyFix(_ access: SyncthingAccess) -> String {
        switch access.keySource {
        case .configFile:
            "The key in \(access.configFilePath ?? "config.xml") is not the running Syncthing's: point "
                + "SYNCTHING_CONFIG at the running instance's config.xml (`syncthing serve --paths` prints it), or set "
                + "SYNCTHING_API_KEY to the key in Syncthing's Settings > GUI > API Key."
        case .apiKeyVariable:
            "Set SYNCTHING_API_KEY to the key in Syncthing's Settings > GUI > API Key, or unset it to read "
                + "config.xml's key."
        case .stGUIAPIKey:
            "Give vaultsync-notify the same STGUIAPIKEY as Syncthing, or unset it here to read config.xml's key."
        }
    }

    private static func tlsPinFix(_ access: SyncthingAccess) -> String {
        guard let certificate = access.certificatePath else {
            return "Set SYNCTHING_CONFIG to Syncthing's config directory (where https-cert.pem is), or mount that "
                + "directory into this container."
        }
        return "\(certificate) is not the certificate of the Syncthing at \(describe(access.endpoint)): point "
            + "SYNCTHING_CONFIG at the running instance's config directory; Syncthing also renews the certificate at "
            + "start within 30 days of expiry, so run --doctor again after a Syncthing restart."
    }
}
