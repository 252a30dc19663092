/// Which of Syncthing's peer answers could not be read (whole, or one folder's `devices` list), as a log category.
package enum PeerAnswer: String, Sendable, CaseIterable {
    /// `GET /rest/config/devices`.
    case devices = "config-devices"
    /// `GET /rest/config/folders`, or one folder's `devices` list in it (that folder's pairs are skipped).
    case folders = "config-folders"
    /// `GET /rest/system/connections`.
    case connections
    /// `GET /rest/db/completion`.
    case completion
}

/// Malformed peer answers, logged once per kind per `interval` with how many there were, so that a Syncthing that
/// keeps sending one is seen in the log without flooding it. Never the body: a category and a count.
package struct MalformedAnswerLog: Sendable, Equatable {
    /// At most one line per kind within this long.
    package static let interval: Duration = .seconds(3_600)

    private var lastLogged: [PeerAnswer: Instant] = [:]
    /// Malformed answers of each kind since its last line (the one in hand included).
    private var unlogged: [PeerAnswer: Int] = [:]

    package init() {}

    /// Counts one malformed answer of each kind in `kinds`.
    /// - Returns: a warning per kind not logged within `interval` before `now` (in `PeerAnswer.allCases` order),
    ///   whose `count` is the malformed answers of that kind since its previous line.
    package mutating func note(_ kinds: Set<PeerAnswer>, now: Instant) -> [LogRecord] {
        var records: [LogRecord] = []
        for kind in PeerAnswer.allCases where kinds.contains(kind) {
            let count = unlogged[kind, default: 0] + 1
            if let last = lastLogged[kind], now - last < Self.interval {
                unlogged[kind] = count
                continue
            }
            records.append(LogRecord(.warn, .syncthingAnswerMalformed, [.answer(kind), .count(count)]))
            lastLogged[kind] = now
            unlogged[kind] = 0
        }
        return records
    }
}
