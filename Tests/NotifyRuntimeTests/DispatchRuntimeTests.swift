import Dispatch
import NotifyCore
import Synchronization
import Testing

@testable import NotifyRuntime

/// The production runtime's timers on the real clocks. A timer that also keeps the wall clock arms two Dispatch
/// sources, and only the first to fire may run its body. Every wait has a generous limit (a loaded machine runs a
/// timer late); no test measures how long anything took.
@Suite("DispatchRuntime timers")
struct DispatchRuntimeTests {
    /// Counts a timer body's runs, and lets the test wait for the next one.
    final class Firings: Sendable {
        private let runs = Atomic<Int>(0)
        private let ran = DispatchSemaphore(value: 0)

        func fire() {
            runs.add(1, ordering: .relaxed)
            ran.signal()
        }

        /// Whether the body ran (again) within `seconds`.
        func next(within seconds: Int) -> Bool { ran.wait(timeout: .now() + .seconds(seconds)) == .success }

        var count: Int { runs.load(ordering: .relaxed) }
    }

    /// Arms a timer 100 ms ahead on the engine queue, as the service does.
    static func arm(_ runtime: DispatchRuntime, alsoOnWallClock: Bool, _ firings: Firings) -> any ScheduledTimer {
        runtime.engine.sync {
            runtime.schedule(at: runtime.now() + .milliseconds(100), alsoOnWallClock: alsoOnWallClock) {
                firings.fire()
            }
        }
    }

    @Test("only the stale-peer sweep's timer also keeps the wall clock")
    func onlyTheSweepKeepsTheWallClock() {
        let timers = WakePolicy.Timer.allCases.map { Engine.Timer.policy($0) } + [.backoff]
        #expect(timers.filter(\.alsoOnWallClock) == [.policy(.sweep)])
    }

    @Test("a timer that also keeps the wall clock runs its body once: the first source to fire cancels the other")
    func bothClocksFireOnce() {
        let runtime = DispatchRuntime()
        let firings = Firings()
        let timer = Self.arm(runtime, alsoOnWallClock: true, firings)
        #expect(firings.next(within: 5))
        // The wall-clock source is due within its 1 s leeway of the monotonic one.
        #expect(!firings.next(within: 2))
        #expect(firings.count == 1)
        withExtendedLifetime(timer) {}
    }

    @Test("a monotonic-only timer runs its body once")
    func monotonicFiresOnce() {
        let runtime = DispatchRuntime()
        let firings = Firings()
        let timer = Self.arm(runtime, alsoOnWallClock: false, firings)
        #expect(firings.next(within: 5))
        #expect(!firings.next(within: 1))
        #expect(firings.count == 1)
        withExtendedLifetime(timer) {}
    }

    @Test("a timer cancelled before its time runs its body from neither source")
    func cancelledFiresNeither() {
        let runtime = DispatchRuntime()
        let cancelled = Firings()
        let control = Firings()
        // Cancelled in the same turn of the engine queue that armed it: no source can fire in between.
        runtime.engine.sync {
            runtime.schedule(at: runtime.now() + .milliseconds(100), alsoOnWallClock: true) { cancelled.fire() }
                .cancel()
        }
        // One armed alongside fires, so both clocks have passed the cancelled one's deadline.
        let timer = Self.arm(runtime, alsoOnWallClock: true, control)
        #expect(control.next(within: 5))
        #expect(!cancelled.next(within: 2))
        #expect(cancelled.count == 0)
        withExtendedLifetime(timer) {}
    }
}
