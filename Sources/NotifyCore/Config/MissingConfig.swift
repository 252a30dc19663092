/// Why the path SYNCTHING_CONFIG names gave no config.xml once the first-boot wait is over, decided from what the
/// locator found on the file system; and whether that may still change (exit 75) or will not (78).
package enum MissingConfig {
    /// Why the path is not (or not yet) a config.xml.
    package enum Problem: String, Sendable, Equatable, CaseIterable {
        /// Nothing at the path, but its directory exists, or the path lies below an empty directory (a mount point
        /// whose volume is not mounted yet); or the path is an empty directory (Syncthing has not written into it
        /// yet). It may still appear: temporary (exit 75).
        case notThereYet
        /// A directory that holds files, but no config.xml.
        case directoryWithoutConfig
        /// Neither the path nor its parent directory exists, and no empty directory on the way explains it.
        case noParentDirectory
        /// A FIFO, socket or device; or the named directory's config.xml is itself a directory.
        case notAFile

        /// True when waiting, or a restart, may fix it (only `.notThereYet`): `ConfigWait.exitStatus(mayStillAppear:)`.
        package var mayStillAppear: Bool { self == .notThereYet }
    }

    /// What is at a path: nothing, a file (or something this process may not look at, which a later start may
    /// read), a directory, or a FIFO, socket or device.
    package enum Entry: Sendable, Equatable { case missing, file, directory, other }

    /// The problem, and whether it concerns the named directory's `config.xml` rather than the path itself.
    ///
    /// Only the facts a branch needs are asked for, in this order:
    /// * the path is a directory: its `config.xml` is a directory or other → `.notAFile`; missing, and the directory
    ///   is empty (`isEmpty(0)`) → `.notThereYet`, else `.directoryWithoutConfig` (of the path itself); a file →
    ///   `.notThereYet`.
    /// * other → `.notAFile`; a file (it appeared after the last look) → `.notThereYet`.
    /// * missing: its parent is a directory → `.notThereYet`; else the nearest ancestor above the parent that exists
    ///   decides: an empty directory (a volume not mounted yet) → `.notThereYet`, anything else, or none up to `/`,
    ///   → `.noParentDirectory`.
    /// - Parameters:
    ///   - path: what is at the path.
    ///   - inner: what is at `path/config.xml` (asked only when the path is a directory).
    ///   - parent: what is at the path's parent directory.
    ///   - above: the ancestors above the parent, nearest first, up to and including `/`: each with whether it is an
    ///     empty directory (read lazily, up to the first that exists).
    ///   - isEmpty: whether the path, a directory, is empty.
    package static func explain(
        path: Entry, inner: () -> Entry, isEmpty: () -> Bool, parent: () -> Entry,
        above: some Sequence<(entry: Entry, emptyDirectory: () -> Bool)>
    ) -> (problem: Problem, atInner: Bool) {
        switch path {
        case .directory:
            switch inner() {
            case .directory, .other: return (.notAFile, true)
            case .missing: return isEmpty() ? (.notThereYet, true) : (.directoryWithoutConfig, false)
            case .file: return (.notThereYet, true)
            }
        case .other: return (.notAFile, false)
        case .file: return (.notThereYet, false)
        case .missing:
            if parent() == .directory { return (.notThereYet, false) }
            for ancestor in above where ancestor.entry != .missing {
                let empty = ancestor.entry == .directory && ancestor.emptyDirectory()
                return (empty ? .notThereYet : .noParentDirectory, false)
            }
            return (.noParentDirectory, false)
        }
    }
}
