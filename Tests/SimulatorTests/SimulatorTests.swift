import NotifyCore
import Testing

@testable import NotifySimulator

/// The simulator's own promises: a seed is a run, byte for byte; a run of today's code passes; a planted defect
/// fails (the debug build has them). The long searches are `scripts/simulate`'s (CI runs it); these stay short.
@Suite("The deterministic simulator")
struct SimulatorTests {
    static let sixHours = Duration.seconds(6 * 3600)

    @Test("one seed run twice gives the same trace, byte for byte; another seed another trace")
    func replayable() {
        let first = Simulation.run(Simulation.Run(seed: 3, length: Self.sixHours))
        let again = Simulation.run(Simulation.Run(seed: 3, length: Self.sixHours))
        let other = Simulation.run(Simulation.Run(seed: 4, length: Self.sixHours))
        #expect(first.hash == again.hash)
        #expect(first.hash.count == 16)
        #expect((first.triggers, first.pushes, first.simulated) == (again.triggers, again.pushes, again.simulated))
        #expect(first.tail == again.tail)
        #expect(first.hash != other.hash)
    }

    @Test("today's service keeps every promise over six simulated hours of a seed's faults", arguments: [1, 2, 5])
    func passes(seed: UInt64) {
        let result = Simulation.run(Simulation.Run(seed: seed, length: Self.sixHours))
        let passed = result.passed
        #expect(passed, "\(result.firstViolation ?? "")")
        #expect(result.simulated >= Self.sixHours)
        #expect(result.footprint > 0)
    }

    @Test(
        "a planted defect breaks the promise it targets within a few seeds; the same seed without it keeps them all",
        arguments: [
            ("send-inside-window", [String]?.none, "the relay's answers are honoured"),
            ("ignore-retry-after-date", ["relay-429-date"], "the relay's answers are honoured"),
            ("second-post-in-flight", ["relay-slow"], "one POST in flight at most"),
        ])
    func plantedDefectBites(plant: String, faults: [String]?, promise: String) throws {
        #expect(Simulation.plantable.contains(plant))
        var found: Simulation.Result?
        for seed in UInt64(1)...30 {
            let result = Simulation.run(Simulation.Run(seed: seed, faults: faults, plant: plant, length: Self.sixHours))
            if !result.passed {
                found = result
                break
            }
        }
        let failing = try #require(found, "no seed of 30 broke a promise")
        let broken = failing.firstViolation ?? ""
        #expect(broken.hasPrefix(promise), "\(broken)")
        var clean = failing.run
        clean.plant = nil
        let cleanPassed = Simulation.run(clean).passed
        #expect(cleanPassed)
    }
}

/// The checker alone, fed observations by hand: each promise it keeps can fail.
@Suite("The simulator's checker")
struct CheckerTests {
    static let deviceID = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let body = #"{"device_id": "\#(deviceID)"}"#

    final class Clock: @unchecked Sendable {
        var now = Duration.zero
    }

    static func checker(window: Duration? = .seconds(30)) -> (Checker, Clock) {
        let clock = Clock()
        let settings = Checker.Settings(
            debounce: .seconds(5), debounceMax: .seconds(30), window: window, sweep: nil, announce: false)
        let checker = Checker(settings: settings, trueNow: { clock.now }, monotonicNow: { Instant(clock.now) })
        checker.deviceIDs = [deviceID]
        return (checker, clock)
    }

    static func at(_ seconds: Double) -> Instant { Instant(.milliseconds(Int64(seconds * 1000))) }

    static func answer(_ status: Int, retryAfter: Checker.RetryAfterMeaning? = nil, pushed: Bool = false)
        -> Checker.RelayAnswer
    {
        Checker.RelayAnswer(
            status: status, error: nil, retryAfter: retryAfter, pushed: pushed, swallowed: false,
            hostWallSeconds: 1_000)
    }

    static func promises(_ checker: Checker) -> [String] { checker.violations.map(\.promise) }

    /// A local change in a shared, watched folder, delivered by a long-poll at `seconds`.
    static func deliveredChange(_ checker: Checker, at seconds: Double) {
        checker.sharing(folder: "f", paused: false, devices: [("d", false, "valid")], at: at(0))
        checker.subscribed(run: 1, at: at(0))
        let read = checker.eventCreated(run: 1, id: 1, kind: .local(folder: "f"), at: at(seconds))
        #expect(read == "news")
        checker.pollLaneAnswered(
            Checker.Exchange(
                route: .poll, sent: at(0), answered: at(seconds), run: 1, good: true, since: 0, delivered: [1],
                head: nil, startTime: "s"))
    }

    @Test("news with no push before the run ends breaks recall; a push within debounce max keeps it")
    func recall() {
        let (missed, _) = Self.checker()
        Self.deliveredChange(missed, at: 1)
        missed.stopRequested(at: Self.at(100))
        missed.finish(at: Self.at(100), exited: true)
        #expect(Self.promises(missed).first == "never misses a change")

        let (kept, _) = Self.checker()
        Self.deliveredChange(kept, at: 1)
        kept.triggerSent(at: Self.at(6), asked: Self.at(6), body: Self.body, url: "relay")
        kept.triggerAnswered(Self.answer(202, pushed: true), at: Self.at(6.2))
        kept.stopRequested(at: Self.at(100))
        kept.finish(at: Self.at(100), exited: true)
        #expect(Self.promises(kept) == [])
    }

