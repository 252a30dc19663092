import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The stop signals (`SignalPolicy` `.stop`: SIGTERM, SIGINT, SIGQUIT) for the whole process, from the moment the
/// service starts to start up (before config.xml is found) to its exit: one Dispatch signal source per signal,
/// installed once, that calls whatever handler was routed last. Switching the handler from the start-up one
/// (`ServiceLifecycle`'s, during the config.xml wait) to the running service's leaves no moment in which a signal is
/// lost or handled twice.
///
/// On Linux the signals stay blocked in every thread (`ServiceSignals.prepare`, before any thread starts): Dispatch
/// reads them from a signalfd, so a signal that comes before its source is in place waits, pending, instead of being
/// discarded or taking its default action on some other thread. (macOS: ignored, and read from a kqueue.)
enum StopSignals {
    private struct State {
        var handler: (@Sendable () -> Void)?
        var installed = false
    }
    private static let state = ThreadSafe(State())
    /// The sources, kept for the process's lifetime; written once, by the first `route`, and never read.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    private static let queue = DispatchQueue(label: "vaultsync-notify.signals")

    /// Makes `handle` the reaction to the stop signals (installing the signal sources the first time). Call it
    /// from one thread (the main thread), after `ServiceSignals.prepare`.
    static func route(_ handle: @escaping @Sendable () -> Void) {
        let install = state.withLock { s -> Bool in
            s.handler = handle
            defer { s.installed = true }
            return !s.installed
        }
        guard install else { return }
        for sig in ServiceSignals.numbers(.stop) {
            ServiceSignals.prepareSource(sig)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { state.withLock { $0.handler }?() }
            source.resume()
            sources.append(source)
        }
    }
}

/// `SignalPolicy`'s table on this platform.
enum ServiceSignals {
    /// Applies `SignalPolicy` to this process: blocks the stop and re-read signals and ignores the ignored ones.
    /// Call it first thing on the main thread, before any other thread exists, so that every later thread inherits
    /// the mask (a parent may also have started us with some of them blocked or ignored; this decides either way).
    static func prepare() {
        var handled = sigset_t()
        sigemptyset(&handled)
        for sig in numbers(.stop) + numbers(.reread) { sigaddset(&handled, sig) }
        #if os(Linux)
            pthread_sigmask(SIG_BLOCK, &handled, nil)
        #else
            // kqueue sees a signal only once it is delivered: unblocked (a parent may have blocked it), ignored.
            pthread_sigmask(SIG_UNBLOCK, &handled, nil)
            for sig in numbers(.stop) + numbers(.reread) { signal(sig, SIG_IGN) }
        #endif
        for sig in numbers(.ignore) { signal(sig, SIG_IGN) }
    }

    /// Readies `sig` for a Dispatch signal source. Linux: nothing, it is blocked (`ServiceSignals.prepare`); setting
    /// SIG_IGN here would discard one already pending (POSIX), and a blocked signal is queued whatever its disposition
    /// (an inherited SIG_IGN, as sh gives a background job's SIGINT and SIGQUIT, included). macOS: SIG_IGN, so that
    /// its default action never runs; its kqueue sees the signal all the same.
    static func prepareSource(_ sig: Int32) {
        #if !os(Linux)
            signal(sig, SIG_IGN)
        #endif
    }

    /// This platform's numbers for the signals with `action`, in the table's order.
    static func numbers(_ action: SignalPolicy.Action) -> [Int32] {
        SignalPolicy.names(action).compactMap(number)
    }

    /// The platform's number for a `SignalPolicy` name; nil for one this platform lacks (SIGPWR, SIGSTKFLT on macOS).
    static func number(_ name: String) -> Int32? {
        switch name {
        case "SIGTERM": return SIGTERM
        case "SIGINT": return SIGINT
        case "SIGQUIT": return SIGQUIT
        case "SIGHUP": return SIGHUP
        case "SIGPIPE": return SIGPIPE
        case "SIGUSR1": return SIGUSR1
        case "SIGUSR2": return SIGUSR2
        case "SIGALRM": return SIGALRM
        case "SIGVTALRM": return SIGVTALRM
        case "SIGPROF": return SIGPROF
        case "SIGIO": return SIGIO
        default: break
        }
        #if os(Linux)
            switch name {
            case "SIGPWR": return SIGPWR
            case "SIGSTKFLT": return SIGSTKFLT
            default: break
            }
        #endif
        return nil
    }
}
