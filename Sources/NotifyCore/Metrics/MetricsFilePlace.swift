/// What the file system says about where METRICS_FILE goes, as the runtime found it (`MetricsFile.place(of:)`):
/// facts only. `problem` decides whether the service could ever write the file there.
///
/// A place that can never take the file is a configuration error (exit 78, `--check-config` names it): the service
/// would otherwise run for ever with `cannot write METRICS_FILE` in its log and an empty dashboard. A place that
/// fails for a passing reason (a full disk) is not: the service warns and tries again (`MetricsWriteThrottle`).
package struct MetricsFilePlace: Sendable, Equatable {
    /// The directory METRICS_FILE names its file in.
    package enum Directory: Sendable, Equatable {
        case exists
        /// It, or a directory above it, does not exist.
        case missing
        /// A component of the path is a file, not a directory.
        case notADirectory
    }

    /// Creating a file in that directory, as the write does (a temporary file, then a rename).
    package enum Creation: Sendable, Equatable {
        case succeeded
        /// Permission denied: the directory is not writable by this user.
        case denied
        /// A read-only file system: systemd's `ProtectSystem=strict` outside `ReadWritePaths=`, a read-only mount or
        /// a container's read-only root.
        case readOnlyFileSystem
        /// Anything else (a full disk, a quota): passing, so not refused.
        case failedOtherwise
        /// Not tried (no directory, or METRICS_FILE is one).
        case notTried
    }

    package var directory: Directory
    /// METRICS_FILE names an existing directory.
    package var isDirectory: Bool
    /// METRICS_FILE names something that exists and is neither a regular file nor a directory (a device such as
    /// /dev/null, a pipe, a socket, a symbolic link): the write renames its file over it, which must never replace a
    /// device node.
    package var isOtherThanRegularFile: Bool
    package var creation: Creation

    package init(
        directory: Directory, isDirectory: Bool = false, isOtherThanRegularFile: Bool = false,
        creation: Creation = .notTried
    ) {
        self.directory = directory
        self.isDirectory = isDirectory
        self.isOtherThanRegularFile = isOtherThanRegularFile
        self.creation = creation
    }

    /// Why the service could never write METRICS_FILE here, or nil when it can (or may, once a passing failure
    /// passes).
    package var problem: ConfigurationError.Problem? {
        if isDirectory { return .isADirectory }
        if isOtherThanRegularFile { return .notARegularFile }
        switch directory {
        case .missing: return .directoryMissing
        case .notADirectory: return .directoryNotADirectory
        case .exists: break
        }
        switch creation {
        case .denied: return .directoryNotWritable
        case .readOnlyFileSystem: return .readOnlyFileSystem
        case .succeeded, .failedOtherwise, .notTried: return nil
        }
    }
}
