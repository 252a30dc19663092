/// Syncthing's `remoteState` of a (device, folder) pair, in FolderCompletion events and `/rest/db/completion`
/// answers since 1.20.0 (lib/model `remoteFolderState`; docs.syncthing.net "FolderCompletion").
package enum RemoteFolderState: String, Sendable, Equatable {
    /// The remote device is not connected, so its side is not known.
    case unknown
    /// The remote device shares the folder but has paused it.
    case paused
    /// The remote device does not share the folder with us (it has not accepted it, or removed it).
    case notSharing
    /// The remote device shares the folder.
    case valid
}
