import Testing

@testable import NotifyCore

/// The engine's own decisions on virtual time: start-up and its exits, stopping, config.xml re-reads (a moved GUI),
/// and the config reads after a ConfigSaved.
@Suite("Engine timelines on virtual time")
struct EngineTests {
    static let id = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let status = SystemStatus(myID: id, startTime: "2026-12-01T00:00:00Z")
    static let settings = Engine.Settings(
        policy: WakePolicy.Settings(startupAnnounce: false, staleRetrigger: nil, relayWindow: nil))

    /// An engine that has placed its cursor at `head` and waits for its first long-poll.
    static func running(_ settings: Engine.Settings = settings, head: Int = 0) -> Engine {
        var e = Engine(settings: settings)
        _ = e.handle(.start, now: .zero)
        _ = e.handle(.relayHealth(.ok), now: .zero)
        _ = e.handle(.status(.success(status)), now: .zero)
        #expect(e.handle(.head(.success(head)), now: .zero).last == .request(.poll(since: head)))
        return e
    }

    static func records(_ actions: [Engine.Action]) -> [LogRecord] {
        actions.compactMap { if case .log(let r) = $0 { r } else { nil } }
    }

    // MARK: - Start-up

    @Test("start: status text first, then the relay check; a healthy relay leads to the status read")
    func startChecksRelayFirst() {
        var e = Engine(settings: Self.settings)
        #expect(e.handle(.start, now: .zero) == [.monitor(.connecting), .request(.relayHealth)])
        let actions = e.handle(.relayHealth(.ok), now: .zero)
        #expect(actions == [.log(LogRecord(.info, .relayHealthy)), .request(.status)])
        #expect(e.policy.relayHasAnswered)
    }

