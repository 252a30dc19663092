/// The time limits of the sidecar's requests to Syncthing's REST API, in one place: the client sends them as
/// libcurl's total timeout, and the service announces the same bounds to the watchdog's liveness.
package enum SyncthingTimeouts {
    /// libcurl's total timeout for one Syncthing request other than the long-poll, per address tried: 15 s.
    /// Syncthing on loopback answers in milliseconds; a NAS busy scanning can take seconds, and a request still
    /// unanswered after this long is a Syncthing that is not serving its API.
    package static let request: Duration = .seconds(15)

    /// libcurl's connect timeout for a Syncthing request, at most the request's own limit: 5 s. A connect to
    /// Syncthing on this host or its LAN is quick, so a slow one is a wrong or unreachable address, and the next
    /// address of a fail-over list is tried sooner.
    package static let connect: Duration = .seconds(5)

    /// The long-poll's wait passed as `timeout=`, in whole seconds: 50. At most 50, well inside the 60 s within
    /// which Syncthing up to 1.27.3 wants a new event request to keep computing completions
    /// (docs/syncthing-api.md, the event filter).
    package static let pollWaitSeconds = 50

    /// libcurl's total timeout for a long-poll that may wait `waitSeconds` (0 … `pollWaitSeconds`): the wait plus
    /// `request`, since no bytes flow while Syncthing holds the request.
    package static func poll(waitSeconds: Int) -> Duration { .seconds(Int64(waitSeconds)) + request }

    /// How long a stop waits for its last read (`timeout=0`, `PollLoop.lastRead`), fail-over included: 1 s, also
    /// libcurl's total timeout for it. Syncthing answers it at once; the stop must not spend much of what a service
    /// manager gives it (Docker: 10 s in all) on it.
    package static let lastRead: Duration = .seconds(1)

    /// libcurl's total timeout for a full long-poll: `poll(waitSeconds: pollWaitSeconds)`, 65 s.
    package static let pollRequest: Duration = poll(waitSeconds: pollWaitSeconds)

    /// The longest one request with time limit `limit` may take over an endpoint of `addresses` base URLs, as
    /// `SyncthingAttempts` tries them: every address but the last may spend `connect` failing to connect, the last
    /// the whole `limit`, and a TLS failure re-reads the pin and goes round once more. This, not `limit`, is the
    /// bound the service announces to the watchdog's liveness: `localhost` (two addresses) with a new certificate
    /// takes up to 2 × (5 + 15) s for a status read.
    package static func worstCase(_ limit: Duration, addresses: Int) -> Duration {
        (connect * (max(1, addresses) - 1) + limit) * 2
    }
}
