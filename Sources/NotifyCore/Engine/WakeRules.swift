/// The wake rules: LocalIndexUpdated in a watched folder; FolderCompletion in a watched folder with needItems,
/// needBytes or needDeletes above 0. Nothing else. `PeerTracker` decides which of those are news.
package struct WakeRules: Sendable, Equatable {
    /// The event types the sidecar subscribes to, as one server-side filter (docs/syncthing-api.md, The event
    /// filter). FolderCompletion in the mask also keeps Syncthing 1.19–1.27.3 computing completions
    /// (docs/syncthing-api.md, Completion and connections). ConfigSaved says that which folders are shared with whom,
    /// or the GUI address, key or TLS, may have changed (`Engine`); its payload (the whole config, API key included)
    /// is never decoded.
    package static let eventMask = "LocalIndexUpdated,FolderCompletion,ConfigSaved"

    /// Folder IDs to watch; empty means every folder (WATCHED_FOLDERS).
    package var watchedFolders: Set<String>

    package init(watchedFolders: Set<String>) { self.watchedFolders = watchedFolders }

    /// Whether `folder` is watched. An event without a folder is treated as watched (never miss a change).
    package func watches(_ folder: String?) -> Bool {
        guard !watchedFolders.isEmpty, let folder else { return true }
        return watchedFolders.contains(folder)
    }
}
