/// The (remote device, folder) pairs that share data, as Syncthing's config says: every unpaused remote device ×
/// every unpaused folder the rules watch that lists it. The local device is never a peer. Membership comes from the
/// config, never from completion numbers (an unshared folder reports "needs everything").
///
/// The one rule for "shared": the stale-peer sweep checks these pairs (`PeerTracker`), and `--doctor` reports the
/// watched folders shared with a connected device from them.
package enum SharedPairs {
    /// The shared pairs of this config, folder by folder in config order.
    /// - Parameters:
    ///   - myID: this server's Device ID.
    ///   - devices: the configured devices (`/rest/config/devices`, or the device entries of
    ///     `/rest/system/connections`, which carry the same `paused`).
    ///   - folders: the configured folders (`/rest/config/folders`).
    package static func of(
        myID: String, devices: [ConfiguredDevice], folders: [ConfiguredFolder], rules: WakeRules
    ) -> [SweepPair] {
        let active = Set(devices.filter { !$0.paused && $0.deviceID != myID }.map(\.deviceID))
        var pairs: [SweepPair] = []
        for folder in folders where !folder.paused && rules.watches(folder.id) {
            for device in folder.deviceIDs where active.contains(device) {
                pairs.append(SweepPair(device: device, folder: folder.id))
            }
        }
        return pairs
    }
}
