/// The running service's progress as `--healthcheck` reads it from the state file (`StateFile`). Pure: no clock
/// reads, no I/O. Holds no identifier: two numbers and a category.

/// The last relay answer, as a category (never a status body or an identifier).
public enum RelayOutcomeCategory: String, Sendable, CaseIterable {
    /// No trigger has been answered yet.
    case none
    /// 2xx.
    case delivered
    /// 400–403: no active subscription for this server.
    case inactive
    /// 429.
    case rateLimited = "rate-limited"
    /// 3xx, other 4xx, 5xx, a transport failure, or a 404 after the relay had answered (an outage).
    case transient

    /// The category of `outcome`. A 404 is `.transient`: when the service keeps running after it, the relay had
    /// answered before and the 404 is an outage it backs off from (`WakePolicy.relayHasAnswered`); when it is the
    /// start-up's wrong RELAY_URL the process exits 78 and removes the state file, so the category is never read.
    public init(_ outcome: RelayOutcome) {
        switch outcome {
        case .delivered: self = .delivered
        case .subscriptionInactive: self = .inactive
        case .rateLimited: self = .rateLimited
        case .transient, .endpointMissing: self = .transient
        }
    }
}

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
public struct ServiceState: Sendable, Equatable {
    /// The first line of the file; a different version is not read.
    public static let header = "vaultsync-notify-state 1"
    /// Largest file `decode` accepts, in bytes.
    public static let maxBytes = 4096

    /// Unix seconds of the last successful event poll; nil before the first.
    public var lastPoll: Int64?
    /// The last relay answer.
    public var relay: RelayOutcomeCategory

    public init(lastPoll: Int64? = nil, relay: RelayOutcomeCategory = .none) {
        self.lastPoll = lastPoll
        self.relay = relay
    }

    /// The file's text (see the type's documentation), ending in a newline.
    public func encoded() -> String {
        var text = Self.header + "\n"
        if let lastPoll { text += "last_poll=\(lastPoll)\n" }
        text += "relay=\(relay.rawValue)\n"
        return text
    }

    /// Parses `encoded()` text. Unknown keys are skipped (a newer writer may add some); a wrong header, a
    /// malformed known value or more than `maxBytes` gives nil.
    public static func decode(_ text: String) -> ServiceState? {
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
    public static let maxPollAge: Int64 = 120

    /// How far in the future `lastPoll` may lie (a wall clock stepped back) and still count, in seconds.
    public static let maxClockSkew: Int64 = 120

    /// True when the last successful poll lies within `maxAge` seconds before `now` (or at most `maxSkew` after
    /// it). A relay category never matters: an inactive subscription or an unreachable relay is not something a
    /// restart fixes.
    /// - Parameter now: wall-clock seconds since the Unix epoch.
    public func isFresh(now: Int64, maxAge: Int64 = ServiceState.maxPollAge, maxSkew: Int64 = ServiceState.maxClockSkew)
        -> Bool
    {
        guard let lastPoll else { return false }
        let age = now - lastPoll
        return age <= maxAge && age >= -maxSkew
    }
}

/// Decides when the service rewrites the state file: the first time, whenever the relay category changed, and
/// otherwise at most once per `minInterval` (monotonic time), so that a busy event stream costs at most one small
/// write every 10 s and an idle one a write per long-poll (50 s).
public struct StateWriteThrottle: Sendable {
    public var minInterval: Duration
    private var lastWrite: Instant?
    private var lastRelay: RelayOutcomeCategory?

    public init(minInterval: Duration = .seconds(10)) {
        self.minInterval = minInterval
    }

    /// Whether `state` should be written now; when true, the write is assumed to happen.
    public mutating func shouldWrite(_ state: ServiceState, now: Instant) -> Bool {
        let due =
            lastWrite.map { now - $0 >= minInterval || now < $0 } ?? true
        guard due || lastRelay != state.relay else { return false }
        lastWrite = now
        lastRelay = state.relay
        return true
    }

    /// Forgets the last write, so the next `shouldWrite` is true (after a failed write).
    public mutating func reset() {
        lastWrite = nil
        lastRelay = nil
    }
}
