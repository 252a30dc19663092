/// What the running service does with each signal it can catch, in one table: the runtime applies it (mapping names
/// to the platform's numbers) and README's "Signals" section states it.
///
/// Signals left out keep the system's default: the faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP,
/// SIGSYS) and resource limits (SIGXCPU, SIGXFSZ) end the process, as they should; job control (SIGTSTP, SIGTTIN,
/// SIGTTOU, SIGCONT) and SIGCHLD, SIGURG, SIGWINCH do what a terminal user expects, or nothing.
package enum SignalPolicy {
    package enum Action: Sendable, Hashable {
        /// Stop gracefully: send a pending wake-up, then exit 0 (`Engine` `.stop`).
        case stop
        /// Re-read config.xml and the environment's Syncthing access (`Engine` `.hangup`).
        case reread
        /// Nothing: a stray signal neither ends nor disturbs the service.
        case ignore
    }

    /// Signal names (as `kill -l` prints them, with the `SIG` prefix) and what each does. SIGPWR and SIGSTKFLT exist
    /// on Linux only.
    package static let table: [(name: String, action: Action)] = [
        ("SIGTERM", .stop), ("SIGINT", .stop), ("SIGQUIT", .stop),
        ("SIGHUP", .reread),
        ("SIGPIPE", .ignore), ("SIGUSR1", .ignore), ("SIGUSR2", .ignore), ("SIGALRM", .ignore),
        ("SIGVTALRM", .ignore), ("SIGPROF", .ignore), ("SIGIO", .ignore), ("SIGPWR", .ignore),
        ("SIGSTKFLT", .ignore),
    ]

    /// The names with `action`, in table order.
    package static func names(_ action: Action) -> [String] { table.filter { $0.action == action }.map(\.name) }
}
