import Testing

@testable import NotifyCore

/// `MonitorMachine` fed inputs directly: what systemd is told, when the state file is written, and the one warning.
@Suite("Monitor machine: systemd notify and the state file")
struct MonitorMachineTests {
    static let wall0: Int64 = 1_718_000_000

    /// A machine with its own virtual clock: `at` seconds after the start on both clocks.
    struct Rig {
        var machine = MonitorMachine(now: .zero, wall: MonitorMachineTests.wall0)
        var seconds: Int64 = 0
        /// How far the wall clock is ahead of the monotonic one (a host suspend, a step of the wall clock).
        var wallAhead: Int64 = 0

        mutating func feed(_ input: MonitorMachine.Input) -> [MonitorMachine.Output] {
            machine.handle(
                input, now: Instant(.seconds(seconds)), wall: MonitorMachineTests.wall0 + seconds + wallAhead)
        }

        mutating func advance(_ by: Int64) { seconds += by }

        /// The host sleeps for `by` seconds: the monotonic clock stands still while the wall clock goes on.
        mutating func suspend(_ by: Int64) { wallAhead += by }
    }

    static func writes(_ outputs: [MonitorMachine.Output]) -> [ServiceState] {
        outputs.compactMap { if case .writeState(let s) = $0 { s } else { nil } }
    }

    @Test("READY=1 once, with the first poll, after the state file is written; STATUS only when it changes")
    func readyOnce() {
        var r = Rig()
        #expect(r.feed(.status(.connecting)) == [.notify([.status(.connecting)])])
        #expect(r.feed(.status(.connecting)).isEmpty)
        let first = r.feed(.pollSucceeded)
        #expect(first.count == 2)
        #expect(Self.writes(first).first?.lastPoll == Self.wall0)
        #expect(first.last == .notify([.ready, .status(.watching)]))
        r.advance(3)
        // No new text, and the file was written 3 s ago: nothing.
        #expect(r.feed(.pollSucceeded).isEmpty)
    }

