/// Where Syncthing's address, API key and certificate pin come from: the precedence between the helper's
/// environment, Syncthing's own variables and config.xml's `<gui>`, as a pure rule over plain inputs.
/// `SyncthingAccess.resolve` (NotifyRuntime) reads config.xml when `readsConfigFile` says so, then carries it out.
package enum SyncthingAccessRule {
    /// Syncthing's default listen address when `<gui><address>` is absent (`lib/config` default tag).
    package static let defaultGUIAddress = "127.0.0.1:8384"

    /// Where the endpoint came from.
    package enum AddressSource: Sendable, Equatable {
        /// The sidecar's SYNCTHING_API_URL.
        case apiURLVariable
        /// Syncthing's STGUIADDRESS, set in the sidecar's environment too.
        case stGUIAddress
        /// `<gui><address>` of config.xml (or Syncthing's default `127.0.0.1:8384` when it has none).
        case configFile
    }

    /// Where the API key came from.
    package enum KeySource: Sendable, Equatable {
        /// The sidecar's SYNCTHING_API_KEY.
        case apiKeyVariable
        /// Syncthing's STGUIAPIKEY, set in the sidecar's environment too.
        case stGUIAPIKey
        /// `<gui><apikey>` of config.xml. Only this key can change under a running sidecar: after a 401/403 re-read
        /// config.xml once (docs/syncthing-api.md, auth and the API key).
        case configFile
    }

    /// What the rule chose.
    package struct Choice: Sendable, Equatable {
        package var endpoint: SyncthingEndpoint
        package var source: AddressSource
        package var apiKey: String
        package var keySource: KeySource
        /// True when the endpoint uses TLS: then config.xml's `https-cert.pem` is pinned, if its directory is known.
        package var pinsCertificate: Bool { endpoint.tls }

        package init(endpoint: SyncthingEndpoint, source: AddressSource, apiKey: String, keySource: KeySource) {
            self.endpoint = endpoint
            self.source = source
            self.apiKey = apiKey
            self.keySource = keySource
        }
    }

    /// Why the rule could not choose.
    package enum Refusal: Error, Sendable, Equatable {
        /// The address or the key had to come from config.xml, and there is no `<gui>` to read (the caller says why).
        case configFileNeeded
        /// config.xml has `<gui enabled="false">` and SYNCTHING_API_URL does not name the endpoint.
        case guiDisabled
        /// config.xml's `<gui><address>` is not an address `SyncthingEndpoint.fromGUIAddress` understands.
        case invalidAddress
        /// config.xml was read, and neither it nor the environment has a key.
        case noAPIKey
    }

    /// True when the environment alone does not give both an address and a key, so config.xml must be read (and
    /// the service waits for it at start).
    package static func needsConfigFile(_ configuration: Configuration) -> Bool {
        (configuration.syncthingAPIURL == nil && configuration.stGUIAddress == nil)
            || (configuration.syncthingAPIKey == nil && configuration.stGUIAPIKey == nil)
    }

    /// True when config.xml is looked for at all: when it is needed, or, without waiting, when the environment's
    /// endpoint uses TLS (to find `https-cert.pem`).
    package static func readsConfigFile(_ configuration: Configuration) -> Bool {
        needsConfigFile(configuration) || ((configuration.syncthingAPIURL ?? configuration.stGUIAddress)?.tls ?? false)
    }

    /// Applies the precedence rules.
    ///
    /// * Address: SYNCTHING_API_URL, else STGUIADDRESS (TLS from its scheme, as Syncthing does), else config.xml
    ///   `<gui><address>` with its `tls` attribute (absent address: `defaultGUIAddress`).
    /// * Key: SYNCTHING_API_KEY, else STGUIAPIKEY (Syncthing accepts it beside the config key: docs/syncthing-api.md,
    ///   auth and the API key), else config.xml `<gui><apikey>`.
    /// * A `<gui enabled="false">` in config.xml refuses unless SYNCTHING_API_URL names the endpoint (it may be
    ///   another instance): a disabled GUI serves no REST API.
    ///
    /// - Parameters:
    ///   - configuration: the parsed environment.
    ///   - gui: config.xml's `<gui>`, or nil when it was not read or could not be.
    /// - Returns: the choice, or the first missing piece, checked in this order: the address (`.configFileNeeded`,
    ///   `.invalidAddress`), `.guiDisabled`, the key (`.noAPIKey` when config.xml was read, else
    ///   `.configFileNeeded`).
    package static func choose(configuration: Configuration, gui: SyncthingGUIConfig?) -> Result<Choice, Refusal> {
        let endpoint: SyncthingEndpoint
        let source: AddressSource
        if let url = configuration.syncthingAPIURL {
            (endpoint, source) = (url, .apiURLVariable)
        } else if let address = configuration.stGUIAddress {
            (endpoint, source) = (address, .stGUIAddress)
        } else {
            guard let gui else { return .failure(.configFileNeeded) }
            guard let mapped = SyncthingEndpoint.fromGUIAddress(gui.address ?? defaultGUIAddress, tls: gui.tls) else {
                return .failure(.invalidAddress)
            }
            (endpoint, source) = (mapped, .configFile)
        }
        if source != .apiURLVariable, let gui, !gui.enabled { return .failure(.guiDisabled) }

        if let key = configuration.syncthingAPIKey {
            return .success(Choice(endpoint: endpoint, source: source, apiKey: key, keySource: .apiKeyVariable))
        } else if let key = configuration.stGUIAPIKey {
            return .success(Choice(endpoint: endpoint, source: source, apiKey: key, keySource: .stGUIAPIKey))
        } else if let key = gui?.apiKey {
            return .success(Choice(endpoint: endpoint, source: source, apiKey: key, keySource: .configFile))
        }
        return .failure(gui != nil ? .noAPIKey : .configFileNeeded)
    }
}
