/// The position in Syncthing's filtered event subscription, as a value.
///
/// Knows the head it started from and detects lost events and Syncthing restarts (docs/syncthing-api.md, The
/// event head; Event ids, gaps and the buffer; Restarts):
/// - Start at the current head (`since=0&limit=1&timeout=0`): events from before the start never wake anyone.
/// - A gap (first id ≠ cursor + 1, or a hole inside a batch) means the 1000-event buffer overflowed or an event was
///   dropped.
/// - A restart: `startTime` changed, or ids went backwards. Syncthing restarts ids at 1, and a stale cursor would
///   silently skip the new run's first events (docs/syncthing-api.md, Restarts), so the cursor must be reset to the new
///   head.
package struct EventCursor: Sendable, Equatable {
    /// The id of the last event consumed (Syncthing per-subscription event id); 0 before any event.
    package private(set) var position: Int
    /// Syncthing's `startTime` from `/rest/system/status` when the cursor was placed (RFC 3339, whole seconds).
    package private(set) var startTime: String

    /// What a poll came to.
    package enum Verdict: Sendable, Equatable {
        /// Consecutive new events; the cursor advanced past them.
        case events([SyncthingEvent])
        /// New events after a hole: some were lost. The cursor advanced past these; wake and re-sync.
        case gap([SyncthingEvent])
        /// Syncthing restarted: place the cursor at the new head (`reset(head:startTime:)`), wake and re-sync.
        case restarted
        /// No new events.
        case idle
    }

    /// Places the cursor at the current head.
    /// - Parameters:
    ///   - head: the id returned by `since=0&limit=1&timeout=0`, or 0 for `[]`.
    ///   - startTime: Syncthing's `startTime`.
    package init(head: Int, startTime: String) {
        position = max(0, head)
        self.startTime = startTime
    }

    /// Re-places the cursor after a restart or a re-sync.
    package mutating func reset(head: Int, startTime: String) {
        self = EventCursor(head: head, startTime: startTime)
    }

    /// The `since` parameter for the next long-poll. Never negative (a negative `since` returns placeholders).
    package var since: Int { position }

    /// Consumes one poll's answer.
    /// - Parameters:
    ///   - events: the decoded events, in the order received.
    ///   - startTime: Syncthing's current `startTime`, read right after the poll returned.
    package mutating func consume(_ events: [SyncthingEvent], startTime: String) -> Verdict {
        guard startTime == self.startTime else { return .restarted }
        guard let first = events.first else { return .idle }
        // Ids at or below the cursor: the event ids started again (a restart within the same second).
        if first.id <= position { return .restarted }
        var expected = first.id
        var hole = first.id != position + 1
        for event in events {
            if event.id != expected {
                if event.id < expected { return .restarted }
                hole = true
            }
            expected = event.id + 1
        }
        position = events[events.count - 1].id
        return hole ? .gap(events) : .events(events)
    }
}
