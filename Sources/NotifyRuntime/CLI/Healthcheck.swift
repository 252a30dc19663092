import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `vaultsync-notify --healthcheck`, for Docker's HEALTHCHECK (README.md, "Docker HEALTHCHECK"): silent, exit 0
/// (healthy) or 1, an answer in under 2 s, and never a call to the relay.
///
/// Healthy means both:
/// 1. the running service made progress recently: its state file (`StateFile`, same location rule, same user)
///    shows a successful event poll within `ServiceState.maxPollAge` (120 s) of the wall clock, and its writer still
///    runs (`ServiceLiveness`: the lock beside the file held, or the recorded process alive; a SIGKILLed service
///    reads as not running at once); and
/// 2. the Syncthing API answers `GET /rest/system/status` (access resolved as the service does, from the
///    environment and config.xml, without waiting for config.xml; 1.2 s per address).
///
/// The relay category in the state file is ignored: an offline phone or an inactive subscription is not
/// something a restart fixes. Before the service's first successful poll the answer is unhealthy; give the
/// container a `--start-period` (see README).
package enum Healthcheck {
    /// Why the service is not healthy (for tests and `--status`; the mode itself prints nothing).
    typealias Verdict = HealthVerdict

    /// Runs the check. Silent: writes nothing to stdout or stderr.
    /// - Parameter environment: the process environment (the service's variables, RUNTIME_DIRECTORY).
    /// - Returns: `.ok` when healthy, `.checkFailed` otherwise; never anything else.
    package static func run(environment: [String: String]) -> ExitStatus {
        bounded(HealthcheckTimeouts.budget) { check(environment: environment) }.exitStatus
    }

    /// Runs `body` on a thread of its own and waits at most `limit` for it; `.timedOut` when it does not finish
    /// (the thread is left behind: the process exits right after).
    static func bounded(_ limit: Duration, _ body: @escaping @Sendable () -> Verdict) -> Verdict {
        let result = ThreadSafe<Verdict?>(nil)
        let done = DispatchSemaphore(value: 0)
        DetachedThread.detach {
            let verdict = body()
            result.withLock { $0 = verdict }
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(limit.nanoseconds)) == .success else { return .timedOut }
        return result.withLock { $0 } ?? .timedOut
    }

    /// The check itself, every step bounded: file reads are local and capped at 4 KiB, config.xml is read
    /// without waiting, the HTTP request has `HealthcheckTimeouts.request`.
    /// - Parameters:
    ///   - now: wall-clock seconds since the Unix epoch.
    ///   - transport: the HTTP transport for the status request (default libcurl).
    static func check(
        environment: [String: String], now: Int64 = SystemClock().unixSeconds(),
        transport: @autoclosure () -> any HTTPTransport = CurlTransport()
    ) -> Verdict {
        probe(environment: environment, now: now, transport: transport()).verdict
    }

    /// `check`, and the client that reached Syncthing (set only when the verdict is `.healthy`), so that `--status`
    /// asks its next question with the access the check resolved instead of reading config.xml again.
    static func probe(
        environment: [String: String], now: Int64, transport: @autoclosure () -> any HTTPTransport
    ) -> (verdict: Verdict, client: SyncthingClient?) {
        guard case .success(let configuration) = Configuration.parse(environment: environment) else {
            return (.configuration, nil)
        }
        guard let file = StateFile.locate(environment: environment, create: false) else { return (.noState, nil) }
        let read = file.read()
        let writer = read.state.map { file.probeWriter(of: $0) } ?? .unknown
        let verdict = HealthVerdict.fromStateFile(read, probe: writer, now: now)
        guard verdict == .healthy else { return (verdict, nil) }
        let home = ConfigLocator.homeDirectory(environment: environment)
        guard case .success(let access) = App.resolveWithoutWait(configuration, environment, home) else {
            return (.noAccess, nil)
        }
        let client = SyncthingClient(transport: transport(), access: access)
        guard case .success = client.status(timeout: HealthcheckTimeouts.request) else { return (.syncthingDown, nil) }
        return (.healthy, client)
    }
}
