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

    /// - Parameters:
    ///   - environment: only `JOURNAL_STREAM` is read (set and non-empty: journald).
    ///   - format: `Configuration.logFormat`.
    package init(environment: [String: String], format: LogFormat = .text) {
        journald = !(environment["JOURNAL_STREAM"] ?? "").isEmpty
        self.format = format
    }

    package func write(_ record: LogRecord) {
        writeFully(2, line(record) + "\n")
    }

    /// The line for `record`, without the newline.
    func line(_ record: LogRecord) -> String {
        switch (format, journald) {
        case (.text, true): record.textLine(journald: true)
        case (.text, false): "\(Self.timestamp()) \(record.textLine())"
        case (.json, true): record.jsonLine(journald: true)
        case (.json, false): record.jsonLine(time: Self.timestamp())
        }
    }

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let ms = Int(ts.tv_nsec / 1_000_000)
        let msText = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec)).\(msText)Z"
    }
}

/// Seconds since the Unix epoch, for HTTP-date Retry-After values.
@Sendable package func wallClockSeconds() -> Int64 { Int64(time(nil)) }

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
