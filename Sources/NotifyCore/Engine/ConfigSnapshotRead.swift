extension Engine.ConfigSnapshot {
    /// Reads the configured devices, then the folders, and says which answers were malformed.
    ///
    /// - Parameters:
    ///   - devices: reads `/rest/config/devices`.
    ///   - folders: reads `/rest/config/folders`; called only once the devices answered, since a snapshot needs both.
    /// - Returns: the snapshot, nil when either read failed; `malformed` holds `.devices` for a malformed devices
    ///   answer and `.folders` for a malformed folders answer or a folder whose `devices` list could not be read
    ///   (that folder stays in the snapshot; its pairs are skipped later).
    package static func read(
        devices: () -> Result<[ConfiguredDevice], SyncthingError>,
        folders: () -> Result<[ConfiguredFolder], SyncthingError>
    ) -> (snapshot: Engine.ConfigSnapshot?, malformed: Set<PeerAnswer>) {
        var malformed: Set<PeerAnswer> = []
        let devicesAnswer = devices()
        if devicesAnswer.isMalformed { malformed.insert(.devices) }
        guard case .success(let configuredDevices) = devicesAnswer else { return (nil, malformed) }
        let foldersAnswer = folders()
        switch foldersAnswer {
        case .success(let configuredFolders):
            if configuredFolders.contains(where: \.devicesUnreadable) { malformed.insert(.folders) }
            return (Engine.ConfigSnapshot(devices: configuredDevices, folders: configuredFolders), malformed)
        case .failure(let error):
            if error == .malformed { malformed.insert(.folders) }
            return (nil, malformed)
        }
    }
}
