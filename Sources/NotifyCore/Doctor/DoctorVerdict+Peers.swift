extension DoctorVerdict {
    /// A peer check whose list (`/rest/system/connections` or `/rest/config/folders`) could not be read WARNs: the
    /// peers are worth knowing about, but nothing the doctor can say about them blocks wake-ups.
    package static let peerListUnread: DoctorCheck.Status = .warn

    /// What `GET /rest/system/connections` says about the remote devices, as counts.
    package struct PeerCounts: Sendable, Equatable {
        /// Remote devices listed (the local device, which Syncthing 1.19 lists too, left out).
        package var remote: Int
        /// Of those, how many are paused in Syncthing.
        package var paused: Int
        /// Of the unpaused ones, how many are connected.
        package var connected: Int

        package init(remote: Int, paused: Int, connected: Int) {
            self.remote = remote
            self.paused = paused
            self.connected = connected
        }
    }

    /// Which case of `peers.connected` was hit; `status` is the check's.
    package enum PeersConnected: Sendable, Equatable, CaseIterable {
        /// No remote device is configured.
        case noRemoteDevice
        /// Every remote device is paused: none is ever woken.
        case allPaused
        /// None of the unpaused devices is connected (normal while the phone is offline).
        case noneConnected
        /// At least one unpaused device is connected.
        case connected

        package var status: DoctorCheck.Status { self == .connected ? .pass : .warn }
    }

    /// `peers.connected`: PASS when an unpaused remote device is connected, else WARN (an offline phone is normal).
    /// Paused devices are not counted: a paused device never connects, so counting it would read as a problem
    /// that is not one.
    package static func peersConnected(_ counts: PeerCounts) -> PeersConnected {
        if counts.remote == 0 { return .noRemoteDevice }
        if counts.paused >= counts.remote { return .allPaused }
        return counts.connected == 0 ? .noneConnected : .connected
    }

    /// What `peers.shared-folders` reads from `/rest/config/folders` and the connections list, as counts and flags.
    package struct FolderSharing: Sendable, Equatable {
        /// Unpaused folders the rules watch.
        package var watched: Int
        /// Of those, how many are shared (`SharedPairs`, the sweep's rule) with a connected device; nil when the
        /// connection state could not be read.
        package var sharedWithConnected: Int?
        /// How many (device, folder) pairs share data at all (`SharedPairs`: unpaused remote devices only).
        package var sharedPairs: Int
        /// Whether a watched folder lists a paused remote device.
        package var listsPausedDevice: Bool

        package init(watched: Int, sharedWithConnected: Int?, sharedPairs: Int, listsPausedDevice: Bool) {
            self.watched = watched
            self.sharedWithConnected = sharedWithConnected
            self.sharedPairs = sharedPairs
            self.listsPausedDevice = listsPausedDevice
        }
    }

    /// Which case of `peers.shared-folders` was hit; `status` is the check's.
    package enum PeersSharedFolders: Sendable, Equatable, CaseIterable {
        /// No unpaused folder is watched.
        case noneWatched
        /// Folders are watched, but the connection state could not be read.
        case connectionsUnknown
        /// At least one watched folder is shared with a connected device.
        case shared
        /// None is shared with a connected device, and the devices they are shared with are all paused: sharing is
        /// done, the device needs resuming.
        case sharedWithPausedOnly
        /// None is shared with a connected device (normal while the phone is offline).
        case notShared

        package var status: DoctorCheck.Status { self == .shared ? .pass : .warn }
    }

    /// `peers.shared-folders`: PASS when a watched folder is shared with a connected device, else WARN; checked in
    /// the order of `PeersSharedFolders`' cases.
    package static func peersSharedFolders(_ sharing: FolderSharing) -> PeersSharedFolders {
        guard sharing.watched > 0 else { return .noneWatched }
        guard let shared = sharing.sharedWithConnected else { return .connectionsUnknown }
        if shared > 0 { return .shared }
        return sharing.sharedPairs == 0 && sharing.listsPausedDevice ? .sharedWithPausedOnly : .notShared
    }
}
