import NotifyCore

/// Everything needed to talk to Syncthing's REST API: where, with which key, and which certificate to pin.
///
/// - Important: `apiKey` is a secret; `description` and the mirror redact it.
package struct SyncthingAccess: Sendable, Equatable {
    /// Where the endpoint came from (`SyncthingAccessRule.AddressSource`).
    package typealias AddressSource = SyncthingAccessRule.AddressSource
    /// Where the API key came from (`SyncthingAccessRule.KeySource`).
    package typealias KeySource = SyncthingAccessRule.KeySource

    package var endpoint: SyncthingEndpoint
    package var apiKey: String
    /// `https-cert.pem` in Syncthing's config directory, to pin; nil when TLS is off or the directory is unknown.
    package var certificatePath: String?
    package var source: AddressSource
    package var keySource: KeySource
    /// The config.xml that was found (read or not), for re-reading after an authentication failure; nil when none.
    package var configFilePath: String?

    package init(
        endpoint: SyncthingEndpoint, apiKey: String, certificatePath: String?, source: AddressSource,
        keySource: KeySource, configFilePath: String?
    ) {
        self.endpoint = endpoint
        self.apiKey = apiKey
        self.certificatePath = certificatePath
        self.source = source
        self.keySource = keySource
        self.configFilePath = configFilePath
    }

    /// What the resolver learnt about config.xml.
    package struct ConfigFileLookup: Sendable, Equatable {
        /// config.xml's path when one was found (even if it then failed to load); nil otherwise.
        package var location: ConfigFileLocation?
        /// The parsed `<gui>` settings, or why there are none.
        package var result: Result<SyncthingGUIConfig, ConfigFileError>

        package init(location: ConfigFileLocation?, result: Result<SyncthingGUIConfig, ConfigFileError>) {
            self.location = location
            self.result = result
        }
    }

    /// True when the environment alone does not give both an address and a key, so config.xml must be read
    /// (`SyncthingAccessRule.needsConfigFile(_:)`).
    package static func needsConfigFile(_ configuration: Configuration) -> Bool {
        SyncthingAccessRule.needsConfigFile(configuration)
    }

    /// Carries out `SyncthingAccessRule.choose(configuration:gui:)` (which source gives the address and the key)
    /// with what was found out about config.xml. Pure.
    ///
    /// * Certificate: when the endpoint uses TLS and config.xml's directory is known, its `https-cert.pem`.
    ///
    /// - Parameters:
    ///   - configuration: the parsed environment.
    ///   - configFile: what was found out about config.xml, or nil when it was not looked for.
    /// - Returns: the access, or the first missing piece: `.configFile` (config.xml needed but unusable: why it is,
    ///   `ConfigFileError.notFound` when it was not looked for), `.guiDisabled`, `.invalidAddress` (config.xml's
    ///   `<address>` cannot be mapped), `.noAPIKey`.
    package static func resolve(
        configuration: Configuration, configFile: ConfigFileLookup?
    ) -> Result<SyncthingAccess, SyncthingAccessError> {
        let gui = try? configFile?.result.get()
        switch SyncthingAccessRule.choose(configuration: configuration, gui: gui) {
        case .success(let choice):
            let location = configFile?.location
            return .success(
                SyncthingAccess(
                    endpoint: choice.endpoint, apiKey: choice.apiKey,
                    certificatePath: choice.pinsCertificate ? location?.httpsCertificatePath : nil,
                    source: choice.source, keySource: choice.keySource, configFilePath: location?.path))
        case .failure(.configFileNeeded):
            if case .failure(let error)? = configFile?.result { return .failure(.configFile(error)) }
            return .failure(.configFile(.notFound))
        case .failure(.guiDisabled): return .failure(.guiDisabled)
        case .failure(.invalidAddress): return .failure(.invalidAddress)
        case .failure(.noAPIKey): return .failure(.noAPIKey)
        }
    }

    /// Finds and reads config.xml when needed, then `resolve(configuration:configFile:)`.
    ///
    /// config.xml is looked for when the environment lacks an address or a key (then waiting up to
    /// `configuration.configWait` for it to appear), or, without waiting, when the endpoint from the environment uses
    /// TLS (to find `https-cert.pem`). Otherwise nothing is read. A file or directory this process may not read ends
    /// the wait at once. When SYNCTHING_CONFIG is set and gave nothing, the error says why
    /// (`ConfigLocator.explainMissing(_:fileSystem:)`: not there yet, or not a possible config.xml).
    /// - Parameters:
    ///   - environment: the process environment (for the locator's STCONFDIR, STHOMEDIR, XDG_* and SYNCTHING_CONFIG).
    ///   - home: home directory for the locator (`ConfigLocator.homeDirectory(environment:)`).
    ///   - load: reads a config.xml (default `SyncthingConfigFile.load(path:)`).
    package static func resolve(
        configuration: Configuration, environment: [String: String], home: String?,
        isMacOS: Bool = ConfigLocator.isMacOS, fileSystem: some ConfigFileSystem = SystemFileSystem(),
        clock: some HostClock = SystemClock(), logger: Logger? = nil,
        load: (String) throws(ConfigFileError) -> SyncthingGUIConfig = SyncthingConfigFile.load(path:)
    ) -> Result<SyncthingAccess, SyncthingAccessError> {
        let needed = SyncthingAccessRule.needsConfigFile(configuration)
        guard SyncthingAccessRule.readsConfigFile(configuration) else {
            return resolve(configuration: configuration, configFile: nil)
        }

        let candidates = ConfigLocator.candidates(environment: environment, home: home, isMacOS: isMacOS)
        let explicit = ConfigLocator.explicitPath(environment: environment)
        let location = ConfigLocator.locate(
            candidates: candidates, fileSystem: fileSystem, explicit: explicit != nil,
            wait: needed ? configuration.configWait : .zero, clock: clock, logger: needed ? logger : nil)
        var found = lookup(location, load: load)
        if case .notFound = location, let explicit {
            found.result = .failure(ConfigLocator.explainMissing(explicit, fileSystem: fileSystem))
        }
        return resolve(configuration: configuration, configFile: found)
    }

    /// What a search for config.xml came to, as `resolve(configuration:configFile:)` takes it: a found file is
    /// loaded with `load`; an unreadable one (or unsearchable config directory) and a miss become the error.
    package static func lookup(
        _ location: ConfigLocation, load: (String) throws(ConfigFileError) -> SyncthingGUIConfig
    ) -> ConfigFileLookup {
        switch location {
        case .found(let file):
            ConfigFileLookup(location: file, result: Result { () throws(ConfigFileError) in try load(file.path) })
        case .unreadable(let blocked):
            ConfigFileLookup(
                location: ConfigFileLocation(
                    path: blocked.isDirectory ? ConfigLocator.join(blocked.path, "config.xml") : blocked.path),
                result: .failure(blocked.error))
        case .notFound:
            ConfigFileLookup(location: nil, result: .failure(.notFound))
        }
    }
}

