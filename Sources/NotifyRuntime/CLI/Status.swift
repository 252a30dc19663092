import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `vaultsync-notify --status [--json]`: what the running service for this environment is doing, read from its
/// state file (`StateFile`, the one `--healthcheck` reads), in a few lines (`StatusReport`). Carries out I/O only:
/// the health check (`Healthcheck`, bounded to 2 s; one `GET /rest/system/status` to Syncthing, never a call to the
/// relay), then, when it reached Syncthing, one `GET /rest/system/version` (bounded the same way) for Syncthing's
/// release, and the file read; `StatusReport` decides what is shown.
///
/// Exit status: 0 when the health check passes, 1 otherwise (no running instance for this environment among them),
/// as `--healthcheck`.
///
/// Without `RELAY_URL` (not a service's environment: `StatusOverview.discovers`) it shows every instance it finds
/// instead (`StatusDiscovery`), each judged from its state file alone.
package enum Status {
    /// Runs the mode: prints the report (text, or one JSON object) on stdout.
    /// - Parameters:
    ///   - environment: the service's variables, RUNTIME_DIRECTORY.
    ///   - json: print the JSON object instead of the text.
    ///   - discovery: where to look without the service's environment (default: the host's places).
    /// - Returns: `.ok` or `.checkFailed`.
    package static func run(environment: [String: String], json: Bool, discovery: StatusDiscovery? = nil)
        -> ExitStatus
    {
        if StatusOverview.discovers(environment: environment) {
            let overview = (discovery ?? StatusDiscovery(environment: environment)).overview()
            App.printOut(json ? overview.json() : overview.text())
            return overview.exitStatus
        }
        let report = self.report(environment: environment)
        App.printOut(json ? report.json() : report.text())
        return report.exitStatus
    }

    /// The report at this moment.
    /// - Parameters:
    ///   - now: wall-clock seconds since the Unix epoch, for the check and the report.
    ///   - transport: the HTTP transport for the health check's status request (default libcurl).
    static func report(
        environment: [String: String], now: Int64 = SystemClock().unixSeconds(),
        transport: @escaping @autoclosure @Sendable () -> any HTTPTransport = CurlTransport()
    ) -> StatusReport {
        let reached = ThreadSafe<SyncthingClient?>(nil)
        let verdict = Healthcheck.bounded(HealthcheckTimeouts.budget) {
            let probe = Healthcheck.probe(environment: environment, now: now, transport: transport())
            reached.withLock { $0 = probe.client }
            return probe.verdict
        }
        // The file is read after the check: never older than what the verdict saw.
        let file = verdict == .configuration ? nil : StateFile.locate(environment: environment, create: false)
        let state = file?.read().state
        let liveness = state.flatMap { state in file.map { state.liveness($0.probeWriter(of: state), now: now) } }
        let client = verdict == .healthy ? reached.withLock { $0 } : nil
        let version = client.flatMap(syncthingVersion)
        return StatusReport(state: state, health: verdict, now: now, syncthingVersion: version, liveness: liveness)
    }

    /// Syncthing's release, asked with the client the health check reached Syncthing with (the same time limits);
    /// nil when it does not answer in time or sends something that is not a release.
    private static func syncthingVersion(_ client: SyncthingClient) -> String? {
        let found = ThreadSafe<String?>(nil)
        _ = Healthcheck.bounded(HealthcheckTimeouts.budget) {
            found.withLock { $0 = try? client.version(timeout: HealthcheckTimeouts.request).get().version }
            return .healthy
        }
        return found.withLock { $0 }
    }
}
