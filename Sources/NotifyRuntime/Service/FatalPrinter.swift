import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints the lines a process ends on (`FatalLine.render`) to standard error, in one write: in LOG_FORMAT's format,
/// under journald (`JOURNAL_STREAM` set) each line with its syslog priority, elsewhere a JSON object with the time
/// first, as the log records' lines. Used by every mode that ends on such lines, the service's start-up and its
/// running exits (`ServiceLifecycle`) among them.
package struct FatalPrinter: Sendable {
    package var format: LogFormat
    package var journald: Bool

    /// Text lines outside journald: what a service that was given no printer prints (tests, tools).
    package static let plainText = FatalPrinter(format: .text, journald: false)

    package init(format: LogFormat, journald: Bool) {
        self.format = format
        self.journald = journald
    }

    /// - Parameters:
    ///   - environment: `JOURNAL_STREAM` is read, and LOG_FORMAT when `format` is nil.
    ///   - format: the configuration's LOG_FORMAT; nil before the configuration exists, when LOG_FORMAT alone says it.
    package init(environment: [String: String], format: LogFormat? = nil) {
        self.init(
            format: format ?? Configuration.logFormat(environment: environment),
            journald: Self.journald(environment))
    }

    /// Prints `lines` (none prints nothing). Outside journald a JSON line is stamped with the system's wall clock.
    package func print(_ lines: [FatalLine]) {
        guard !lines.isEmpty else { return }
        let time = journald || format == .text ? nil : StderrLogSink.timestamp(SystemClock())
        writeFully(2, FatalLine.render(lines, format: format, journald: journald, time: time) + "\n")
    }

    /// True when standard error goes to journald (`JOURNAL_STREAM` set and not empty).
    package static func journald(_ environment: [String: String]) -> Bool {
        !(environment["JOURNAL_STREAM"] ?? "").isEmpty
    }

    /// True when standard error is a terminal.
    package static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