    @Test("a trigger with nothing to carry breaks precision")
    func precision() {
        let (checker, _) = Self.checker()
        checker.triggerSent(at: Self.at(10), asked: Self.at(10), body: Self.body, url: "relay")
        #expect(Self.promises(checker) == ["every wake-up carries news"])
    }

    @Test("a trigger asked for while the last is unanswered: two POSTs in flight")
    func oneInFlight() {
        let (checker, _) = Self.checker(window: nil)
        Self.deliveredChange(checker, at: 1)
        checker.triggerSent(at: Self.at(6), asked: Self.at(6), body: Self.body, url: "relay")
        checker.triggerAnswered(Self.answer(202, pushed: true), at: Self.at(8))
        // Asked for at 7 s, it reached the relay only after the first answer (the relay lane is one at a time).
        checker.triggerSent(at: Self.at(8), asked: Self.at(7), body: Self.body, url: "relay")
        #expect(Self.promises(checker).contains("one POST in flight at most"))
    }

    @Test("a 429's Retry-After gates the retry: before it breaks a promise, after it does not")
    func retryAfterGate() {
        // Answered at 6.2 s with Retry-After: 120: the retry is due at 126.2 s, not before.
        for (retry, broken) in [(31.0, true), (126.2, false)] {
            let (checker, _) = Self.checker()
            Self.deliveredChange(checker, at: 1)
            checker.triggerSent(at: Self.at(6), asked: Self.at(6), body: Self.body, url: "relay")
            checker.triggerAnswered(Self.answer(429, retryAfter: .seconds(120)), at: Self.at(6.2))
            checker.triggerSent(at: Self.at(retry), asked: Self.at(retry), body: Self.body, url: "relay")
            #expect(Self.promises(checker).contains("the relay's answers are honoured") == broken, "retry at \(retry)")
        }
    }

    @Test("Retry-After as the checker reads it: delta seconds, a date against the host's clock, 30 s, 1 s … 1 h")
    func retryAfterMeaning() {
        #expect(Checker.retryAfter(.seconds(120), hostWall: 1_000) == .seconds(120))
        #expect(Checker.retryAfter(.dateAgainstHostClock(1_600), hostWall: 1_000) == .seconds(600))
        #expect(Checker.retryAfter(.dateAgainstHostClock(900), hostWall: 1_000) == .seconds(1))
        #expect(Checker.retryAfter(.seconds(1 << 40), hostWall: 1_000) == .seconds(3600))
        #expect(Checker.retryAfter(.unreadable, hostWall: 1_000) == .seconds(30))
        #expect(Checker.retryAfter(nil, hostWall: 1_000) == .seconds(30))
    }

    @Test("a planted identifier in --status breaks a promise; text without one does not")
    func identifiers() {
        let (checker, _) = Self.checker()
        checker.identifiers = ["vault-x7q2", Self.deviceID]
        checker.statusText("state: running\nfolders: 2\n")
        #expect(Self.promises(checker) == [])
        checker.statusText("state: running\nlast change in vault-x7q2\n")
        #expect(Self.promises(checker) == ["never logs an identifier"])
    }

    @Test("exit 0 without a stop, or a service that outlives the stop, breaks a promise; exit 0 after one does not")
    func exits() {
        let (unasked, _) = Self.checker()
        unasked.exited(.ok, at: Self.at(5), configKeyRight: true, configPresent: true)
        #expect(Self.promises(unasked) == ["exits only for documented causes"])

        let (lingering, _) = Self.checker()
        lingering.stopRequested(at: Self.at(5))
        lingering.finish(at: Self.at(60), exited: false)
        #expect(Self.promises(lingering) == ["exits only for documented causes"])

        let (stopped, _) = Self.checker()
        stopped.stopRequested(at: Self.at(5))
        stopped.exited(.ok, at: Self.at(5.1), configKeyRight: true, configPresent: true)
        stopped.finish(at: Self.at(5.1), exited: true)
        #expect(Self.promises(stopped) == [])
    }

    @Test("what the engine holds at the end is bounded by folders × devices")
    func footprint() {
        let (within, _) = Self.checker()
        within.footprint(7 * 2 * 3 + 2 + 16, folders: 2, devices: 3)
        #expect(Self.promises(within) == [])
        let (beyond, _) = Self.checker()
        beyond.footprint(7 * 2 * 3 + 2 + 17, folders: 2, devices: 3)
        #expect(Self.promises(beyond) == ["state bounded by the configuration"])
    }

    @Test("a poll loop that stops asking breaks a promise once nothing answered for longer than any request takes")
    func quietPollLoop() {
        let (checker, _) = Self.checker()
        checker.pollLaneAnswered(
            Checker.Exchange(
                route: .head, sent: Self.at(0), answered: Self.at(0.1), run: 1, good: true, since: nil, delivered: [],
                head: 0, startTime: "s"))
        checker.pollLaneAnswered(
            Checker.Exchange(
                route: .poll, sent: Self.at(0.1), answered: Self.at(50.1), run: 1, good: true, since: 0, delivered: [],
                head: nil, startTime: nil))
        // A long-poll at its time limit (65 s) and the backoff cap (5 s) later, the loop may still be working.
        checker.eventCreated(run: 1, id: 1, kind: .configSaved, at: Self.at(120))
        #expect(Self.promises(checker) == [])
        checker.eventCreated(run: 1, id: 2, kind: .configSaved, at: Self.at(122))
        #expect(Self.promises(checker) == ["the poll loop never goes quiet"])
    }
}