extension SyncthingAccess: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String {
        "SyncthingAccess(endpoint: \(endpoint), apiKey: <redacted>, certificatePath: \(certificatePath ?? "nil"), "
            + "source: \(source), keySource: \(keySource), configFilePath: \(configFilePath ?? "nil"))"
    }
    package var debugDescription: String { description }
    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "endpoint": endpoint, "apiKey": "<redacted>", "certificatePath": certificatePath as Any,
                "source": source, "keySource": keySource, "configFilePath": configFilePath as Any,
            ], displayStyle: .struct)
    }
}

extension SyncthingAccess.KeySource {
    /// Where the key came from, as the operator set it: `the environment (SYNCTHING_API_KEY)`, `the environment
    /// (STGUIAPIKEY)` or `config.xml (<gui><apikey>)`.
    package var origin: String {
        switch self {
        case .apiKeyVariable: "the environment (SYNCTHING_API_KEY)"
        case .stGUIAPIKey: "the environment (STGUIAPIKEY)"
        case .configFile: "config.xml (<gui><apikey>)"
        }
    }

    /// The fatal line when Syncthing still rejects this key (401, or 403 `CSRF Error`: docs/syncthing-api.md, auth
    /// and the API key) after config.xml was re-read once; the process then exits 78. Names neither key nor path: it is
    /// printed while the service runs.
    package var rejectedMessage: String {
        "Syncthing rejected the API key from \(origin) (HTTP 401, or 403 \"CSRF Error\"), also after re-reading "
            + "config.xml"
    }

