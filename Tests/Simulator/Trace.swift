/// Everything observable that happened in one run, one line each, with the true time and the host's monotonic time:
/// the world's changes and faults, every request and its answer, every log record the service wrote, every trigger.
/// The run's identity is the FNV-1a hash of all its lines: the same seed must give the same hash, byte for byte.
///
/// Only a window of the latest lines is kept in memory; `capture` keeps the lines of a time range whole (a replay
/// that prints the trace around a broken promise).
final class Trace: @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.
    private(set) var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var lines = 0
    private var recent: [String] = []
    private var recentStart = 0
    private let keep: Int
    /// Lines whose true time falls in this range are kept whole, in `captured`.
    var capture: ClosedRange<Duration>?
    private(set) var captured: [String] = []

    init(keep: Int = 400) { self.keep = keep }

    /// Adds one line at true time `at` (monotonic `mono`, seconds since the host's origin).
    func add(_ at: Duration, _ text: String) {
        let line = "\(Self.stamp(at)) \(text)"
        hash = fnv1a(line + "\n", hash)
        lines += 1
        if recent.count < keep {
            recent.append(line)
        } else {
            recent[recentStart] = line
            recentStart = (recentStart + 1) % keep
        }
        if let capture, capture.contains(at) { captured.append(line) }
    }

    /// The latest lines, oldest first.
    var tail: [String] { Array(recent[recentStart...] + recent[..<recentStart]) }

    /// `d` as `[d]dHH:MM:SS.mmm` of true time.
    static func stamp(_ d: Duration) -> String {
        let ms = d.milliseconds
        let days = ms / 86_400_000
        var rest = ms % 86_400_000
        let h = rest / 3_600_000
        rest %= 3_600_000
        let m = rest / 60_000
        rest %= 60_000
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let millis = String(rest % 1000 + 1000).dropFirst()
        return "\(days)d\(two(h)):\(two(m)):\(two(rest / 1000)).\(millis)"
    }

    /// The hash as 16 hex digits.
    var hashText: String {
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
