/// When the stale-peer sweep runs, as one pure value on virtual time (`Instant`, `Duration`): part of `WakePolicy`.
///
/// The first sweep is due one `cadence` after the start, and each one that fires schedules the next a `cadence`
/// later (a fixed cadence from when the timer fired, not from when the sweep ended). At most one sweep runs at a time:
/// a timer that fires while one still runs only schedules the next. Stopping unschedules it, and while stopping no
/// sweep begins or is scheduled. A nil `cadence` (STALE_RETRIGGER_SECONDS=0) turns the sweep off. What a finished
/// sweep found, and whether it wakes the phone, is `WakePolicy`'s to decide: it compares when the sweep began
/// (`finish`) with the last trigger the `TriggerGate` sent.
package struct SweepClock: Sendable, Equatable {
    /// Time between two sweeps; nil when the sweep is off.
    package let cadence: Duration?
    /// When the sweep timer is armed for; nil before the start, while stopping, or when off.
    package private(set) var next: Instant?
    /// When the running sweep began; nil when none runs.
    package private(set) var runningSince: Instant?

    package init(cadence: Duration?) { self.cadence = cadence }

    /// The service started at `now`.
    /// - Returns: when the first sweep is due (arm the sweep timer for it); nil when the sweep is off.
    package mutating func start(now: Instant) -> Instant? {
        next = cadence.map { now + $0 }
        return next
    }

    /// The sweep timer fired at `now`.
    /// - Parameter stopping: whether the service is stopping (then nothing is scheduled and no sweep begins).
    /// - Returns: when the next sweep is due (nil: none), and whether a sweep begins now (answer with `finish`).
    package mutating func fire(now: Instant, stopping: Bool) -> (next: Instant?, begins: Bool) {
        next = stopping ? nil : cadence.map { now + $0 }
        let begins = cadence != nil && runningSince == nil && !stopping
        if begins { runningSince = now }
        return (next, begins)
    }

    /// The running sweep ended.
    /// - Returns: when it began; nil when none was running (an answer that no sweep waits for).
    package mutating func finish() -> Instant? {
        defer { runningSince = nil }
        return runningSince
    }

    /// The service stops: no further sweep is scheduled.
    package mutating func stop() { next = nil }

    /// The schedule as `--status` shows it.
    package var schedule: SweepSchedule<Instant> {
        guard cadence != nil else { return .off }
        return next.map { .at($0) } ?? .notScheduled
    }
}
