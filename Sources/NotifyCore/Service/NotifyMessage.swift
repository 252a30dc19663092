/// One line of the systemd notify protocol (sd_notify(3)); only fixed texts.
package enum NotifyMessage: Sendable, Equatable {
    /// `READY=1`: start-up finished (sent after the first successful event poll).
    case ready
    /// `STATUS=<text>`: shown by `systemctl status`.
    case status(ServiceStatusText)
    /// `STOPPING=1`: shutdown began.
    case stopping
    /// `WATCHDOG=1`: the event loop is making progress.
    case watchdog

    package var line: String {
        switch self {
        case .ready: "READY=1"
        case .status(let text): "STATUS=\(text.rawValue)"
        case .stopping: "STOPPING=1"
        case .watchdog: "WATCHDOG=1"
        }
    }
}
