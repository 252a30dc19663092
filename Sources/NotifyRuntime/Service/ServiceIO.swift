import NotifyCore

/// The service's Syncthing and config.xml I/O: performs the poll loop's requests, the config and sweep reads and the
/// re-reads the engine asks for, and hands back the results as engine inputs. Blocking; called off the engine
/// queue, except `reread` (a file read). The relay's POST goes straight from `Service` to `RelayClient`.
struct ServiceIO: Sendable {
    var syncthing: SyncthingClient
    var relay: RelayClient
    /// Re-reads config.xml and the environment, without the first-boot wait.
    var rereadAccess: @Sendable () -> Result<SyncthingAccess, SyncthingAccessError>
    var monitor: ServiceMonitor
    /// Defects planted on purpose (the simulator's build only).
    var planted: PlantedDefects = .none

    /// The lane a request runs on.
    static func lane(_ request: Engine.Request) -> ServiceLane {
        if case .poll = request { .longPoll } else { .pollLoop }
    }

    /// Performs one poll-loop request, announced to the watchdog's liveness with its bound (for Syncthing, over
    /// every address the request may try: `SyncthingTimeouts.worstCase`).
    func perform(_ request: Engine.Request, clock: () -> Instant) -> Engine.Input {
        func syncthingBound(_ limit: Duration) -> Duration {
            SyncthingTimeouts.worstCase(limit, addresses: syncthing.addressCount)
        }
        switch request {
        case .relayHealth:
            return .relayHealth(step(RelayTimeouts.request) { relay.health() }.health)
        case .status:
            let answer = step(syncthingBound(SyncthingTimeouts.request)) { syncthing.statusAnswer() }
            return .status(answer.result.mapError(\.pollFailure), connection: answer.connection)
        case .head:
            return .head(
                step(syncthingBound(SyncthingTimeouts.request)) { syncthing.eventHead() }.mapError(\.pollFailure))
        case .poll(let since, let onConnection):
            let started = clock()
            let polled = step(syncthingBound(SyncthingTimeouts.pollRequest)) {
                syncthing.pollAnswer(since: since, onConnection: onConnection)
            }
            return .polled(
                polled.result.mapError(\.pollFailure), elapsed: clock() - started, connection: polled.connection)
        case .lastRead(let since, let onConnection):
            let read = step(syncthingBound(SyncthingTimeouts.lastRead)) {
                syncthing.pollAnswer(
                    since: since, timeout: 0, onConnection: onConnection, limit: SyncthingTimeouts.lastRead)
            }
            return .polled(read.result.mapError(\.pollFailure), elapsed: .zero, connection: read.connection)
        }
    }

    private func step<T>(_ bound: Duration, _ body: () -> T) -> T {
        monitor.stepStarted(bound: bound)
        defer { monitor.stepFinished() }
        return body()
    }

    /// Re-reads config.xml and the environment and swaps a changed access into the client: the next request uses
    /// it (a long-poll in flight finishes first).
    func reread() -> Engine.Reread {
        switch rereadAccess() {
        case .success(let access) where access == syncthing.access: return .unchanged
        case .success(let access):
            if !planted.has(.keepOldKey) { syncthing.update(access: access) }
            return .changed
        case .failure(let error): return .failed(error.code)
        }
    }

    /// The configured devices and folders (nil when Syncthing did not answer), and which answers were malformed
    /// (`Engine.ConfigSnapshot.read` decides).
    func readConfig() -> (snapshot: Engine.ConfigSnapshot?, malformed: Set<PeerAnswer>) {
        Engine.ConfigSnapshot.read(devices: syncthing.devices, folders: syncthing.folders)
    }

    /// Asks Syncthing whether each pair's device is connected and what it still needs, and which answers were
    /// malformed (`SweepObservation.read` decides what each answer means).
    static func observe(_ pairs: [SweepPair], client syncthing: SyncthingClient) -> (
        observations: [SweepObservation]?, malformed: Set<PeerAnswer>
    ) {
        SweepObservation.read(pairs, connections: syncthing.connections) { pair in
            syncthing.completion(device: pair.device, folder: pair.folder)
        }
    }
}

extension SyncthingError {
    /// The failure as the poll loop reads it: the log-safe code and the HTTP status.
    fileprivate var pollFailure: PollLoop.Failure { PollLoop.Failure(code: code, status: status) }
}
