import NotifyCore

/// What the sidecar reads from Syncthing's config.xml: the `<gui>` element's address, API key and TLS switch.
///
/// Source: docs/syncthing-api.md, GUI address forms and unix sockets. `enabled` and `tls` are attributes of
/// `<configuration><gui>`; `address` and `apikey` are its child elements.
public struct SyncthingGUIConfig: Sendable, Equatable {
    /// `<gui><address>` text, trimmed; nil when the element is absent (Syncthing then uses `127.0.0.1:8384`), `""`
    /// when present but empty.
    public var address: String?
    /// `<gui><apikey>` text, trimmed; nil when absent or empty (Syncthing then makes up a random key at load time that
    /// the sidecar cannot know).
    public var apiKey: String?
    /// `<gui tls="…">`, false when absent.
    public var tls: Bool
    /// `<gui enabled="…">`, true when absent. A disabled GUI also disables the REST API.
    public var enabled: Bool

    public init(address: String?, apiKey: String?, tls: Bool, enabled: Bool = true) {
        self.address = address
        self.apiKey = apiKey
        self.tls = tls
        self.enabled = enabled
    }
}

extension SyncthingGUIConfig: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Redacts the API key.
    public var description: String {
        let key = apiKey == nil ? "nil" : "<redacted>"
        return "SyncthingGUIConfig(address: \(address ?? "nil"), apiKey: \(key), tls: \(tls), enabled: \(enabled))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "address": address as Any, "apiKey": apiKey == nil ? "nil" : "<redacted>", "tls": tls,
                "enabled": enabled,
            ], displayStyle: .struct)
    }
}
