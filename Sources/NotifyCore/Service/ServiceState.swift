/// The running service's progress as `--healthcheck` reads it from the state file (`StateFile`). Pure: no clock
/// reads, no I/O. Holds no identifier: two numbers and a category.

/// What the state file holds.
///
/// Text form (`encoded()`), UTF-8, one `key=value` per line after a version line:
/// ```
/// vaultsync-notify-state 1
/// last_poll=1718000000
/// relay=delivered
/// ```
/// `last_poll` is wall-clock seconds since the Unix epoch (CLOCK_REALTIME: `--healthcheck` is another process, so
/// the service's monotonic clock means nothing to it); it is absent before the first successful poll.
package struct ServiceState: Sendable, Equatable {
    /// The first line of the file; a different version is not read.
    package static let header = "vaultsync-notify-state 1"
    /// Largest file `decode` accepts, in bytes.
    package static let maxBytes = 4096

    /// Unix seconds of the last successful event poll; nil before the first.
    package var lastPoll: Int64?
    /// The last relay answer.
    package var relay: RelayOutcomeCategory

    package init(lastPoll: Int64? = nil, relay: RelayOutcomeCategory = .none) {
        self.lastPoll = lastPoll
        self.relay = relay
    }

    /// The file's text (see the type's documentation), ending in a newline.
    package func encoded() -> String {
        var text = Self.header + "\n"
        if let lastPoll { text += "last_poll=\(lastPoll)\n" }
        text += "relay=\(relay.rawValue)\n"
        return text
    }

    /// Parses `encoded()` text. Unknown keys are skipped (a newer writer may add some); a wrong header, a
    /// malformed known value or more than `maxBytes` gives nil.
    package static func decode(_ text: String) -> ServiceState? {
        guard text.utf8.count <= maxBytes else { return nil }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == Substring(header) else { return nil }
        lines.removeFirst()
        var state = ServiceState()
        for line in lines {
            guard let eq = line.firstIndex(of: "=") else { return nil }
            let key = line[..<eq]
            let value = line[line.index(after: eq)...]
            switch key {
            case "last_poll":
                guard !value.isEmpty, value.utf8.count <= 19, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                    let seconds = Int64(value)
                else { return nil }
                state.lastPoll = seconds
            case "relay":
                guard let category = RelayOutcomeCategory(rawValue: String(value)) else { return nil }
                state.relay = category
            default:
                continue
            }
        }
        return state
    }

    /// Longest a healthy service goes without a successful poll, in seconds: a long-poll answers at least every
    /// 50 s (`timeout=50`) and writes are at most 10 s apart when due, so 120 s allows one slow or failed poll.
    package static let maxPollAge: Int64 = 120

    /// How far in the future `lastPoll` may lie (a wall clock stepped back) and still count, in seconds.
    package static let maxClockSkew: Int64 = 120

    /// True when the last successful poll lies within `maxAge` seconds before `now` (or at most `maxSkew` after
    /// it). A relay category never matters: an inactive subscription or an unreachable relay is not something a
    /// restart fixes.
    /// - Parameter now: wall-clock seconds since the Unix epoch.
    package func isFresh(
        now: Int64, maxAge: Int64 = ServiceState.maxPollAge, maxSkew: Int64 = ServiceState.maxClockSkew
    )
        -> Bool
    {
        guard let lastPoll else { return false }
        let age = now - lastPoll
        return age <= maxAge && age >= -maxSkew
    }
}
