/// What `WakePolicy` holds at one instant, as `--status` shows it: the relay's state, the wake-up that waits, the
/// last one the relay answered, and the next stale-peer sweep. On the monotonic timeline (`Instant`); the state
/// file holds the same values on the wall clock (`ServiceState`, through `map`). Carries no identifier.
package struct WakeProgress: Sendable, Equatable {
    package var relay: RelayGate<Instant>
    package var pending: PendingWake<Instant>?
    package var lastWake: LastWake<Instant>?
    package var sweep: SweepSchedule<Instant>

    package init(
        relay: RelayGate<Instant> = .open, pending: PendingWake<Instant>? = nil, lastWake: LastWake<Instant>? = nil,
        sweep: SweepSchedule<Instant> = .off
    ) {
        self.relay = relay
        self.pending = pending
        self.lastWake = lastWake
        self.sweep = sweep
    }
}

/// Why the relay is not sent to before a given time. The raw values are the state file's and `--status --json`'s.
package enum RelayWait: String, Sendable, Equatable, CaseIterable {
    /// 400–403: no active subscription; the re-check (60 s).
    case inactiveRecheck = "inactive"
    /// A 5xx, a transport failure or an outage's 404: the backoff.
    case backoff
    /// 429: the relay's Retry-After.
    case rateLimited = "rate-limited"
}

/// The relay as the policy sees it, at times of type `Time` (`Instant`, or Unix seconds in the state file).
package enum RelayGate<Time: Sendable & Equatable>: Sendable, Equatable {
    /// Nothing holds a trigger back.
    case open
    /// No trigger before `until` (`RelayWait` says why).
    case waiting(RelayWait, until: Time)
    /// The relay's push window after an accepted trigger runs until `until`; news waits for its end.
    case window(until: Time)

    /// The same gate with its time converted.
    package func map<Other>(_ convert: (Time) -> Other) -> RelayGate<Other> {
        switch self {
        case .open: .open
        case .waiting(let wait, let until): .waiting(wait, until: convert(until))
        case .window(let until): .window(until: convert(until))
        }
    }
}

/// A wake-up that the relay has not answered yet.
package enum PendingWake<Time: Sendable & Equatable>: Sendable, Equatable {
    /// Goes out at `at` (the end of its debounce, or of a wait or push window that holds it back).
    case scheduled(WakeReason, at: Time)
    /// Posted; the relay has not answered yet.
    case sending(WakeReason)

    /// The same wake-up with its time converted.
    package func map<Other>(_ convert: (Time) -> Other) -> PendingWake<Other> {
        switch self {
        case .scheduled(let reason, let at): .scheduled(reason, at: convert(at))
        case .sending(let reason): .sending(reason)
        }
    }
}

/// The last trigger the relay answered (whatever the answer).
package struct LastWake<Time: Sendable & Equatable>: Sendable, Equatable {
    /// When the answer came.
    package var at: Time
    package var reason: WakeReason
    package var answer: RelayOutcomeCategory

    package init(at: Time, reason: WakeReason, answer: RelayOutcomeCategory) {
        self.at = at
        self.reason = reason
        self.answer = answer
    }

    /// The same wake-up with its time converted.
    package func map<Other>(_ convert: (Time) -> Other) -> LastWake<Other> {
        LastWake<Other>(at: convert(at), reason: reason, answer: answer)
    }
}

/// The stale-peer sweep.
package enum SweepSchedule<Time: Sendable & Equatable>: Sendable, Equatable {
    /// STALE_RETRIGGER_SECONDS=0.
    case off
    /// On, but not armed (before the start, or while stopping).
    case notScheduled
    /// The next one runs at this time.
    case at(Time)

    /// The same schedule with its time converted.
    package func map<Other>(_ convert: (Time) -> Other) -> SweepSchedule<Other> {
        switch self {
        case .off: .off
        case .notScheduled: .notScheduled
        case .at(let time): .at(convert(time))
        }
    }
}
