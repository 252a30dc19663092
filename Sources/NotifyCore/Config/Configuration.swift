/// The sidecar's settings, parsed and validated from its environment.
///
/// Variables are those README.md's "Environment" lists: the relay's documented ones plus `DEBOUNCE_MAX_SECONDS`,
/// `LOG_LEVEL`, and Syncthing's own `STGUIADDRESS` / `STGUIAPIKEY` (docs/syncthing-api.md, GUI address forms and
/// unix sockets), which are carried so that they can override config.xml for the sidecar exactly as they do for
/// Syncthing. See `parse(environment:)` for every rule.
///
/// - Important: `syncthingAPIKey` and `stGUIAPIKey` are secrets. `description`, `debugDescription` and the mirror
///   redact them; never log a `Configuration` field other than through `LogValue`.
package struct Configuration: Sendable, Equatable {
    /// RELAY_URL: `https://host[:port][/path]` or loopback `http://…`, without a trailing slash.
    package var relayBaseURL: String
    /// SYNCTHING_API_KEY: overrides every other key source. Nil when unset.
    package var syncthingAPIKey: String?
    /// SYNCTHING_API_URL: overrides every other address source. Nil when unset.
    package var syncthingAPIURL: SyncthingEndpoint?
    /// SYNCTHING_CONFIG: absolute path of config.xml or of the directory holding it. Nil when unset.
    package var syncthingConfigPath: String?
    /// STARTUP_ANNOUNCE: send one wake-up at startup. Default true.
    package var startupAnnounce: Bool
    /// SYNCTHING_CONFIG_WAIT_SECONDS: how long to wait at startup for config.xml to appear. Default 60 s.
    package var configWait: Duration
    /// DEBOUNCE_SECONDS: quiet time after the last change before a wake-up is sent. Default 5 s.
    package var debounce: Duration
    /// DEBOUNCE_MAX_SECONDS: longest a wake-up is held back by a stream of changes. Default 30 s, or `debounce` when
    /// DEBOUNCE_SECONDS is larger than 30 and this variable is unset; always ≥ `debounce`.
    package var debounceMax: Duration
    /// WATCHED_FOLDERS: Syncthing folder IDs to watch. Empty means every folder.
    package var watchedFolders: Set<String>
    /// STALE_RETRIGGER_SECONDS: cadence of the stale-peer re-send. Default 6 h; nil when disabled (`0`).
    package var staleRetrigger: Duration?
    /// RELAY_WINDOW_SECONDS: the relay's push window (the relay pushes roughly once per Device ID per ~30 s and
    /// swallows the triggers in between; README.md, "When the phone is woken, and when it is not"). No trigger is sent
    /// within this long of the last one the relay accepted. Default 30 s; nil when disabled (`0`).
    package var relayWindow: Duration?
    /// LOG_LEVEL. Default `.info`.
    package var logLevel: LogLevel
    /// LOG_FORMAT: one text line (`level=… msg="…" key=value`) or one JSON object per record. Default `.text`.
    package var logFormat: LogFormat
    /// STGUIADDRESS as Syncthing reads it; its TLS comes from its scheme alone (docs/syncthing-api.md, GUI address
    /// forms and unix sockets). Nil when unset.
    package var stGUIAddress: SyncthingEndpoint?
    /// STGUIAPIKEY: Syncthing accepts it in addition to the config.xml key (docs/syncthing-api.md, auth and the API
    /// key). Nil when unset.
    package var stGUIAPIKey: String?
    /// METRICS_FILE: absolute path of the Prometheus text file the service keeps up to date (for node_exporter's
    /// textfile collector). Nil when unset: no metrics are written.
    package var metricsFile: String?

    package static let defaultStartupAnnounce = true
    package static let defaultConfigWait: Duration = .seconds(60)
    package static let defaultDebounce: Duration = .seconds(5)
    package static let defaultDebounceMax: Duration = .seconds(30)
    package static let defaultStaleRetrigger: Duration = .seconds(21_600)
    package static let defaultRelayWindow: Duration = .seconds(30)
    package static let defaultLogLevel: LogLevel = .info
    package static let defaultLogFormat: LogFormat = .text

    package init(
        relayBaseURL: String, syncthingAPIKey: String? = nil, syncthingAPIURL: SyncthingEndpoint? = nil,
        syncthingConfigPath: String? = nil, startupAnnounce: Bool = Configuration.defaultStartupAnnounce,
        configWait: Duration = Configuration.defaultConfigWait, debounce: Duration = Configuration.defaultDebounce,
        debounceMax: Duration = Configuration.defaultDebounceMax, watchedFolders: Set<String> = [],
        staleRetrigger: Duration? = Configuration.defaultStaleRetrigger,
        logLevel: LogLevel = Configuration.defaultLogLevel, stGUIAddress: SyncthingEndpoint? = nil,
        stGUIAPIKey: String? = nil, logFormat: LogFormat = Configuration.defaultLogFormat,
        relayWindow: Duration? = Configuration.defaultRelayWindow, metricsFile: String? = nil
    ) {
        self.relayBaseURL = relayBaseURL
        self.syncthingAPIKey = syncthingAPIKey
        self.syncthingAPIURL = syncthingAPIURL
        self.syncthingConfigPath = syncthingConfigPath
        self.startupAnnounce = startupAnnounce
        self.configWait = configWait
        self.debounce = debounce
        self.debounceMax = debounceMax
        self.watchedFolders = watchedFolders
        self.staleRetrigger = staleRetrigger
        self.logLevel = logLevel
        self.stGUIAddress = stGUIAddress
        self.stGUIAPIKey = stGUIAPIKey
        self.logFormat = logFormat
        self.relayWindow = relayWindow
        self.metricsFile = metricsFile
    }

    /// Parses and validates the environment. Pure: reads only `environment`.
    ///
    /// Rules (an empty value counts as unset, except RELAY_URL, which is then missing, and SYNCTHING_API_KEY, which
    /// is then refused; a number, boolean, level or format with spaces, tabs or line breaks around it is refused, as
    /// a value that `docker --env-file` or a unit's `Environment=` kept literally and would otherwise be read as
    /// something else than written; folder-list items are trimmed):
    /// * `RELAY_URL` (required): `https://host[:port][/path]`; `http://` only when the host is loopback
    ///   (127.0.0.0/8, `::1`, `localhost`, `*.localhost`, see `hostIsLoopback`). A host is required; user info, a query
    ///   or a fragment are refused; trailing slashes, and a trailing `/api/v1` (a pasted API base URL), are removed.
    /// * `SYNCTHING_API_KEY`, `STGUIAPIKEY`: any text without whitespace or control characters; SYNCTHING_API_KEY
    ///   set to the empty string is refused (it reads as "use no key", which Syncthing always rejects).
    /// * `SYNCTHING_API_URL`: see `SyncthingEndpoint.fromAPIURL(_:)`.
    /// * `STGUIADDRESS`: see `SyncthingEndpoint.fromGUIAddress(_:tls:)` (parsed with `tls: false`).
    /// * `SYNCTHING_CONFIG`: an absolute path (file or directory; checked later by the locator).
    /// * `STARTUP_ANNOUNCE`: `true/false/1/0/yes/no/on/off`, case-insensitive. Default true.
    /// * `SYNCTHING_CONFIG_WAIT_SECONDS`: whole seconds `0…86400`. Default 60.
    /// * `DEBOUNCE_SECONDS`: decimal seconds `0…3600` (`0.5` allowed; digits past nanoseconds are ignored). Default 5.
    /// * `DEBOUNCE_MAX_SECONDS`: decimal seconds from DEBOUNCE_SECONDS up to 86400. Default 30 (or DEBOUNCE_SECONDS
    ///   when that is larger and this is unset).
    /// * `WATCHED_FOLDERS`: comma-separated folder IDs, each trimmed, empty items dropped; no control characters.
    ///   Empty means all folders.
    /// * `STALE_RETRIGGER_SECONDS`: `0` disables; else whole seconds `10…31536000`. Default 21600.
    /// * `RELAY_WINDOW_SECONDS`: `0` disables; else whole seconds `1…3600`. Default 30.
    /// * `LOG_LEVEL`: `error|warn|info|debug`, case-insensitive. Default info.
    /// * `LOG_FORMAT`: `text|json`, case-insensitive. Default text.
    /// * `METRICS_FILE`: an absolute path (the file is written later; a failed write is logged, not fatal). Unset
    ///   means no metrics.
    ///
    /// - Returns: the configuration, or the first invalid variable in the order above. The error names the variable
    ///   and what it accepts, never the value. `parseAll(environment:)` names every invalid variable.
    package static func parse(environment: [String: String]) -> Result<Configuration, ConfigurationError> {
        do {
            return .success(try parseThrowing(environment))
        } catch {
            return .failure(error)
        }
    }

    /// What `parseAll(environment:)` found.
    package struct Survey: Sendable, Equatable {
        /// Every invalid variable, in `parse`'s order; empty when the environment is valid.
        package var errors: [ConfigurationError]
        /// The configuration parsed without the invalid variables (each unset, so that its default applies; an invalid
        /// RELAY_URL replaced by `placeholderRelayURL`), so that the other checks can still run; nil only when even
        /// that failed.
        package var remainder: Configuration?
        /// The environment `remainder` was parsed from: the invalid variables removed, RELAY_URL replaced.
        package var environment: [String: String]
    }

    /// Stands in for an invalid RELAY_URL in `Survey.remainder`; `.invalid` is reserved and never resolves.
    package static let placeholderRelayURL = "https://relay.invalid"

    /// Every invalid variable at once, with `parse(environment:)`'s rules: each invalid one is reported, then
    /// dropped (RELAY_URL replaced by `placeholderRelayURL`), and the rest parsed again, so that an operator fixes
    /// them in one round, not one run at a time.
    package static func parseAll(environment: [String: String]) -> Survey {
        var env = environment
        var errors: [ConfigurationError] = []
        for _ in 0...ConfigVariable.allCases.count {
            switch parse(environment: env) {
            case .success(let configuration):
                return Survey(errors: errors, remainder: configuration, environment: env)
            case .failure(let error):
                errors.append(error)
                env[error.variable.rawValue] = error.variable == .relayURL ? placeholderRelayURL : nil
            }
        }
        return Survey(errors: errors, remainder: nil, environment: env)
    }

    private static func parseThrowing(_ env: [String: String]) throws(ConfigurationError) -> Configuration {
        func raw(_ variable: ConfigVariable) -> String? {
            guard let value = env[variable.rawValue], !value.isEmpty else { return nil }
            return value
        }
        // Numbers, words and booleans: a set value with white space around it is refused, not trimmed.
        func bare(_ variable: ConfigVariable) throws(ConfigurationError) -> String? {
            guard let value = raw(variable) else { return nil }
            guard trimSpaces(value) == value else { throw ConfigurationError(variable, .surroundingSpace) }
            return value
        }
        func check<T>(_ variable: ConfigVariable, _ result: Result<T, ConfigurationError.Problem>)
            throws(ConfigurationError) -> T
        {
            switch result {
            case .success(let value): return value
            case .failure(let problem): throw ConfigurationError(variable, problem)
            }
        }

        guard let relayText = raw(.relayURL) else { throw ConfigurationError(.relayURL, .missing) }
        let relayBaseURL = try check(.relayURL, parseRelayURL(relayText))

        if env[ConfigVariable.syncthingAPIKey.rawValue] == "" { throw ConfigurationError(.syncthingAPIKey, .empty) }
        let apiKey = try raw(.syncthingAPIKey).map { v throws(ConfigurationError) in
            try check(.syncthingAPIKey, parseAPIKey(v))
        }
        let apiURL = try raw(.syncthingAPIURL).map { v throws(ConfigurationError) in
            try check(.syncthingAPIURL, SyncthingEndpoint.parseAPIURL(v))
        }
        let configPath = try raw(.syncthingConfig).map { v throws(ConfigurationError) in
            try check(.syncthingConfig, parseAbsolutePath(v))
        }
        let announce =
            try bare(.startupAnnounce).map { v throws(ConfigurationError) in
                try check(.startupAnnounce, parseBool(v))
            } ?? defaultStartupAnnounce
        let wait =
            try bare(.configWaitSeconds).map { v throws(ConfigurationError) in
                try check(.configWaitSeconds, parseWholeSeconds(v, in: 0...86_400))
            } ?? defaultConfigWait
        let debounce =
            try bare(.debounceSeconds).map { v throws(ConfigurationError) in
                try check(.debounceSeconds, parseDecimalSeconds(v, in: .zero ... .seconds(3_600)))
            } ?? defaultDebounce
        let debounceMax: Duration
        if let v = try bare(.debounceMaxSeconds) {
            debounceMax = try check(.debounceMaxSeconds, parseDecimalSeconds(v, in: .zero ... .seconds(86_400)))
            guard debounceMax >= debounce else { throw ConfigurationError(.debounceMaxSeconds, .belowDebounce) }
        } else {
            debounceMax = max(defaultDebounceMax, debounce)
        }
        let folders =
            try raw(.watchedFolders).map { v throws(ConfigurationError) in
                try check(.watchedFolders, parseFolderList(v))
            } ?? []
        let stale: Duration?
        if let v = try bare(.staleRetriggerSeconds) {
            if v == "0" {
                stale = nil
            } else {
                stale = try check(.staleRetriggerSeconds, parseWholeSeconds(v, in: 10...31_536_000))
            }
        } else {
            stale = defaultStaleRetrigger
        }
        let window: Duration?
        if let v = try bare(.relayWindowSeconds) {
            let seconds = try check(.relayWindowSeconds, parseWholeSeconds(v, in: 0...3_600))
            window = seconds == .zero ? nil : seconds
        } else {
            window = defaultRelayWindow
        }
        let level =
            try bare(.logLevel).map { v throws(ConfigurationError) in
                guard let level = LogLevel(name: v.lowercased()) else {
                    throw ConfigurationError(.logLevel, .unknownValue)
                }
                return level
            } ?? defaultLogLevel
        let format =
            try bare(.logFormat).map { v throws(ConfigurationError) in
                guard let format = parseLogFormat(v) else { throw ConfigurationError(.logFormat, .unknownValue) }
                return format
            } ?? defaultLogFormat
        let guiAddress = try raw(.stGUIAddress).map { v throws(ConfigurationError) in
            guard let endpoint = SyncthingEndpoint.fromGUIAddress(v, tls: false) else {
                throw ConfigurationError(.stGUIAddress, .notAnAddress)
            }
            return endpoint
        }
        let guiKey = try raw(.stGUIAPIKey).map { v throws(ConfigurationError) in try check(.stGUIAPIKey, parseAPIKey(v))
        }
        let metricsFile = try raw(.metricsFile).map { v throws(ConfigurationError) in
            try check(.metricsFile, parseAbsolutePath(v))
        }

        return Configuration(
            relayBaseURL: relayBaseURL, syncthingAPIKey: apiKey, syncthingAPIURL: apiURL,
            syncthingConfigPath: configPath,
            startupAnnounce: announce, configWait: wait, debounce: debounce, debounceMax: debounceMax,
            watchedFolders: folders, staleRetrigger: stale, logLevel: level, stGUIAddress: guiAddress,
            stGUIAPIKey: guiKey, logFormat: format, relayWindow: window, metricsFile: metricsFile)
    }

    /// LOG_FORMAT as `parse(environment:)` reads it, from that variable alone: the format of the lines a process
    /// prints before its configuration exists or when it has none (a usage error, the invalid variables). LOG_FORMAT
    /// is only a choice of format, so it is honoured whatever else is wrong; unset, empty or itself invalid, it is
    /// the default, text, in which its own error is then printed.
    package static func logFormat(environment: [String: String]) -> LogFormat {
        guard let value = environment[ConfigVariable.logFormat.rawValue], trimSpaces(value) == value else {
            return defaultLogFormat
        }
        return parseLogFormat(value) ?? defaultLogFormat
    }

    // MARK: - Value parsers

    /// `text` or `json`, in any case.
    static func parseLogFormat(_ value: String) -> LogFormat? { LogFormat(rawValue: value.lowercased()) }

    static func parseRelayURL(_ value: String) -> Result<String, ConfigurationError.Problem> {
        guard value.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else { return .failure(.whitespace) }
        guard let parts = URLParts(value) else { return .failure(.notAURL) }
        if let problem = parts.commonProblem { return .failure(problem) }
        switch parts.scheme {
        case "https": break
        case "http": guard hostIsLoopback(parts.host) else { return .failure(.insecureScheme) }
        default: return .failure(.unsupportedScheme)
        }
        var path = Substring(parts.path)
        while path.hasSuffix("/") { path = path.dropLast() }
        // The relay's API base URL is often given as `https://relay.vaultsync.eu/api/v1`; the sidecar appends
        // `/api/v1/…` itself, so a pasted API prefix is taken off rather than doubled into a 404.
        if path.hasSuffix("/api/v1") { path = path.dropLast(7) }
        while path.hasSuffix("/") { path = path.dropLast() }
        return .success("\(parts.scheme)://\(parts.authority)\(path)")
    }

    static func parseAPIKey(_ value: String) -> Result<String, ConfigurationError.Problem> {
        guard
            value.unicodeScalars.allSatisfy({ !$0.properties.isWhitespace && $0.properties.generalCategory != .control }
            )
        else { return .failure(.whitespace) }
        return .success(value)
    }

    /// An absolute path without spaces around it: a trailing space from an env file would name another file, one
    /// that never appears (SYNCTHING_CONFIG would then exit 75, "not there yet", for ever).
    static func parseAbsolutePath(_ value: String) -> Result<String, ConfigurationError.Problem> {
        guard trimSpaces(value) == value else { return .failure(.surroundingSpace) }
        guard value.hasPrefix("/") else { return .failure(.notAbsolutePath) }
        guard value.unicodeScalars.allSatisfy({ $0.properties.generalCategory != .control }) else {
            return .failure(.whitespace)
        }
        return .success(value)
    }

    static func parseBool(_ value: String) -> Result<Bool, ConfigurationError.Problem> {
        switch value.lowercased() {
        case "true", "1", "yes", "on": .success(true)
        case "false", "0", "no", "off": .success(false)
        default: .failure(.unknownValue)
        }
    }

    /// `digits`. A `-` before the digits makes a number below every accepted range: `.outOfRange`, not
    /// `.notANumber`.
    static func parseWholeSeconds(_ value: String, in range: ClosedRange<Int>) -> Result<
        Duration, ConfigurationError.Problem
    > {
        if value.hasPrefix("-") {
            let magnitude = value.dropFirst()
            let isNumber = !magnitude.isEmpty && magnitude.utf8.allSatisfy(isASCIIDigit)
            return .failure(isNumber ? .outOfRange : .notANumber)
        }
        guard !value.isEmpty, value.utf8.allSatisfy(isASCIIDigit) else {
            let decimal = parseDecimalSeconds(value, in: .zero ... .seconds(Int64.max))
            if case .success = decimal { return .failure(.notAWholeNumber) }
            return .failure(.notANumber)
        }
        guard value.utf8.count <= 12, let seconds = Int(value), range.contains(seconds) else {
            return .failure(.outOfRange)
        }
        return .success(.seconds(seconds))
    }

    /// `digits[.digits]`; fractional digits past the ninth (nanoseconds) are ignored. A `-` before such a number
    /// makes it `.outOfRange` (every accepted range starts at 0), not `.notANumber`.
    static func parseDecimalSeconds(_ value: String, in range: ClosedRange<Duration>) -> Result<
        Duration, ConfigurationError.Problem
    > {
        if value.hasPrefix("-") {
            let magnitude = String(value.dropFirst())
            guard !magnitude.hasPrefix("-") else { return .failure(.notANumber) }
            switch parseDecimalSeconds(magnitude, in: .zero ... .seconds(Int64.max)) {
            case .success, .failure(.outOfRange): return .failure(.outOfRange)
            case .failure: return .failure(.notANumber)
            }
        }
        let pieces = value.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = pieces[0]
        let fraction = pieces.count > 1 ? pieces[1] : ""
        guard !whole.isEmpty, whole.utf8.allSatisfy(isASCIIDigit), fraction.utf8.allSatisfy(isASCIIDigit),
            pieces.count == 1 || !fraction.isEmpty
        else { return .failure(.notANumber) }
        guard whole.utf8.count <= 12, let seconds = Int64(whole) else { return .failure(.outOfRange) }
        var nanos: Int64 = 0
        var scale: Int64 = 100_000_000
        for digit in fraction.utf8.prefix(9) {
            nanos += Int64(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        let duration = Duration.seconds(seconds) + .nanoseconds(nanos)
        guard range.contains(duration) else { return .failure(.outOfRange) }
        return .success(duration)
    }

    static func parseFolderList(_ value: String) -> Result<Set<String>, ConfigurationError.Problem> {
        var folders: Set<String> = []
        for item in value.split(separator: ",", omittingEmptySubsequences: true) {
            let id = trimSpaces(String(item))
            if id.isEmpty { continue }
            guard id.unicodeScalars.allSatisfy({ $0.properties.generalCategory != .control }) else {
                return .failure(.whitespace)
            }
            folders.insert(id)
        }
        return .success(folders)
    }

    /// Removes leading and trailing spaces, tabs, CR and LF.
    static func trimSpaces(_ value: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = value.firstIndex(where: { !isSpace($0) }), let last = value.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(value[first...last])
    }
}

extension Configuration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A one-line summary with both API keys redacted.
    package var description: String {
        func show(_ value: (some Any)?) -> String { value.map { "\($0)" } ?? "nil" }
        let fields = [
            "relayBaseURL: \(relayBaseURL)", "syncthingAPIKey: \(syncthingAPIKey == nil ? "nil" : "<redacted>")",
            "syncthingAPIURL: \(show(syncthingAPIURL))", "syncthingConfigPath: \(show(syncthingConfigPath))",
            "startupAnnounce: \(startupAnnounce)", "configWait: \(configWait)", "debounce: \(debounce)",
            "debounceMax: \(debounceMax)", "watchedFolders: \(watchedFolders.sorted())",
            "staleRetrigger: \(show(staleRetrigger))", "relayWindow: \(show(relayWindow))",
            "logLevel: \(logLevel.name)", "logFormat: \(logFormat.rawValue)",
            "stGUIAddress: \(show(stGUIAddress))", "stGUIAPIKey: \(stGUIAPIKey == nil ? "nil" : "<redacted>")",
            "metricsFile: \(show(metricsFile))",
        ]
        return "Configuration(" + fields.joined(separator: ", ") + ")"
    }

    package var debugDescription: String { description }

    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "relayBaseURL": relayBaseURL, "syncthingAPIKey": syncthingAPIKey == nil ? "nil" : "<redacted>",
                "syncthingAPIURL": syncthingAPIURL as Any, "syncthingConfigPath": syncthingConfigPath as Any,
                "startupAnnounce": startupAnnounce, "configWait": configWait, "debounce": debounce,
                "debounceMax": debounceMax, "watchedFolders": watchedFolders, "staleRetrigger": staleRetrigger as Any,
                "relayWindow": relayWindow as Any,
                "logLevel": logLevel, "logFormat": logFormat, "stGUIAddress": stGUIAddress as Any,
                "stGUIAPIKey": stGUIAPIKey == nil ? "nil" : "<redacted>", "metricsFile": metricsFile as Any,
            ],
            displayStyle: .struct)
    }
}
