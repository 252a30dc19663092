import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGTERM and SIGINT for the whole process, from the moment the service starts to start up (before config.xml is
/// found) to its exit: one Dispatch signal source per signal, installed once, that calls whatever handler was routed
/// last. Switching the handler from the start-up one (`Service.stopBeforeStart`) to the running service's leaves no
/// moment in which a signal is lost or handled twice.
enum StopSignals {
    private struct State {
        var handler: (@Sendable () -> Void)?
        var installed = false
    }
    private static let state = ThreadSafe(State())
    /// The sources, kept for the process's lifetime; written once, by the first `route`, and never read.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    private static let queue = DispatchQueue(label: "vaultsync-notify.signals")

    /// Makes `handle` the reaction to SIGTERM and SIGINT (installing the signal sources the first time). Call it
    /// from one thread (the main thread).
    static func route(_ handle: @escaping @Sendable () -> Void) {
        let install = state.withLock { s -> Bool in
            s.handler = handle
            defer { s.installed = true }
            return !s.installed
        }
        guard install else { return }
        #if os(Linux)
            // Dispatch installs its signal handler (and signalfd) later, on its manager thread. Until then the
            // signals are SIG_IGN and one that arrives is discarded: a SIGTERM right after start-up was lost in 3 of
            // 60 tries. Blocked, a signal stays pending instead, and reaches the source once it is in place.
            var stops = sigset_t()
            sigemptyset(&stops)
            for sig in [SIGTERM, SIGINT] { sigaddset(&stops, sig) }
            pthread_sigmask(SIG_BLOCK, &stops, nil)
            defer { pthread_sigmask(SIG_UNBLOCK, &stops, nil) }
        #endif
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { state.withLock { $0.handler }?() }
            source.resume()
            sources.append(source)
        }
        #if os(Linux)
            waitForDispatchHandlers([SIGTERM, SIGINT])
        #endif
    }

    #if os(Linux)
        /// Waits (at most 5 s) until Dispatch has replaced SIG_IGN with its own handler for each of `signals`.
        private static func waitForDispatchHandlers(_ signals: [Int32]) {
            let deadline = MonotonicClock.now() + .seconds(5)
            for sig in signals {
                while MonotonicClock.now() < deadline {
                    var current = sigaction()
                    sigaction(sig, nil, &current)
                    if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
                        != unsafeBitCast(SIG_IGN, to: Int.self)
                    {
                        break
                    }
                    usleep(1000)
                }
            }
        }
    #endif
}

extension Service {
    /// Until a `Service` starts (while config.xml is awaited, up to SYNCTHING_CONFIG_WAIT_SECONDS), SIGTERM and SIGINT
    /// end the process with status 0 after the same records as every other stop with nothing pending.
    package static func stopBeforeStart(logger: Logger) {
        unblockHandledSignals()
        StopSignals.route {
            for record in Engine.idleStopRecords { logger.log(record) }
            _exit(ExitStatus.ok.rawValue)
        }
    }

    /// A parent may start us with signals blocked (Dispatch worker threads block them, and a child inherits the
    /// spawning thread's mask): unblock the ones the sidecar handles, on the calling thread. Call it on the main
    /// thread before any other thread exists, so that every later thread inherits the unblocked mask.
    package static func unblockHandledSignals() {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblock, sig) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }
}
