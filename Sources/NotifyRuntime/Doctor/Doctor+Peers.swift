import NotifyCore

extension Doctor {
    /// `peers.connected` and `peers.shared-folders`, read while Syncthing answers with the key accepted.
    static func peerChecks(_ client: SyncthingClient, myID: String?, _ configuration: Configuration) -> [DoctorCheck] {
        switch client.connections() {
        case .success(let connections):
            // The devices as the connections list gives them (each with its config's `paused`), for the sweep's rule.
            let devices = connections.map { ConfiguredDevice(deviceID: $0.key, paused: $0.value.paused) }
            let connected = Set(connections.filter { $0.key != myID && $0.value.connected }.map(\.key))
            return [
                connectedCheck(connections, myID: myID),
                sharedFoldersCheck(client, myID: myID, configuration, devices: devices, connected: connected),
            ]
        case .failure(let error):
            return [
                .init(.peersConnected, .warn, "GET /rest/system/connections failed: \(describe(error))"),
                sharedFoldersCheck(client, myID: myID, configuration, devices: [], connected: nil),
            ]
        }
    }

    /// `peers.connected`: how many remote devices are connected, of those not paused (a paused device never
    /// connects, so counting it would read as a problem that is not one).
    static func connectedCheck(_ connections: [String: DeviceConnection], myID: String?) -> DoctorCheck {
        let remote = connections.filter { $0.key != myID }
        let active = remote.filter { !$0.value.paused }
        let paused = remote.count - active.count
        let up = active.filter { $0.value.connected }.count
        let pausedNote = paused == 0 ? "" : "; \(paused) paused, not counted"
        if remote.isEmpty {
            return .init(
                .peersConnected, .warn, "no remote device is configured in Syncthing",
                fix: "Add the iPhone as a device in Syncthing and share the vault folder with it.")
        }
        if active.isEmpty {
            return .init(
                .peersConnected, .warn,
                "every remote device is paused in Syncthing (\(paused)); a paused device is never woken",
                fix: "Resume the iPhone in Syncthing (its device > Resume).")
        }
        if up == 0 {
            return .init(
                .peersConnected, .warn,
                "no remote device is connected (0 of \(active.count)\(pausedNote)); "
                    + "normal while the phone is offline or VaultSync is in the background",
                fix: "Nothing to do if the phone is just offline; otherwise open VaultSync on it and check "
                    + "that it connects to this server.")
        }
        return .init(.peersConnected, .pass, "\(up) of \(active.count) remote devices connected\(pausedNote)")
    }

    /// `peers.shared-folders`: how many watched folders are shared (`SharedPairs`, the sweep's rule) with a
    /// connected device. `connected` is nil when the connection state could not be read.
    private static func sharedFoldersCheck(
        _ client: SyncthingClient, myID: String?, _ configuration: Configuration, devices: [ConfiguredDevice],
        connected: Set<String>?
    ) -> DoctorCheck {
        let folders: [ConfiguredFolder]
        switch client.folders() {
        case .success(let answer): folders = answer
        case .failure(let error):
            return .init(.peersSharedFolders, .warn, "GET /rest/config/folders failed: \(describe(error))")
        }
        let rules = WakeRules(watchedFolders: configuration.watchedFolders)
        let watched = folders.filter { !$0.paused && rules.watches($0.id) }
        let which = configuration.watchedFolders.isEmpty ? "" : " named in WATCHED_FOLDERS"
        guard !watched.isEmpty else {
            return .init(
                .peersSharedFolders, .warn, "no unpaused Syncthing folder\(which) is watched",
                fix: configuration.watchedFolders.isEmpty
                    ? "Add (or resume) the vault folder in Syncthing."
                    : "Set WATCHED_FOLDERS to the folder IDs Syncthing shows (Edit folder > Folder ID), or "
                        + "unset it to watch every folder.")
        }
        guard let connected else {
            return .init(.peersSharedFolders, .warn, "not known: the connection state could not be read")
        }
        let pairs = SharedPairs.of(myID: myID ?? "", devices: devices, folders: folders, rules: rules)
        let shared = Set(pairs.filter { connected.contains($0.device) }.map(\.folder))
        guard shared.isEmpty else {
            return .init(
                .peersSharedFolders, .pass,
                "\(shared.count) of \(watched.count) watched folders shared with a connected device")
        }
        // Shared only with paused devices: sharing is done, the device needs resuming.
        let paused = Set(devices.filter(\.paused).map(\.deviceID))
        let sharedWithPausedOnly =
            pairs.isEmpty && watched.contains { $0.deviceIDs.contains { paused.contains($0) && $0 != myID } }
        return .init(
            .peersSharedFolders, .warn,
            "none of the \(watched.count) watched folder\(watched.count == 1 ? " is" : "s is") shared "
                + "with a connected device" + (connected.isEmpty ? " (none is connected)" : "")
                + (sharedWithPausedOnly ? "; the devices they are shared with are paused" : ""),
            fix: sharedWithPausedOnly
                ? "Resume the iPhone in Syncthing (its device > Resume): a paused device is never woken."
                : "Nothing to do if the phone is just offline; otherwise share the vault folder with "
                    + "the iPhone in Syncthing (Edit folder > Sharing).")
    }
}
