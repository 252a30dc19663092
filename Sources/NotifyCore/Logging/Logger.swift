/// Severity, ordered from most to least severe. Parsed from `LOG_LEVEL=error|warn|info|debug`.
package enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error = 0, warn, info, debug

    package var name: String {
        switch self {
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .debug: "debug"
        }
    }

    package init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// syslog priority used by journald's stream protocol: error 3, warning 4, info 6, debug 7.
    package var syslogPriority: Int {
        switch self {
        case .error: 3
        case .warn: 4
        case .info: 6
        case .debug: 7
        }
    }
}

/// How a record is written: `LOG_FORMAT=text|json`.
package enum LogFormat: String, Sendable, CaseIterable {
    /// `level=info msg="wake-up delivered" status=202` (`LogRecord.textLine(journald:)`).
    case text
    /// `{"level":"info","msg":"wake-up delivered","status":202}` (`LogRecord.jsonLine(journald:time:)`).
    case json
}

/// Where records go. Implementations: stderr (runtime) and an in-memory sink in tests.
package protocol LogSink: Sendable {
    func write(_ record: LogRecord)
}

/// Filters by level and forwards to a sink.
package struct Logger: Sendable {
    package var minimumLevel: LogLevel
    package var sink: any LogSink

    package init(minimumLevel: LogLevel = .info, sink: any LogSink) {
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    package func log(_ level: LogLevel, _ message: LogMessage, _ fields: LogField...) {
        guard level <= minimumLevel else { return }
        sink.write(LogRecord(level, message, fields))
    }

    package func log(_ record: LogRecord) {
        guard record.level <= minimumLevel else { return }
        sink.write(record)
    }
}
