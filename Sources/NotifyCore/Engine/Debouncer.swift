/// The open batch of news, as one pure value on virtual time (`Instant`, `Duration`): part of `WakePolicy`.
///
/// A trailing debounce capped by a maximum wait: the batch opens with its first news at `start`; each news moves its
/// deadline to `debounce` after it, but never past `start + maxWait`, so a continuous stream of changes cannot hold a
/// wake-up back longer than `maxWait` (a `maxWait` below `debounce` makes every batch end `maxWait` after it opened).
/// The batch carries one reason (`merge`: the first one's). It knows nothing of the relay: closing it hands its reason
/// to `WakePolicy`, which passes it to the `TriggerGate`; the policy also closes it when a trigger goes out before its
/// deadline, since that trigger's push fetches the same news.
package struct Debouncer: Sendable, Equatable {
    /// One open batch: when its first news came, when it is due, and the reason it will be sent for.
    package struct Batch: Sendable, Equatable {
        package var start: Instant
        package var deadline: Instant
        package var reason: WakeReason
    }

    /// Quiet time after the last news before the batch is due.
    package let debounce: Duration
    /// Longest a batch may stay open after its first news.
    package let maxWait: Duration
    /// The open batch; nil when none is.
    package private(set) var batch: Batch?

    package init(debounce: Duration, maxWait: Duration) {
        self.debounce = debounce
        self.maxWait = maxWait
    }

    /// The reason a batch (or a waiting wake-up) carries once `b` joins `a`: the first reason is kept, so an announce
    /// stays an announce.
    package static func merge(_ a: WakeReason?, _ b: WakeReason) -> WakeReason { a ?? b }

    /// Adds news at `now`, opening a batch if none is open.
    /// - Returns: the batch's new deadline (the debounce timer is re-armed for it), and whether this news opened it.
    package mutating func add(_ reason: WakeReason, now: Instant) -> (deadline: Instant, opened: Bool) {
        let start = batch?.start ?? now
        let deadline = min(now + debounce, start + maxWait)
        let opened = batch == nil
        batch = Batch(start: start, deadline: deadline, reason: Self.merge(batch?.reason, reason))
        return (deadline, opened)
    }

    /// Closes the open batch (its deadline came, the service stops, or a trigger took its news).
    /// - Returns: its reason; nil when no batch was open.
    package mutating func close() -> WakeReason? {
        defer { batch = nil }
        return batch?.reason
    }
}
