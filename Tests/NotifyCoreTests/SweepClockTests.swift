import Testing

@testable import NotifyCore

/// The sweep clock alone, as timelines on virtual time: when the next stale-peer sweep is due, and whether one runs.
@Suite("The sweep clock")
struct SweepClockTests {
    @Test("a 600 s cadence: first sweep due at 600 s, the next 600 s after each firing")
    func cadence() {
        var clock = SweepClock(cadence: .seconds(600))
        #expect(clock.schedule == .notScheduled)
        #expect(clock.start(now: .seconds(2)) == .seconds(602))
        #expect(clock.schedule == .at(.seconds(602)))
        #expect(clock.fire(now: .seconds(602), stopping: false) == (next: .seconds(1202), begins: true))
        #expect(clock.runningSince == .seconds(602))
        // The next one is scheduled from when the timer fired, not from when the sweep ended.
        #expect(clock.finish() == .seconds(602))
        #expect(clock.schedule == .at(.seconds(1202)))
        #expect(clock.fire(now: .seconds(1202), stopping: false) == (next: .seconds(1802), begins: true))
    }

    @Test("one sweep at a time: a firing while one runs only schedules the next")
    func oneAtATime() {
        var clock = SweepClock(cadence: .seconds(60))
        _ = clock.start(now: .zero)
        #expect(clock.fire(now: .seconds(60), stopping: false).begins)
        #expect(clock.fire(now: .seconds(120), stopping: false) == (next: .seconds(180), begins: false))
        // The sweep that ends is the one that began at 60 s.
        #expect(clock.finish() == .seconds(60))
        #expect(clock.fire(now: .seconds(180), stopping: false).begins)
    }

    @Test("an answer no sweep waits for is ignored")
    func finishWithoutSweep() {
        var clock = SweepClock(cadence: .seconds(60))
        _ = clock.start(now: .zero)
        #expect(clock.finish() == nil)
        _ = clock.fire(now: .seconds(60), stopping: false)
        #expect(clock.finish() == .seconds(60))
        #expect(clock.finish() == nil)
    }

    @Test("stopping unschedules it; a late firing neither re-arms nor begins")
    func stopping() {
        var clock = SweepClock(cadence: .seconds(60))
        _ = clock.start(now: .zero)
        clock.stop()
        #expect(clock.schedule == .notScheduled)
        #expect(clock.fire(now: .seconds(60), stopping: true) == (next: nil, begins: false))
        #expect(clock.runningSince == nil)
    }

    @Test("no cadence: off, nothing scheduled, nothing runs")
    func off() {
        var clock = SweepClock(cadence: nil)
        #expect(clock.schedule == .off)
        #expect(clock.start(now: .zero) == nil)
        #expect(clock.fire(now: .seconds(60), stopping: false) == (next: nil, begins: false))
        #expect(clock.schedule == .off)
    }
}