    @Test("a relay 404 at start exits 78 with the relay's fatal lines, and nothing after")
    func relayNotFoundAtStart() {
        var e = Engine(settings: Self.settings)
        _ = e.handle(.start, now: .zero)
        let actions = e.handle(.relayHealth(.endpointMissing), now: .zero)
        #expect(
            actions == [
                .log(LogRecord(.error, .relayEndpointMissing, [.status(404), .code(.relayEndpointMissing)])),
                .exit(.relayNotFound),
            ])
        #expect(e.hasExited)
        #expect(e.handle(.stop, now: .zero).isEmpty)
    }

    @Test("an unhealthy relay at start is logged, and the start goes on")
    func relayUnhealthyGoesOn() {
        var e = Engine(settings: Self.settings)
        _ = e.handle(.start, now: .zero)
        let actions = e.handle(.relayHealth(.unhealthy(status: 503, error: nil)), now: .zero)
        #expect(actions == [.log(LogRecord(.warn, .relayUnhealthy, [.status(503)])), .request(.status)])
        #expect(!e.policy.relayHasAnswered)
    }

    @Test("a malformed Device ID exits 75 without fatal lines")
    func malformedDeviceID() {
        var e = Engine(settings: Self.settings)
        _ = e.handle(.start, now: .zero)
        _ = e.handle(.relayHealth(.ok), now: .zero)
        let actions = e.handle(.status(.success(SystemStatus(myID: "nope", startTime: "x"))), now: .zero)
        #expect(
            actions == [
                .log(LogRecord(.error, .deviceIDMalformed, [.code(.syncthingMalformed)])),
                .exit(.deviceIDMalformed),
            ])
    }

    @Test("a key still rejected after one re-read at start exits 78 with the key's fatal lines")
    func keyRejectedAtStart() {
        var e = Engine(settings: Self.settings)
        _ = e.handle(.start, now: .zero)
        _ = e.handle(.relayHealth(.ok), now: .zero)
        let wrongKey = PollLoop.Failure(code: .syncthingUnauthorized, status: 401)
        #expect(e.handle(.status(.failure(wrongKey)), now: .zero) == [.reread(.unauthorized)])
        #expect(
            e.handle(.reread(.unauthorized, .unchanged), now: .zero).last
                == .exit(.apiKeyRejected))
    }

    @Test("connected: the cursor is placed, the announce sent, and the config and every pair read")
    func placedStartsThePolicy() {
        var e = Engine(settings: Engine.Settings(policy: WakePolicy.Settings(staleRetrigger: nil, relayWindow: nil)))
        _ = e.handle(.start, now: .zero)
        _ = e.handle(.relayHealth(.ok), now: .zero)
        _ = e.handle(.status(.success(Self.status)), now: .zero)
        let actions = e.handle(.head(.success(41)), now: .zero)
        #expect(actions.first == .monitor(.pollSucceeded))
        #expect(actions.contains(.sendTrigger(deviceID: Self.id, timeout: .seconds(20))))
        #expect(actions.contains(.readConfig(.snapshot, generation: 0)))
        #expect(actions.last == .request(.poll(since: 41)))
    }

    // MARK: - Stopping

    @Test("a stop before Syncthing answered logs exactly the idle-stop records and exits 0")
    func stopBeforeStart() {
        var e = Engine(settings: Self.settings)
        _ = e.handle(.start, now: .zero)
        let actions = e.handle(.stop, now: .seconds(1))
        #expect(Self.records(actions) == Engine.idleStopRecords)
        #expect(Engine.idleStopRecords.map(\.message) == [.shutdownRequested, .stopped])
        #expect(actions.last == .exit(.stopped))
        #expect(actions.prefix(2) == [.monitor(.stopping), .cancelSyncthing])
    }

    @Test("a stop flushes the pending wake-up with a time limit of the grace period less the exit margin")
    func stopFlushTimeout() {
        var e = Self.running(
            Engine.Settings(
                policy: WakePolicy.Settings(
                    startupAnnounce: false, staleRetrigger: nil, shutdownGrace: .seconds(3), relayWindow: nil)))
        _ = e.handle(
            .polled(
                .success([SyncthingEvent(id: 1, type: "LocalIndexUpdated", folder: "vault")]), elapsed: .seconds(1)),
            now: .seconds(1))
        let actions = e.handle(.stop, now: .seconds(2))
        #expect(actions.contains(.sendTrigger(deviceID: Self.id, timeout: .milliseconds(2500))))
        #expect(
            e.handle(.relayOutcome(.delivered(status: 202), jitter: 0), now: .seconds(2.1)).last
                == .exit(.stopped))
    }

    @Test("Syncthing answers after a stop are ignored: nothing more is asked of it")
    func answersAfterStopIgnored() {
        var e = Self.running()
        _ = e.handle(.stop, now: .seconds(1))
        #expect(
            e.handle(.polled(.failure(PollLoop.Failure(code: .transportCancelled)), elapsed: .zero), now: .seconds(1))
                .isEmpty)
    }

    // MARK: - config.xml re-reads

    @Test("SIGHUP re-reads; each result has its own record; nothing while stopping")
    func hangup() {
        var e = Self.running()
        #expect(e.handle(.hangup, now: .zero) == [.reread(.hangup)])
        #expect(Self.records(e.handle(.reread(.hangup, .changed), now: .zero)) == [LogRecord(.info, .configReloaded)])
        #expect(
            Self.records(e.handle(.reread(.hangup, .unchanged), now: .zero)) == [
                LogRecord(.info, .configReloadUnchanged)
            ])
        #expect(
            Self.records(e.handle(.reread(.hangup, .failed(.configNotFound)), now: .zero)) == [
                LogRecord(.warn, .configReloadFailed, [.code(.configNotFound)])
            ])
        _ = e.handle(.stop, now: .zero)
        #expect(e.handle(.hangup, now: .zero).isEmpty)
    }

    @Test("a ConfigSaved re-reads config.xml before the next request, and re-reads the config once")
    func configSavedRereadsFirst() {
        var e = Self.running()
        let actions = e.handle(
            .polled(.success([SyncthingEvent(id: 1, type: "ConfigSaved")]), elapsed: .seconds(3)), now: .seconds(3))
        #expect(actions.first == .reread(.configSaved))
        #expect(actions.contains(.readConfig(.configOnly, generation: 1)))
        #expect(actions.last == .request(.status))
        // A changed access is logged once, without the address; an unchanged one says nothing.
        #expect(
            Self.records(e.handle(.reread(.configSaved, .changed), now: .seconds(3))) == [
                LogRecord(.info, .syncthingAccessChanged)
            ])
        #expect(e.handle(.reread(.configSaved, .unchanged), now: .seconds(3)).isEmpty)
    }

    @Test("a second ConfigSaved while the config read runs: one read at a time, then one more")
    func configReadQueuedOnce() {
        var e = Self.running()
        _ = e.handle(.configRead(.snapshot, generation: 0, .init(devices: [], folders: [])), now: .zero)
        var actions = e.handle(
            .polled(.success([SyncthingEvent(id: 1, type: "ConfigSaved")]), elapsed: .seconds(1)), now: .seconds(1))
        actions += e.handle(.status(.success(Self.status)), now: .seconds(1))
        actions += e.handle(
            .polled(.success([SyncthingEvent(id: 2, type: "ConfigSaved")]), elapsed: .seconds(1)), now: .seconds(2))
        actions += e.handle(.status(.success(Self.status)), now: .seconds(2))
        #expect(
            actions.filter { if case .readConfig = $0 { true } else { false } } == [
                .readConfig(.configOnly, generation: 1)
            ])
        // The read of generation 1 lands after the second ConfigSaved: it is stale, so it is read again.
        let landed = e.handle(
            .configRead(.configOnly, generation: 1, .init(devices: [], folders: [])), now: .seconds(3))
        #expect(landed == [.readConfig(.configOnly, generation: 2)])
        #expect(
            e.handle(.configRead(.configOnly, generation: 2, .init(devices: [], folders: [])), now: .seconds(4)).isEmpty
        )
    }

    /// The engine's retries after a failure at 0: 0.5, 1.5, 3.5 and 7.5 s (backoff 0.5 s doubling), then every 5 s
    /// (its cap), up to `seconds`.
    static func retries(upTo seconds: Double) -> [Double] {
        [0.5, 1.5, 3.5] + Array(stride(from: 7.5, through: seconds, by: 5))
    }

    /// The first long-poll and then every status check fail with `failure`; the engine is fed its backoff timer at
    /// each of `retries`, after it armed the timer for exactly that instant. Returns when it asked to re-read
    /// config.xml.
    static func failEveryRequest(_ failure: PollLoop.Failure, retries: [Double]) -> [Instant] {
        var e = running()
        var t = Instant.zero
        var actions = e.handle(.polled(.failure(failure), elapsed: .zero), now: t)
        // A long-poll that did not reach Syncthing is followed by a status check at once.
        if actions.last == .request(.status) { actions = e.handle(.status(.failure(failure)), now: t) }
        var rereads: [Instant] = []
        for retry in retries {
            if actions.contains(.reread(.unreachable)) {
                rereads.append(t)
                _ = e.handle(.reread(.unreachable, .unchanged), now: t)
            }
            #expect(actions.last == .armTimer(.backoff, at: .seconds(retry)))
            t = .seconds(retry)
            #expect(e.handle(.timerFired(.backoff), now: t) == [.request(.status)])
            actions = e.handle(.status(.failure(failure)), now: t)
        }
        return rereads
    }

    @Test(
        "failures that are answers (a 5xx, a malformed body) never count as unreachable",
        arguments: [PollLoop.Failure(code: .syncthingStatus, status: 500), PollLoop.Failure(code: .syncthingMalformed)])
    func answersAreNotUnreachable(answer: PollLoop.Failure) {
        // Two minutes of failures: the last at 117.5 s.
        #expect(Self.failEveryRequest(answer, retries: Self.retries(upTo: 120)).isEmpty)
    }

    @Test(
        "a redirect (the GUI switched to https), a TLS failure or a name that no longer resolves count as unreachable too",
        arguments: [ErrorCode.syncthingRedirect, .transportTLS, .transportDNS, .transportTimeout])
    func staleAccessFailuresReread(code: ErrorCode) {
        // The first failure 5 s or more into the run (7.5 s) re-reads.
        #expect(
            Self.failEveryRequest(PollLoop.Failure(code: code), retries: Self.retries(upTo: 12.5)) == [.seconds(7.5)])
    }
}

