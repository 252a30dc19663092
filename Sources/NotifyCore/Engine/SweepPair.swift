/// One (remote device, folder) pair the stale-peer sweep asks `/rest/db/completion` about.
package struct SweepPair: Sendable, Equatable, Hashable {
    package var device: String
    package var folder: String

    package init(device: String, folder: String) {
        self.device = device
        self.folder = folder
    }
}
