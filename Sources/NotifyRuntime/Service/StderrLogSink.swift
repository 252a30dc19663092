import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes one line per record to standard error with a single `write(2)`, so lines from different threads never
/// interleave. Under journald (`JOURNAL_STREAM` set) each line starts with a `<N>` syslog priority prefix and no
/// timestamp (journald adds its own); elsewhere an RFC 3339 UTC timestamp leads the line (text) or is the first
/// field, `"time"` (json). The line is `LogRecord.textLine` or `LogRecord.jsonLine` after `format` (LOG_FORMAT).
package struct StderrLogSink: LogSink {
    package var journald: Bool
    package var format: LogFormat
    private let clock: any HostClock

    /// - Parameters:
    ///   - environment: only `JOURNAL_STREAM` is read (set and non-empty: journald).
    ///   - format: `Configuration.logFormat`.
    ///   - clock: the wall clock of the timestamps.
    package init(environment: [String: String], format: LogFormat = .text, clock: any HostClock = SystemClock()) {
        journald = FatalPrinter.journald(environment)
        self.format = format
        self.clock = clock
    }

    package func write(_ record: LogRecord) {
        writeFully(2, line(record) + "\n")
    }

    /// The line for `record`, without the newline.
    func line(_ record: LogRecord) -> String {
        switch (format, journald) {
        case (.text, true): record.textLine(journald: true)
        case (.text, false): "\(Self.timestamp(clock)) \(record.textLine())"
        case (.json, true): record.jsonLine(journald: true)
        case (.json, false): record.jsonLine(time: Self.timestamp(clock))
        }
    }

    /// `clock`'s wall clock now in RFC 3339, UTC, to the millisecond: `2024-06-10T06:13:20.000Z`.
    static func timestamp(_ clock: any HostClock) -> String {
        let unixMilliseconds = clock.unixMilliseconds()
        // Rounded down, so that a time before the epoch keeps its milliseconds positive.
        let ms = Int((unixMilliseconds % 1000 + 1000) % 1000)
        var t = time_t((unixMilliseconds - Int64(ms)) / 1000)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let msText = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec)).\(msText)Z"
    }
}

/// Writes all of `text` to a file descriptor with `write(2)` (retrying on EINTR and short writes); gives up quietly
/// when the descriptor is closed. One call per line keeps lines from different threads whole.
package func writeFully(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}