/// `MalformedAnswerLog`: once per kind per hour, with the count since the last line.
@Suite struct MalformedAnswerLogTests {
    func fields(_ records: [LogRecord]) -> [[LogField]] { records.map(\.fields) }

    @Test("the first malformed answer of a kind is logged at once; the rest of the hour only counted")
    func oncePerKindPerHour() {
        var log = MalformedAnswerLog()
        #expect(fields(log.note([.folders], now: .seconds(10))) == [[.answer(.folders), .count(1)]])
        #expect(log.note([.folders], now: .seconds(20)).isEmpty)
        #expect(log.note([.folders], now: .seconds(3_609)).isEmpty)
        #expect(fields(log.note([.folders], now: .seconds(3_610))) == [[.answer(.folders), .count(3)]])
        #expect(fields(log.note([.folders], now: .seconds(7_210))) == [[.answer(.folders), .count(1)]])
        #expect(log.note([], now: .seconds(20_000)).isEmpty)
    }

    @Test("kinds are counted and logged apart, in a fixed order, as warnings")
    func kindsApart() {
        var log = MalformedAnswerLog()
        let first = log.note([.completion, .devices], now: .zero)
        #expect(fields(first) == [[.answer(.devices), .count(1)], [.answer(.completion), .count(1)]])
        #expect(first.allSatisfy { $0.level == .warn && $0.message == .syncthingAnswerMalformed })
        #expect(fields(log.note([.connections, .devices], now: .seconds(5))) == [[.answer(.connections), .count(1)]])
        #expect(first[0].textLine().hasSuffix("answer=config-devices count=1"))
    }

    @Test("the engine logs what a config read or an observation found malformed")
    func engineLogsThem() {
        var e = Engine(settings: EngineTests.settings)
        let read = e.handle(
            .configRead(.snapshot, generation: 0, nil, malformed: [.devices]), now: .seconds(1))
        #expect(read.contains(.log(LogRecord(.warn, .syncthingAnswerMalformed, [.answer(.devices), .count(1)]))))
        let observed = e.handle(.observed(.configOnly, nil, malformed: [.completion]), now: .seconds(2))
        #expect(
            observed == [.log(LogRecord(.warn, .syncthingAnswerMalformed, [.answer(.completion), .count(1)]))])
    }
}
