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
                .init(
                    .peersConnected, DoctorVerdict.peerListUnread,
                    "GET /rest/system/connections failed: \(describe(error))"),
                sharedFoldersCheck(client, myID: myID, configuration, devices: [], connected: nil),
            ]
        }
    }

    /// `peers.connected`: how many remote devices are connected, of those not paused (`DoctorVerdict.peersConnected`).
    static func connectedCheck(_ connections: [String: DeviceConnection], myID: String?) -> DoctorCheck {
        let remote = connections.filter { $0.key != myID }
        let counts = DoctorVerdict.PeerCounts(
            remote: remote.count, paused: remote.filter(\.value.paused).count,
            connected: remote.filter { !$0.value.paused && $0.value.connected }.count)
        let active = counts.remote - counts.paused
        let pausedNote = counts.paused == 0 ? "" : "; \(counts.paused) paused, not counted"
        let verdict = DoctorVerdict.peersConnected(counts)
        switch verdict {
        case .noRemoteDevice:
            return .init(
                .peersConnected, verdict.status, "no remote device is configured in Syncthing",
                fix: "Add the iPhone as a device in Syncthing and share the vault folder with it.")
        case .allPaused:
            return .init(
                .peersConnected, verdict.status,
                "every remote device is paused in Syncthing (\(counts.paused)); a paused device is never woken",
                fix: "Resume the iPhone in Syncthing (its device > Resume).")
        case .noneConnected:
            return .init(
                .peersConnected, verdict.status,
                "no remote device is connected (0 of \(active)\(pausedNote)); "
                    + "normal while the phone is offline or VaultSync is in the background",
                fix: "Nothing to do if the phone is just offline; otherwise open VaultSync on it and check "
                    + "that it connects to this server.")
        case .connected:
            return .init(
                .peersConnected, verdict.status,
                "\(counts.connected) of \(active) remote devices connected\(pausedNote)")
        }
    }

    /// `peers.shared-folders`: how many watched folders are shared with a connected device
    /// (`DoctorVerdict.peersSharedFolders`). `connected` is nil when the connection state could not be read.
    private static func sharedFoldersCheck(
        _ client: SyncthingClient, myID: String?, _ configuration: Configuration, devices: [ConfiguredDevice],
        connected: Set<String>?
    ) -> DoctorCheck {
        let folders: [ConfiguredFolder]
        switch client.folders() {
        case .success(let answer): folders = answer
        case .failure(let error):
            return .init(
                .peersSharedFolders, DoctorVerdict.peerListUnread, "GET /rest/config/folders failed: \(describe(error))"
            )
        }
        let rules = WakeRules(watchedFolders: configuration.watchedFolders)
        let watched = folders.filter { !$0.paused && rules.watches($0.id) }
        let pairs = SharedPairs.of(myID: myID ?? "", devices: devices, folders: folders, rules: rules)
        let paused = Set(devices.filter(\.paused).map(\.deviceID))
        let sharing = DoctorVerdict.FolderSharing(
            watched: watched.count,
            sharedWithConnected: connected.map { up in Set(pairs.filter { up.contains($0.device) }.map(\.folder)).count
            },
            sharedPairs: pairs.count,
            listsPausedDevice: watched.contains { $0.deviceIDs.contains { paused.contains($0) && $0 != myID } })
        let verdict = DoctorVerdict.peersSharedFolders(sharing)
        let which = configuration.watchedFolders.isEmpty ? "" : " named in WATCHED_FOLDERS"
        let notShared =
            "none of the \(watched.count) watched folder\(watched.count == 1 ? " is" : "s is") shared "
            + "with a connected device" + (connected?.isEmpty == true ? " (none is connected)" : "")
        switch verdict {
        case .noneWatched:
            return .init(
                .peersSharedFolders, verdict.status, "no unpaused Syncthing folder\(which) is watched",
                fix: configuration.watchedFolders.isEmpty
                    ? "Add (or resume) the vault folder in Syncthing."
                    : "Set WATCHED_FOLDERS to the folder IDs Syncthing shows (Edit folder > Folder ID), or "
                        + "unset it to watch every folder.")
        case .connectionsUnknown:
            return .init(
                .peersSharedFolders, verdict.status, "not known: the connection state could not be read")
        case .shared:
            return .init(
                .peersSharedFolders, verdict.status,
                "\(sharing.sharedWithConnected ?? 0) of \(watched.count) watched folders shared with a connected device"
            )
        case .sharedWithPausedOnly:
            return .init(
                .peersSharedFolders, verdict.status, notShared + "; the devices they are shared with are paused",
                fix: "Resume the iPhone in Syncthing (its device > Resume): a paused device is never woken.")
        case .notShared:
            return .init(
                .peersSharedFolders, verdict.status, notShared,
                fix: "Nothing to do if the phone is just offline; otherwise share the vault folder with "
                    + "the iPhone in Syncthing (Edit folder > Sharing).")
        }
    }
}
