/// The result of one `--doctor` check: its stable name, a status, one reason line and, when something is to be
/// done, the exact fix. Pure data; `Doctor` (NotifyRuntime) fills it in.
///
/// - Important: Reasons and fixes may name paths, addresses and the config owner (the doctor is run by hand), but
///   never the API key and never a full Device ID (only its first block, Syncthing's short ID).
package struct DoctorCheck: Sendable, Equatable {
    /// Stable check names, in the order the doctor runs and prints them. `--doctor --json` uses the raw values;
    /// docs/troubleshooting.md has one entry per name.
    package enum Name: String, Sendable, CaseIterable {
        case configEnvironment = "config.environment"
        case configFile = "config.file"
        case addressSource = "syncthing.address-source"
        case reachable = "syncthing.reachable"
        case apiKey = "syncthing.api-key"
        case tlsPin = "syncthing.tls-pin"
        case deviceID = "syncthing.device-id"
        case eventStream = "syncthing.event-stream"
        case relayURL = "relay.url"
        case relayCABundle = "relay.ca-bundle"
        case relayHealth = "relay.health"
        case relayTrigger = "relay.trigger"
        case peersConnected = "peers.connected"
        case peersSharedFolders = "peers.shared-folders"
    }

    /// PASS: fine. WARN: worth knowing, not a failure (an offline phone is normal). FAIL: wake-ups cannot work until
    /// the fix is applied. SKIP: not run, because an earlier check failed or `--no-trigger` was given.
    package enum Status: String, Sendable, CaseIterable {
        case pass, warn, fail, skip

        /// The four-letter label of the text checklist: `PASS`, `WARN`, `FAIL`, `SKIP`.
        package var label: String { rawValue.uppercased() }
    }

    package var name: Name
    package var status: Status
    /// One line: what was found.
    package var reason: String
    /// What to do, one or two sentences; nil when nothing is to be done.
    package var fix: String?

    package init(_ name: Name, _ status: Status, _ reason: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.reason = reason
        self.fix = fix
    }
}
