/// One problem a process ends on, as standard error shows it: a usage error (exit 64), an invalid variable or an
/// unusable config.xml (78; 75 while config.xml is not there yet), or a fatal exit of the running service.
///
/// Text (LOG_FORMAT=text): the doctor's shape, `vaultsync-notify: <message>` then `  fix: <fix>; run
/// `vaultsync-notify --doctor` for details`; a usage error is its message, the usage line and a pointer to `--help`.
/// JSON (LOG_FORMAT=json): one object on one line with the same texts, `{"level":"error","msg":"<message>",
/// "fix":"…","exit_status":78}` (a usage error adds `"usage"`), so that every line on stderr reads as the log records'
/// JSON lines do (`LogRecord.jsonLine`). Messages are program text that names a variable, never its value; a path
/// only where the caller shows one to a person at a terminal.
package struct FatalLine: Sendable, Equatable {
    package var message: String
    /// What to do; for a usage error, the pointer to `--help`.
    package var fix: String
    /// The usage line, for a usage error only.
    package var usage: String?
    package var status: ExitStatus

    /// A problem and its fix (a sentence; its closing full stop is dropped before the pointer to `--doctor`).
    package init(_ message: String, fix: String, status: ExitStatus) {
        self.message = message
        var sentence = Substring(fix)
        while sentence.hasSuffix(".") { sentence = sentence.dropLast() }
        self.fix = "\(sentence); run `vaultsync-notify --doctor` for details"
        self.status = status
    }

    /// A usage error: `problem`, then `usageLine`, then where to read more.
    package static func usage(_ problem: String, usageLine: String) -> FatalLine {
        var line = FatalLine(problem, fix: "", status: .usage)
        line.fix = "Try 'vaultsync-notify --help' for more."
        line.usage = usageLine
        return line
    }

    /// A temporary failure is a warning (a service manager starts the process again); every other one an error.
    package var level: LogLevel { status == .temporary ? .warn : .error }

    /// The text lines, joined by line feeds, without a final one.
    package var text: String {
        if let usage { return "vaultsync-notify: \(message)\n\(usage)\n\(fix)" }
        return "vaultsync-notify: \(message)\n  fix: \(fix)"
    }

    /// One JSON object on one line, `time` (RFC 3339) first when given.
    package func jsonLine(time: String? = nil) -> String {
        var fields: [(String, String)] = []
        if let time { fields.append(("time", JSONText.quoted(time))) }
        fields += [("level", JSONText.quoted(level.name)), ("msg", JSONText.quoted(message))]
        if let usage { fields.append(("usage", JSONText.quoted(usage))) }
        fields += [("fix", JSONText.quoted(fix)), (LogKey.exitStatus.rawValue, String(status.rawValue))]
        return "{" + fields.map { "\(JSONText.quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    /// `lines` as standard error shows them, without a final line feed.
    /// - Parameters:
    ///   - format: LOG_FORMAT (`Configuration.logFormat(environment:)` before the configuration exists).
    ///   - journald: every line starts with its syslog priority (`<3>`, `<4>`), as the log records' lines do under
    ///     journald, so that `journalctl -p err` shows a fatal exit.
    ///   - time: the JSON objects' `"time"` (nil under journald, which stamps lines itself).
    package static func render(_ lines: [FatalLine], format: LogFormat, journald: Bool, time: String?) -> String {
        lines.flatMap { line -> [String] in
            let prefix = journald ? "<\(line.level.syslogPriority)>" : ""
            switch format {
            case .text: return line.text.split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }
            case .json: return [prefix + line.jsonLine(time: time)]
            }
        }.joined(separator: "\n")
    }
}
