import Testing

@testable import NotifyCore

/// The engine's edges: an answer it did not ask for, and the relay's 404 before it ever answered, which ends the run
/// the same way whether the start-up health check or a trigger met it.
@Suite("Engine edges")
struct EngineEdgeTests {
    static let id = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let status = SystemStatus(myID: id, startTime: "2026-12-01T00:00:00Z")
    static let settings = Engine.Settings(
        policy: WakePolicy.Settings(startupAnnounce: false, staleRetrigger: nil, relayWindow: nil))
    static let unexpected = Engine.Action.log(LogRecord(.error, .unexpectedAnswer))

    /// An engine past the relay check, waiting for its first status read.
    static func connecting(_ settings: Engine.Settings = settings) -> Engine {
        var e = Engine(settings: settings)
        _ = e.handle(.start, now: .zero)
        #expect(e.handle(.relayHealth(.ok), now: .zero).last == .request(.status))
        return e
    }

    @Test("an answer of another kind than the one asked for is logged, and the loop asks again and goes on")
    func answerOfAnotherKind() {
        var e = Self.connecting()
        #expect(e.handle(.head(.success(7)), now: .seconds(1)) == [Self.unexpected, .request(.status)])
        #expect(e.handle(.status(.success(Self.status)), now: .seconds(2)) == [.request(.head)])
        let placed = e.handle(.head(.success(7)), now: .seconds(3))
        #expect(placed.last == .request(.poll(since: 7)))
        #expect(!placed.contains(Self.unexpected))
    }

    @Test("a relay health answer while polling is logged, and the poll loop asks again")
    func relayHealthWhilePolling() {
        var e = Self.connecting()
        // The status read is answered: the loop asks for the head.
        #expect(e.handle(.status(.success(Self.status)), now: .seconds(1)) == [.request(.head)])
        // The head answer is lost, and an answer nobody asked for comes instead.
        #expect(e.handle(.relayHealth(.ok), now: .seconds(2)) == [Self.unexpected, .request(.head)])
    }

    @Test("a Syncthing answer before the start is logged and asks for nothing")
    func answerBeforeStart() {
        var e = Engine(settings: Self.settings)
        #expect(e.handle(.status(.success(Self.status)), now: .zero) == [Self.unexpected])
        #expect(e.handle(.start, now: .zero) == [.monitor(.connecting), .request(.relayHealth)])
    }

    @Test("answers to requests a stop cut short are dropped without a record")
    func answersAfterStopAreQuiet() {
        // A pending wake-up keeps the engine in its shutdown flush, where the cut requests still answer.
        var e = Self.connecting(Engine.Settings(policy: WakePolicy.Settings(staleRetrigger: nil, relayWindow: nil)))
        #expect(e.handle(.status(.success(Self.status)), now: .zero) == [.request(.head)])
        #expect(e.handle(.head(.success(0)), now: .zero).last == .request(.poll(since: 0)))
        let stop = e.handle(.stop, now: .seconds(1))
        #expect(stop.contains(.cancelSyncthing))
        #expect(!e.hasExited)
        #expect(
            e.handle(
                .polled(.failure(PollLoop.Failure(code: .transportCancelled)), elapsed: .seconds(1)),
                now: .seconds(1)
            ).isEmpty)
        #expect(e.handle(.relayHealth(.ok), now: .seconds(1)).isEmpty)
    }

    @Test("a relay 404 before the relay answered ends the run the same way at the health check and at a trigger")
    func relayNotFoundBuiltOnce() {
        var atStart = Engine(settings: Self.settings)
        _ = atStart.handle(.start, now: .zero)
        let startEnding = atStart.handle(.relayHealth(.endpointMissing), now: .zero)

        var atTrigger = Engine(
            settings: Engine.Settings(policy: WakePolicy.Settings(staleRetrigger: nil, relayWindow: nil)))
        _ = atTrigger.handle(.start, now: .zero)
        _ = atTrigger.handle(.relayHealth(.unhealthy(status: 502, error: nil)), now: .zero)
        _ = atTrigger.handle(.status(.success(Self.status)), now: .zero)
        let announced = atTrigger.handle(.head(.success(0)), now: .zero)
        #expect(announced.contains(.sendTrigger(deviceID: Self.id, timeout: .seconds(20))))
        let triggerEnding = atTrigger.handle(.relayOutcome(.endpointMissing, jitter: 0), now: .seconds(1))

        let expected: [Engine.Action] = [
            .log(LogRecord(.error, .relayEndpointMissing, [.status(404), .code(.relayEndpointMissing)])),
            .exit(.relayNotFound),
        ]
        #expect(startEnding == expected)
        #expect(triggerEnding.suffix(2) == expected[...])
        #expect(Engine.Exit.relayNotFound.status == .configuration)
        #expect(Engine.Exit.relayNotFound.fatal == .relayNotFound)
        #expect(atStart.hasExited && atTrigger.hasExited)
    }

    @Test("only the stop asked for tells systemd STOPPING; every exit removes the state file and writes up 0")
    func exitFarewells() {
        #expect(Engine.Exit.stopped.farewell == [.notifyStopping, .removeStateFile, .metricsDown])
        for failure in [Engine.Exit.relayNotFound, .apiKeyRejected, .deviceIDMalformed] {
            #expect(failure.status != .ok)
            #expect(failure.farewell == [.removeStateFile, .metricsDown])
        }
        var metrics = Metrics()
        metrics.observe(.exit(.relayNotFound), unixMilliseconds: 0)
        #expect(!metrics.up)
    }
}