    @Test("the relay's answer shows in STATUS only once ready, and the state file carries it with the next poll")
    func relayStatus() {
        var r = Rig()
        #expect(r.feed(.relayOutcome(.transient(status: 503, error: nil))).isEmpty)
        #expect(r.feed(.pollSucceeded).last == .notify([.ready, .status(.relayFailing)]))
        #expect(
            r.feed(.relayOutcome(.subscriptionInactive(status: 402))) == [.notify([.status(.relayInactive)])])
        r.advance(1)
        // A new category is significant: written at once, within the throttle's 10 s.
        #expect(Self.writes(r.feed(.pollSucceeded)).map(\.relay) == [.inactive])
    }

    @Test("Syncthing unreachable: the file says so at once, then STATUS; back, and STATUS follows")
    func unreachable() {
        var r = Rig()
        _ = r.feed(.pollSucceeded)
        let down = r.feed(.syncthingUnavailable)
        #expect(Self.writes(down).map(\.syncthingReachable) == [false])
        #expect(down.last == .notify([.status(.syncthingUnavailable)]))
        #expect(r.feed(.pollSucceeded).last == .notify([.status(.watching)]))
    }

    @Test("stopping: the file goes, STOPPING=1 and STATUS=stopping once; then no STATUS, READY or write")
    func stoppingSuppresses() {
        var r = Rig()
        #expect(r.feed(.stopping) == [.removeStateFile, .notify([.stopping, .status(.stopping)])])
        #expect(r.feed(.stopping).isEmpty)
        #expect(r.feed(.status(.watching)).isEmpty)
        #expect(r.feed(.pollSucceeded).isEmpty)
        #expect(r.feed(.waitingForConfig(.seconds(30))).isEmpty)
        #expect(r.feed(.removeStateFile).isEmpty)
    }

    @Test("an exit without a stop removes the file once and writes nothing after it, but STATUS still goes")
    func removedWithoutStop() {
        var r = Rig()
        #expect(r.feed(.removeStateFile) == [.removeStateFile])
        #expect(r.feed(.pollSucceeded) == [.notify([.ready, .status(.watching)])])
        #expect(r.feed(.removeStateFile).isEmpty)
    }

    @Test("a failed write warns once per run and makes the next write due at once")
    func writeFailureWarnsOnce() {
        var r = Rig()
        #expect(Self.writes(r.feed(.pollSucceeded)).count == 1)
        #expect(r.feed(.stateWriteFailed) == [.log(LogRecord(.warn, .stateFileUnavailable))])
        r.advance(1)
        #expect(Self.writes(r.feed(.pollSucceeded)).count == 1)
        #expect(r.feed(.stateWriteFailed).isEmpty)
    }

    @Test("the config.xml wait writes when it ends, without touching the throttle")
    func waitingForConfig() {
        var r = Rig()
        let waiting = Self.writes(r.feed(.waitingForConfig(.seconds(300))))
        #expect(waiting.map(\.configWaitUntil) == [Self.wall0 + 300])
        #expect(waiting.map(\.started) == [Self.wall0])
        // The first poll is still the first write the throttle sees, and carries no wait.
        #expect(Self.writes(r.feed(.pollSucceeded)).map(\.configWaitUntil) == [nil])
    }

    @Test("the engine's progress is written when it changes significantly, once per change")
    func progressWrites() {
        var r = Rig()
        _ = r.feed(.pollSucceeded)
        let progress = Engine.Progress(sharedFolders: 2, sharedDevices: 1)
        #expect(Self.writes(r.feed(.progress(progress))).map(\.sharedFolders) == [2])
        #expect(r.feed(.progress(progress)).isEmpty)
    }

    @Test("the last wake-up keeps its wall time across a host suspend, as its entry in the recent decisions does")
    func lastWakeAfterSuspend() {
        var r = Rig()
        _ = r.feed(.pollSucceeded)
        let wake = LastWake(at: Instant(.seconds(10)), reason: .change, answer: .delivered)
        r.advance(10)
        let before = Engine.Progress(wake: WakeProgress(lastWake: wake), sharedFolders: 1, sharedDevices: 1)
        #expect(Self.writes(r.feed(.progress(before))).map(\.lastWake?.at) == [Self.wall0 + 10])
        // An hour asleep, then a change is scheduled: the wake-up at 10 s stays at 10 s on the wall clock.
        r.advance(11)
        r.suspend(3_600)
        let after = Engine.Progress(
            wake: WakeProgress(pending: .scheduled(.change, at: Instant(.seconds(26))), lastWake: wake),
            sharedFolders: 1, sharedDevices: 1)
        #expect(Self.writes(r.feed(.progress(after))).map(\.lastWake?.at) == [Self.wall0 + 10])
        // A new wake-up is converted afresh, on the wall clock after the suspend.
        r.advance(5)
        let next = LastWake(at: Instant(.seconds(26)), reason: .change, answer: .delivered)
        let later = Engine.Progress(wake: WakeProgress(lastWake: next), sharedFolders: 1, sharedDevices: 1)
        #expect(Self.writes(r.feed(.progress(later))).map(\.lastWake?.at) == [Self.wall0 + 3_600 + 26])
    }

    @Test("reports 4 times a second on a wall clock read in whole seconds: the next sweep stays put, one write in 10 s")
    func sweepSteadyOnWholeSeconds() {
        var machine = MonitorMachine(now: .zero, wall: Self.wall0)
        // The wall clock is 0.1 s past a whole second at the monotonic origin; it is read truncated.
        func wall(_ now: Instant) -> Int64 { Self.wall0 + Int64(((now.sinceOrigin / .milliseconds(1)) + 100) / 1000) }
        _ = machine.handle(.pollSucceeded, now: .zero, wall: Self.wall0)
        var writes: [ServiceState] = []
        for quarter in 1...39 {
            let now = Instant(.milliseconds(250 * Int64(quarter)))
            // A moving debounce end (not significant) makes each report a new one.
            let progress = Engine.Progress(
                wake: WakeProgress(pending: .scheduled(.change, at: now + .seconds(5)), sweep: .at(.seconds(21_600))),
                sharedFolders: 1, sharedDevices: 1)
            writes += Self.writes(machine.handle(.progress(progress), now: now, wall: wall(now)))
        }
        #expect(writes.map(\.sweep) == [.at(Self.wall0 + 21_600)])
    }

    @Test("the next sweep is written at its wall-clock deadline after a host suspend, and earlier after a step back")
    func sweepAfterSuspend() {
        var r = Rig()
        _ = r.feed(.pollSucceeded)
        let sweep = Instant(.seconds(21_600))
        func progress(pending: PendingWake<Instant>?, sweep: Instant) -> Engine.Progress {
            Engine.Progress(wake: WakeProgress(pending: pending, sweep: .at(sweep)), sharedFolders: 1, sharedDevices: 1)
        }
        #expect(
            Self.writes(r.feed(.progress(progress(pending: nil, sweep: sweep)))).map(\.sweep) == [
                .at(Self.wall0 + 21_600)
            ])
        // An hour asleep: the sweep's timer fires on the wall clock at the time it was armed for, not an hour later.
        r.advance(60)
        r.suspend(3_600)
        let change = progress(pending: .scheduled(.change, at: Instant(.seconds(65))), sweep: sweep)
        #expect(Self.writes(r.feed(.progress(change))).map(\.sweep) == [.at(Self.wall0 + 21_600)])
        // The wall clock stepped back 10 min: the monotonic timer comes first, 10 min earlier on the new wall clock.
        r.advance(10)
        r.suspend(-3_600 - 600)
        #expect(
            Self.writes(r.feed(.progress(progress(pending: nil, sweep: sweep)))).map(\.sweep) == [
                .at(Self.wall0 + 21_000)
            ])
        // ... and forward again: back to the deadline it was armed with.
        r.suspend(600)
        #expect(Self.writes(r.feed(.progress(change))).map(\.sweep) == [.at(Self.wall0 + 21_600)])
        // The next sweep, armed after a suspend, is converted afresh.
        r.advance(21_600 - 70)
        r.suspend(3_600)
        let next = Instant(.seconds(43_200))
        #expect(
            Self.writes(r.feed(.progress(progress(pending: nil, sweep: next)))).map(\.sweep) == [
                .at(Self.wall0 + 3_600 + 43_200)
            ])
    }

    @Test("WATCHDOG=1 only while the poll thread is alive; always once stopping")
    func watchdog() {
        var r = Rig()
        #expect(r.feed(.watchdogTick) == [.notify([.watchdog])])
        let bound = SyncthingTimeouts.pollRequest
        _ = r.feed(.stepStarted(bound: bound))
        r.advance((bound + WatchdogLiveness.defaultGrace).components.seconds)
        #expect(r.feed(.watchdogTick) == [.notify([.watchdog])])
        r.advance(1)  // 1 s past the step's bound and its grace
        #expect(r.feed(.watchdogTick).isEmpty)
        _ = r.feed(.stepFinished)
        #expect(r.feed(.watchdogTick) == [.notify([.watchdog])])
        r.advance(WatchdogLiveness.defaultIdleLimit.components.seconds + 1)  // between steps for longer than the limit
        #expect(r.feed(.watchdogTick).isEmpty)
        _ = r.feed(.stopping)
        #expect(r.feed(.watchdogTick) == [.notify([.watchdog])])
    }
}
