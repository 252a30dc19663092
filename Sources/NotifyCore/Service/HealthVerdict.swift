/// What `--healthcheck` found (and `--status` shows): healthy, or the first reason it is not. Each reason other
/// than `.healthy` exits 1 (`ExitStatus.checkFailed`).
package enum HealthVerdict: String, Sendable, Equatable, CaseIterable {
    case healthy
    /// The environment is invalid (the service would not run either).
    case configuration
    /// No state file, or no usable state directory.
    case noState = "no-state"
    /// A state file that cannot be read: garbage, a wrong header, larger than `ServiceState.maxBytes`, not a
    /// regular file or not its owner's.
    case unreadable = "unreadable-state"
    /// The state file's writer ended without removing it (a SIGKILL, the OOM killer, a crash): `ServiceLiveness`.
    case notRunning = "not-running"
    /// The last successful poll is too old (or too far in the future), or there was none yet.
    case stale
    /// config.xml or the environment gives no usable Syncthing access.
    case noAccess = "no-access"
    /// Syncthing did not answer `/rest/system/status` with 200 and a status document.
    case syncthingDown = "syncthing-down"
    /// The whole check did not finish within its bound.
    case timedOut = "timed-out"

    /// `.ok` when healthy, `.checkFailed` otherwise.
    package var exitStatus: ExitStatus { self == .healthy ? .ok : .checkFailed }

    /// What the state file alone says, as the service itself judges it: missing, unreadable, its writer gone, its
    /// last successful poll older than `ServiceState.maxPollAge` (`ServiceState.isFresh`), or `.healthy` (then Syncthing
    /// is asked, when the environment says how).
    /// - Parameters:
    ///   - read: the file as read.
    ///   - probe: what the reader found out about its writer (`ServiceState.liveness`).
    ///   - now: wall-clock seconds since the Unix epoch.
    package static func fromStateFile(_ read: StateFileRead, probe: WriterProbe, now: Int64) -> HealthVerdict {
        switch read {
        case .missing: return .noState
        case .unreadable: return .unreadable
        case .found(let state):
            if state.liveness(probe, now: now) == .stoppedWithoutFarewell { return .notRunning }
            return state.isFresh(now: now) ? .healthy : .stale
        }
    }
}

/// A state file as a reader found it.
package enum StateFileRead: Sendable, Equatable {
    /// No file (or no directory for it).
    case missing
    /// A file that is not a state file this version reads (`HealthVerdict.unreadable`).
    case unreadable
    case found(ServiceState)

    /// The state, when one was read.
    package var state: ServiceState? {
        if case .found(let state) = self { return state }
        return nil
    }

    /// Classifies a file's bytes: more than `ServiceState.maxBytes` or not `ServiceState.decode`-able is unreadable.
    package static func classify(_ bytes: some Collection<UInt8>) -> StateFileRead {
        guard bytes.count <= ServiceState.maxBytes,
            let state = ServiceState.decode(String(decoding: bytes, as: UTF8.self))
        else { return .unreadable }
        return .found(state)
    }
}
