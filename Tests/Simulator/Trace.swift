/// Everything observable that happened in one run, one line each, stamped with the true time:
/// the world's changes and faults, every request and its answer, every log record the service wrote, every trigger.
/// The run's identity is the FNV-1a hash of all its lines: the same seed must give the same hash, byte for byte.
///
/// Only a window of the latest lines is kept in memory; `capture` keeps the lines of a time range whole (a replay
/// that prints the trace around a broken promise).
final class Trace: @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.
    private(set) var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var lines = 0
    private var recent: [(at: Duration, text: String)] = []
    private var recentStart = 0
    private let keep: Int
    /// Lines whose true time falls in this range are kept whole, in `captured`.
    var capture: ClosedRange<Duration>?
    private(set) var captured: [String] = []
    /// The stamp of the latest line, as bytes (most lines share their instant's stamp with the line before).
    private var stampOf: Duration?
    private var stampBytes: [UInt8] = []

    init(keep: Int = 400) { self.keep = keep }

    /// Adds one line at true time `at`. The hash takes `<stamp> <text>\n`, the line as `tail` gives it.
    func add(_ at: Duration, _ text: String) {
        if stampOf != at {
            stampOf = at
            stampBytes = Array(Self.stamp(at).utf8)
        }
        var h = hash
        for byte in stampBytes { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        h = (h ^ 0x20) &* 0x0000_0100_0000_01b3
        var text = text
        text.withUTF8 { bytes in
            for byte in bytes { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        hash = (h ^ 0x0a) &* 0x0000_0100_0000_01b3
        lines += 1
        if recent.count < keep {
            recent.append((at, text))
        } else {
            recent[recentStart] = (at, text)
            recentStart = (recentStart + 1) % keep
        }
        if let capture, capture.contains(at) { captured.append("\(Self.stamp(at)) \(text)") }
    }

    /// The latest lines, oldest first.
    var tail: [String] { (recent[recentStart...] + recent[..<recentStart]).map { "\(Self.stamp($0.at)) \($0.text)" } }

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
