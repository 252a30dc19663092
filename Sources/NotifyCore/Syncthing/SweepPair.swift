/// One (remote device, folder) pair the stale-peer sweep asks `/rest/db/completion` about.
public struct SweepPair: Sendable, Equatable, Hashable {
    public var device: String
    public var folder: String

    public init(device: String, folder: String) {
        self.device = device
        self.folder = folder
    }
}
