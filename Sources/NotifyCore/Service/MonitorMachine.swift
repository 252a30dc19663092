/// What the service tells the outside world about its progress, as one pure state machine: the systemd notify
/// protocol (READY, STATUS, STOPPING, WATCHDOG) and the state file `--healthcheck` and `--status` read. The shell
/// (`ServiceMonitor`) feeds it `Input`s with the time and carries out the `Output`s in order: it owns only the
/// socket and the file.
///
/// - `READY=1` goes out once, with the first successful event poll (the cursor's head read, answered at once:
///   waiting for the first 50 s long-poll would hold start-up back for nothing), never after shutdown began.
/// - `STATUS=` goes out only when its text changes, and not at all once shutdown began (after `STATUS=stopping`).
///   The relay's answer shows in it only once the service is ready.
/// - The state file is written when `StateWriteThrottle` says so, at once before `READY=1` (so that
///   `--healthcheck` can pass as soon as systemd reads the service as started); never once shutdown began or the
///   file was removed. A failed write makes the next one due at once, and logs `stateFileUnavailable` once per run.
/// - `WATCHDOG=1` goes out at a tick only while `WatchdogLiveness` says the poll thread is alive.
package struct MonitorMachine: Sendable {
    package enum Input: Sendable, Equatable {
        /// A fixed status text (start-up: `starting`, `connecting`).
        case status(ServiceStatusText)
        /// The service waits up to this long for config.xml (the state file says until when).
        case waitingForConfig(Duration)
        /// An event poll (and the status read after it) succeeded.
        case pollSucceeded
        /// Syncthing did not answer.
        case syncthingUnavailable
        /// A trigger was answered.
        case relayOutcome(RelayOutcome)
        /// The engine's state after an input (`Engine.progress`).
        case progress(Engine.Progress)
        /// Shutdown began (SIGTERM, SIGINT).
        case stopping
        /// The run ends without a stop (`Engine.Exit.Farewell.removeStateFile`).
        case removeStateFile
        /// A state-file write (`Output.writeState`) failed.
        case stateWriteFailed
        /// The poll thread begins a blocking step that returns within `bound`.
        case stepStarted(bound: Duration)
        /// The poll thread's current step ended.
        case stepFinished
        /// The watchdog timer fired.
        case watchdogTick
    }

    package enum Output: Sendable, Equatable {
        /// Send these lines as one notify datagram.
        case notify([NotifyMessage])
        /// Replace the state file with this state.
        case writeState(ServiceState)
        case removeStateFile
        case log(LogRecord)
    }

    private var ready = false
    private var connected = true
    private var relay = RelayOutcomeCategory.none
    private var status: ServiceStatusText?
    private var state: ServiceState
    private var progress: Engine.Progress?
    /// The sweep's monotonic instant and the wall-clock deadline it was armed with (`sweepDeadline`).
    private var sweepArmed: (instant: Instant, wall: Int64)?
    /// A monotonic instant and the wall clock read with it, by which instants become Unix seconds while later
    /// readings agree with it (`wallAnchor(now:wall:)`).
    private var wallAnchor: (now: Instant, wall: Int64)?
    private var throttle = StateWriteThrottle()
    private var liveness: WatchdogLiveness
    private var stopping = false
    private var stateFileGone = false
    private var stateWarned = false

    /// - Parameters:
    ///   - now: the service's monotonic clock at start (liveness).
    ///   - wall: seconds since the Unix epoch at start (the state file's `started`).
    ///   - writer: this process, written into every state when it holds the lock beside the state file; nil without
    ///     that lock.
    package init(now: Instant, wall: Int64, writer: ServiceWriter? = nil) {
        state = ServiceState(started: wall, writer: writer)
        liveness = WatchdogLiveness(now: now)
    }

    /// Feeds one input.
    /// - Parameters:
    ///   - now: the service's monotonic clock (liveness, write throttling).
    ///   - wall: seconds since the Unix epoch (the state file's times).
    /// - Returns: what to carry out, in order.
    package mutating func handle(_ input: Input, now: Instant, wall: Int64) -> [Output] {
        switch input {
        case .status(let text):
            return statusChange(text)
        case .waitingForConfig(let wait):
            guard !stopping, !stateFileGone else { return [] }
            var waiting = state
            waiting.updated = wall
            waiting.configWaitUntil = wall + wait.components.seconds
            return [.writeState(waiting)]
        case .pollSucceeded:
            connected = true
            state.lastPoll = wall
            state.relay = relay
            state.syncthingReachable = true
            var messages: [NotifyMessage] = []
            if !ready && !stopping {
                ready = true
                messages.append(.ready)
            }
            let text = ServiceStatusText.running(connected: true, relay: relay)
            if status != text && !stopping {
                status = text
                messages.append(.status(text))
            }
            // The file first: once READY=1 is out, `--healthcheck` can already pass.
            return stateWrite(now: now, wall: wall) + (messages.isEmpty ? [] : [.notify(messages)])
        case .syncthingUnavailable:
            connected = false
            state.syncthingReachable = false
            return stateWrite(now: now, wall: wall) + statusChange(.running(connected: false, relay: relay))
        case .relayOutcome(let outcome):
            relay = RelayOutcomeCategory(outcome)
            state.relay = relay
            return ready ? statusChange(.running(connected: connected, relay: relay)) : []
        case .progress(let progress):
            // The common case (a poll with nothing new) costs one comparison.
            guard self.progress != progress else { return [] }
            // The last wake-up is in the past: it keeps the wall time it was first written with, so that a suspend
            // or a clock step since does not move it (and away from the same wake-up in `recent`).
            let keptWake = self.progress?.wake.lastWake == progress.wake.lastWake ? state.lastWake : nil
            self.progress = progress
            let anchor = wallAnchor(now: now, wall: wall)
            state.record(progress, now: anchor.now, wallNow: anchor.wall)
            if let keptWake { state.lastWake = keptWake }
            state.sweep = sweepDeadline(progress.wake.sweep, converted: state.sweep)
            return stateWrite(now: now, wall: wall)
        case .stopping:
            guard !stopping else { return [] }
            stopping = true
            status = .stopping
            liveness.stopped()
            return removeFile() + [.notify([.stopping, .status(.stopping)])]
        case .removeStateFile:
            return removeFile()
        case .stateWriteFailed:
            throttle.reset()
            guard !stateWarned else { return [] }
            stateWarned = true
            return [.log(LogRecord(.warn, .stateFileUnavailable))]
        case .stepStarted(let bound):
            liveness.stepStarted(now: now, bound: bound)
            return []
        case .stepFinished:
            liveness.stepFinished(now: now)
            return []
        case .watchdogTick:
            return liveness.isAlive(now: now) ? [.notify([.watchdog])] : []
        }
    }

    /// The next sweep as the state file shows it. The sweep's timer fires at its monotonic instant or at the
    /// wall-clock time that instant had when it was armed, whichever comes first (`ServiceRuntime.schedule`,
    /// `alsoOnWallClock`). The engine reports a new instant in the same input that arms it, so its first conversion
    /// (`ServiceState.record`) is that wall deadline, kept in `sweepArmed`; a later conversion of the same instant
    /// moves by as long as the monotonic clock stood still meanwhile (a host suspend) or the wall clock was stepped,
    /// so the earlier of the two is written.
    /// - Parameters:
    ///   - sweep: the engine's sweep now.
    ///   - converted: `sweep` in Unix seconds, converted at this input.
    private mutating func sweepDeadline(_ sweep: SweepSchedule<Instant>, converted: SweepSchedule<Int64>?)
        -> SweepSchedule<Int64>?
    {
        guard case .at(let instant) = sweep, case .at(let wall)? = converted else {
            sweepArmed = nil
            return converted
        }
        guard let armed = sweepArmed, armed.instant == instant else {
            sweepArmed = (instant, wall)
            return converted
        }
        return .at(min(armed.wall, wall))
    }

    /// The reading to convert instants to Unix seconds with: the kept one while this reading agrees with it to the
    /// second, else this one (the wall clock was stepped, or the host was suspended). The wall clock is read in whole
    /// seconds and the monotonic one is not, so converting each time from the current readings moves a fixed
    /// instant back and forth by a second as the fraction goes round: the next sweep's time then changed at almost
    /// every report, and each change was a state-file write (with its fsync), two a second on a busy stream.
    private mutating func wallAnchor(now: Instant, wall: Int64) -> (now: Instant, wall: Int64) {
        if let anchor = wallAnchor {
            let expected = anchor.wall + Int64(((now - anchor.now) / .milliseconds(1) / 1000).rounded())
            if abs(wall - expected) <= 1 { return anchor }
        }
        wallAnchor = (now, wall)
        return (now, wall)
    }

    /// `STATUS=` when the text differs from the last one sent, and shutdown has not begun.
    private mutating func statusChange(_ text: ServiceStatusText) -> [Output] {
        guard status != text, !stopping else { return [] }
        status = text
        return [.notify([.status(text)])]
    }

    /// The state to write now, if any (`StateWriteThrottle`).
    private mutating func stateWrite(now: Instant, wall: Int64) -> [Output] {
        guard !stopping, !stateFileGone else { return [] }
        state.updated = wall
        return throttle.shouldWrite(state, now: now) ? [.writeState(state)] : []
    }

    private mutating func removeFile() -> [Output] {
        guard !stateFileGone else { return [] }
        stateFileGone = true
        return [.removeStateFile]
    }
}