    /// What to do about a rejected key, by where it came from.
    package var rejectedFix: String {
        switch self {
        case .configFile:
            "The key in config.xml is not the running Syncthing's: point SYNCTHING_CONFIG at the running instance's "
                + "config.xml (`syncthing serve --paths` prints it), or set SYNCTHING_API_KEY to the key in "
                + "Syncthing's Settings > GUI > API Key."
        case .apiKeyVariable:
            "Set SYNCTHING_API_KEY to the key in Syncthing's Settings > GUI > API Key, or unset it to read "
                + "config.xml's key."
        case .stGUIAPIKey:
            "Give vaultsync-notify the same STGUIAPIKEY as Syncthing, or unset it here to read config.xml's key."
        }
    }
}

extension SyncthingAccess.AddressSource {
    /// Where the address came from: `SYNCTHING_API_URL`, `STGUIADDRESS` or `config.xml`.
    package var origin: String {
        switch self {
        case .apiURLVariable: "SYNCTHING_API_URL"
        case .stGUIAddress: "STGUIADDRESS"
        case .configFile: "config.xml"
        }
    }
}

/// Why no `SyncthingAccess` could be put together. Texts never include a key or address, and a path only for
/// `ConfigFileError.explicitPath` (the operator's own SYNCTHING_CONFIG).
package enum SyncthingAccessError: Error, Sendable, Equatable {
    /// config.xml was needed (no address or no key in the environment) but could not be found or read.
    case configFile(ConfigFileError)
    /// config.xml has `<gui enabled="false">`: Syncthing serves no REST API.
    case guiDisabled
    /// config.xml's `<gui><address>` is not an address `SyncthingEndpoint.fromGUIAddress` understands.
    case invalidAddress
    /// No key in SYNCTHING_API_KEY, STGUIAPIKEY or config.xml's `<gui><apikey>`.
    case noAPIKey

    /// Stable, log-safe code.
    package var code: ErrorCode {
        switch self {
        case .configFile(let error): error.code
        case .guiDisabled, .invalidAddress, .noAPIKey: .configInvalid
        }
    }

    /// What is wrong, one line (naming SYNCTHING_CONFIG's path: `ConfigFileError.message`).
    package var message: String { message(showingPath: true) }

    /// What is wrong, one line; with `showingPath` false, no path (`ConfigFileError.message(showingPath:)`).
    package func message(showingPath: Bool) -> String {
        switch self {
        case .configFile(let error): error.message(showingPath: showingPath)
        case .guiDisabled: "Syncthing's GUI, and with it the REST API, is disabled in config.xml"
        case .invalidAddress: "config.xml's <gui><address> is not a usable host:port or socket path"
        case .noAPIKey: "no Syncthing API key: config.xml has none, and SYNCTHING_API_KEY is not set"
        }
    }

    /// What to do about it.
    package var fix: String {
        switch self {
        case .configFile(let error): error.fix
        case .guiDisabled:
            "Enable the GUI in Syncthing (Settings > GUI), or set SYNCTHING_API_URL and SYNCTHING_API_KEY for an "
                + "instance that has it enabled."
        case .invalidAddress:
            "Set SYNCTHING_API_URL to Syncthing's GUI URL (e.g. http://127.0.0.1:8384)."
        case .noAPIKey:
            "Set an API key in Syncthing (Settings > GUI > API Key) or set SYNCTHING_API_KEY."
        }
    }

    /// Process exit status: 78 (`EX_CONFIG`), as for `ConfigurationError`, unless `status` says 75.
    package static let exitStatus: Int32 = ConfigurationError.exitStatus

    /// The exit status for this error, for the service and `--check-config` alike: `.temporary` (75) when
    /// config.xml is not there yet (`ConfigFileError.isTemporary`: waiting, or a restart, may fix it), else
    /// `.configuration` (78).
    package var status: ExitStatus {
        if case .configFile(let error) = self { return ConfigWait.exitStatus(mayStillAppear: error.isTemporary) }
        return .configuration
    }
}
