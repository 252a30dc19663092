/// What the sidecar reads from Syncthing's config.xml: the `<gui>` element's address, API key and TLS switch.
///
/// Source: docs/syncthing-api.md, GUI address forms and unix sockets. `enabled` and `tls` are attributes of
/// `<configuration><gui>`; `address` and `apikey` are its child elements.
package struct SyncthingGUIConfig: Sendable, Equatable {
    /// `<gui><address>` text, trimmed; nil when the element is absent (Syncthing then uses `127.0.0.1:8384`), `""`
    /// when present but empty.
    package var address: String?
    /// `<gui><apikey>` text, trimmed; nil when absent or empty (Syncthing then makes up a random key at load time that
    /// the sidecar cannot know).
    package var apiKey: String?
    /// `<gui tls="…">`, false when absent.
    package var tls: Bool
    /// `<gui enabled="…">`, true when absent. A disabled GUI also disables the REST API.
    package var enabled: Bool

    package init(address: String?, apiKey: String?, tls: Bool, enabled: Bool = true) {
        self.address = address
        self.apiKey = apiKey
        self.tls = tls
        self.enabled = enabled
    }
}

extension SyncthingGUIConfig: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Redacts the API key.
    package var description: String {
        let key = apiKey == nil ? "nil" : "<redacted>"
        return "SyncthingGUIConfig(address: \(address ?? "nil"), apiKey: \(key), tls: \(tls), enabled: \(enabled))"
    }
    package var debugDescription: String { description }
    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "address": address as Any, "apiKey": apiKey == nil ? "nil" : "<redacted>", "tls": tls,
                "enabled": enabled,
            ], displayStyle: .struct)
    }
}
