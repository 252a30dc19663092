import NotifyCore

/// `NAME=value` lines (split at the first `=`; a later line wins) through `Configuration.parse(environment:)`.
///
/// Invariants: an error names a variable that is set (or RELAY_URL as missing, or SYNCTHING_API_KEY as empty), and
/// `parseAll` names each at most once, the first being `parse`'s; an accepted configuration has every
/// value within the ranges its documentation gives (RELAY_URL https, or http on loopback, without user info, query,
/// fragment or trailing slash; API keys without whitespace; an absolute config path); its description does not
/// depend on the API keys (they are redacted); and it renders back to an environment that parses to the same
/// configuration.
func fuzzConfiguration(_ input: [UInt8], _ check: inout InvariantCheck) {
    var environment: [String: String] = [:]
    for line in input.split(separator: 0x0A, omittingEmptySubsequences: true) {
        let text = String(decoding: line, as: UTF8.self)
        guard let equals = text.firstIndex(of: "=") else { continue }
        environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
    }

    let survey = Configuration.parseAll(environment: environment)
    check.expect(
        Set(survey.errors.map(\.variable)).count == survey.errors.count, "parseAll named a variable twice")
    for error in survey.errors {
        let value = environment[error.variable.rawValue]
        switch error.problem {
        case .missing:
            check.expect(error.variable == .relayURL && (value ?? "").isEmpty, "\(error.message) for a set variable")
        case .empty:
            check.expect(value == "", "\(error.message) for a variable that is not empty")
        default:
            check.expect(!(value ?? "").isEmpty, "error \(error.message) for a variable that is not set")
        }
    }

    let configuration: Configuration
    switch Configuration.parse(environment: environment) {
    case .failure(let error):
        check.expect(survey.errors.first == error, "parseAll's first error is not parse's")
        return
    case .success(let parsed):
        check.expect(survey.errors.isEmpty && survey.remainder == parsed, "parseAll disagrees with parse")
        configuration = parsed
    }
    checkRanges(configuration, &check)

    var otherKeys = configuration
    if otherKeys.syncthingAPIKey != nil { otherKeys.syncthingAPIKey = "k" }
    if otherKeys.stGUIAPIKey != nil { otherKeys.stGUIAPIKey = "k" }
    check.expect(
        configuration.description == otherKeys.description
            && String(reflecting: configuration) == String(reflecting: otherKeys),
        "the description shows an API key")

    let rendered = render(configuration, original: environment)
    switch Configuration.parse(environment: rendered) {
    case .success(let again):
        check.expect(again == configuration, "round trip through \(rendered) changed \(configuration) into \(again)")
    case .failure(let error):
        check.fail("the rendered environment \(rendered) fails: \(error.message)")
    }
}

private func checkRanges(_ c: Configuration, _ check: inout InvariantCheck) {
    let relay = URLParts(c.relayBaseURL)
    check.expect(
        relay.map {
            ($0.scheme == "https" || ($0.scheme == "http" && hostIsLoopback($0.host))) && !$0.host.isEmpty
                && !$0.hasUserInfo && !$0.hasQuery && !$0.hasFragment && !$0.path.hasSuffix("/")
        } ?? false, "RELAY_URL accepted as \(c.relayBaseURL)")
    for key in [c.syncthingAPIKey, c.stGUIAPIKey].compactMap({ $0 }) {
        check.expect(
            !key.isEmpty && !key.unicodeScalars.contains { $0.properties.isWhitespace },
            "API key \(key.debugDescription)")
    }
    check.expect(c.syncthingConfigPath.map { $0.hasPrefix("/") } ?? true, "config path not absolute")
    check.expect(c.metricsFile.map { $0.hasPrefix("/") } ?? true, "metrics file not absolute")
    check.expect(c.configWait >= .zero && c.configWait <= .seconds(86_400), "config wait \(c.configWait)")
    check.expect(c.debounce >= .zero && c.debounce <= .seconds(3_600), "debounce \(c.debounce)")
    check.expect(c.debounceMax >= c.debounce && c.debounceMax <= .seconds(86_400), "debounce max \(c.debounceMax)")
    check.expect(
        c.staleRetrigger.map { $0 >= .seconds(10) && $0 <= .seconds(31_536_000) } ?? true, "stale \(c.staleRetrigger!)")
    check.expect(c.relayWindow.map { $0 >= .seconds(1) && $0 <= .seconds(3_600) } ?? true, "window \(c.relayWindow!)")
    check.expect(
        c.watchedFolders.allSatisfy {
            !$0.isEmpty && !$0.unicodeScalars.contains { $0.properties.generalCategory == .control }
        },
        "a watched folder ID is empty or has a control character")
}

/// The environment a user would write for `c`. STGUIADDRESS is copied from `original` (the mapping of a GUI address
/// to base URLs is not one to one), and so is WATCHED_FOLDERS when a folder ID would not survive being joined with
/// commas (one that starts with a combining mark, or ends with a prepended one, fuses with the comma into one
/// character).
func render(_ c: Configuration, original: [String: String]) -> [String: String] {
    func seconds(_ d: Duration) -> String {
        let (whole, atto) = d.components
        let nanos = String(atto / 1_000_000_000)
        return "\(whole)." + String(repeating: "0", count: 9 - nanos.count) + nanos
    }
    var env: [String: String] = [
        "RELAY_URL": c.relayBaseURL + "/api/v1",
        "STARTUP_ANNOUNCE": c.startupAnnounce ? "true" : "false",
        "SYNCTHING_CONFIG_WAIT_SECONDS": "\(c.configWait.components.seconds)",
        "DEBOUNCE_SECONDS": seconds(c.debounce),
        "DEBOUNCE_MAX_SECONDS": seconds(c.debounceMax),
        "STALE_RETRIGGER_SECONDS": c.staleRetrigger.map { "\($0.components.seconds)" } ?? "0",
        "RELAY_WINDOW_SECONDS": c.relayWindow.map { "\($0.components.seconds)" } ?? "0",
        "LOG_LEVEL": c.logLevel.name.uppercased(),
        "LOG_FORMAT": c.logFormat.rawValue,
    ]
    env["SYNCTHING_API_KEY"] = c.syncthingAPIKey
    env["STGUIAPIKEY"] = c.stGUIAPIKey
    env["SYNCTHING_CONFIG"] = c.syncthingConfigPath
    env["METRICS_FILE"] = c.metricsFile
    env["SYNCTHING_API_URL"] = c.syncthingAPIURL.map { endpoint in
        endpoint.unixSocketPath.map { (endpoint.tls ? "unixs://" : "unix://") + $0 } ?? endpoint.baseURLs[0]
    }
    env["STGUIADDRESS"] = c.stGUIAddress == nil ? nil : original["STGUIADDRESS"]
    let joinable = c.watchedFolders.allSatisfy { ("," + $0 + ",").count == $0.count + 2 }
    env["WATCHED_FOLDERS"] =
        joinable ? c.watchedFolders.sorted().joined(separator: " , ") : original["WATCHED_FOLDERS"]
    return env
}
