/// Why a wake-up is sent. Also a log value.
package enum WakeReason: String, Sendable, CaseIterable {
    /// The startup announce (STARTUP_ANNOUNCE).
    case announce
    /// News (`PeerTracker`): a LocalIndexUpdated in a watched folder shared with an active peer, or a peer's edge from
    /// in sync to needing data (FolderCompletion).
    case change
    /// Events were lost (gap, restart, oversized poll); a wake-up is sent to be safe.
    case resync
    /// The stale-peer sweep found a peer that is not connected, shares the folder, and still needs data
    /// (STALE_RETRIGGER_SECONDS).
    case stalePeer = "stale-peer"
}
