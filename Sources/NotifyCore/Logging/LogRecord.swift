/// Log records that cannot leak an identifier.
///
/// The privacy rule (SECURITY.md, "Logs"): operational logs carry only fixed categories,
/// status codes, bounded counts and durations; never a Device ID, folder ID, file name, path, URL, API key or
/// response body. That is enforced by construction here: a record is a fixed `LogMessage` plus typed `LogValue`s,
/// and no `LogValue` case can hold a `String` that came from outside the program.

/// Closed set of field names.
package enum LogKey: String, Sendable, CaseIterable {
    case status, count, duration, delay, reason, code, attempt, level, events, folders, pairs, needing, variable
    case exitStatus = "exit_status"
    case pending
    case answer
}

/// A typed log value. There is deliberately no case for an arbitrary string.
package enum LogValue: Sendable, Equatable {
    case int(Int)
    case bool(Bool)
    /// Rendered in seconds with millisecond precision.
    case duration(Duration)
    case error(ErrorCode)
    case reason(WakeReason)
    case level(LogLevel)
    /// The name of an environment variable this program defines (never its value).
    case variable(ConfigVariable)
    /// Which of Syncthing's answers (a fixed category).
    case answer(PeerAnswer)

    /// The value as it appears in a text or JSON log line (JSON: numbers and booleans bare, others quoted).
    package var rendered: String {
        switch self {
        case .int(let v): String(v)
        case .bool(let v): v ? "true" : "false"
        case .duration(let d): Self.seconds(d)
        case .error(let c): c.rawValue
        case .reason(let r): r.rawValue
        case .level(let l): l.name
        case .variable(let v): v.rawValue
        case .answer(let a): a.rawValue
        }
    }

    var isBare: Bool {
        switch self {
        case .int, .bool, .duration: true
        default: false
        }
    }

    static func seconds(_ d: Duration) -> String {
        let (s, atto) = d.components
        let totalMs = s * 1000 + atto / 1_000_000_000_000_000
        let sign = totalMs < 0 ? "-" : ""
        let ms = totalMs < 0 ? -totalMs : totalMs
        let frac = ms % 1000
        let fracText = frac < 10 ? "00\(frac)" : frac < 100 ? "0\(frac)" : "\(frac)"
        return "\(sign)\(ms / 1000).\(fracText)"
    }
}

/// One log record: a level, a fixed message and typed fields.
package struct LogRecord: Sendable, Equatable {
    package var level: LogLevel
    package var message: LogMessage
    package var fields: [LogField]

    package init(_ level: LogLevel, _ message: LogMessage, _ fields: [LogField] = []) {
        self.level = level
        self.message = message
        self.fields = fields
    }

    /// `level=info msg="wake-up delivered" status=202 duration=0.012`: one line, no timestamp (the service
    /// manager adds one), `<N>` priority prefix when `journald` is true.
    package func textLine(journald: Bool = false) -> String {
        var line = journald ? "<\(syslogPriority)>" : ""
        line += "level=\(level.name) msg=\"\(message.rawValue)\""
        for field in fields {
            line += " \(field.key.rawValue)=\(field.value.rendered)"
        }
        return line
    }

    /// `{"level":"info","msg":"wake-up delivered","status":202,"duration":0.012}`: one JSON object on one line, the
    /// same typed fields as `textLine` under the same keys, numbers and booleans bare (durations in seconds),
    /// everything else a JSON string.
    /// - Parameters:
    ///   - journald: prefix the `<N>` syslog priority (journald strips it and keeps the object as the message).
    ///   - time: an RFC 3339 timestamp to put first as `"time"`; nil (journald, tests) for none.
    package func jsonLine(journald: Bool = false, time: String? = nil) -> String {
        var line = journald ? "<\(syslogPriority)>{" : "{"
        if let time { line += "\"time\":\(Self.jsonString(time))," }
        line += "\"level\":\(Self.jsonString(level.name)),\"msg\":\(Self.jsonString(message.rawValue))"
        for field in fields {
            let value = field.value.isBare ? field.value.rendered : Self.jsonString(field.value.rendered)
            line += ",\(Self.jsonString(field.key.rawValue)):\(value)"
        }
        return line + "}"
    }

    /// A JSON string literal (`JSONText.quoted`). Every input here is program text, escaped all the same.
    static func jsonString(_ text: String) -> String { JSONText.quoted(text) }

    /// syslog priority used by journald's stream protocol: error 3, warning 4, info 6, debug 7.
    package var syslogPriority: Int { level.syslogPriority }
}

/// A (key, value) pair in a record.
package struct LogField: Sendable, Equatable {
    package var key: LogKey
    package var value: LogValue
    package init(_ key: LogKey, _ value: LogValue) {
        self.key = key
        self.value = value
    }
    package static func status(_ v: Int) -> LogField { LogField(.status, .int(v)) }
    package static func count(_ v: Int) -> LogField { LogField(.count, .int(v)) }
    package static func duration(_ v: Duration) -> LogField { LogField(.duration, .duration(v)) }
    package static func delay(_ v: Duration) -> LogField { LogField(.delay, .duration(v)) }
    package static func reason(_ v: WakeReason) -> LogField { LogField(.reason, .reason(v)) }
    package static func code(_ v: ErrorCode) -> LogField { LogField(.code, .error(v)) }
    package static func attempt(_ v: Int) -> LogField { LogField(.attempt, .int(v)) }
    package static func variable(_ v: ConfigVariable) -> LogField { LogField(.variable, .variable(v)) }
    package static func answer(_ v: PeerAnswer) -> LogField { LogField(.answer, .answer(v)) }
}
