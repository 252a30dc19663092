import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's one clock seam: the host's two clocks, and a blocking wait on the monotonic one. `SystemClock` in
/// production, the only code that reads the system's clocks; the test host's and the simulator's runtimes on virtual
/// time. `ServiceRuntime` refines it with the service's queues and timers; before any engine exists, the config.xml
/// wait (`ConfigLocator.locate`) uses it alone.
package protocol HostClock: Sendable {
    /// The monotonic clock: the current instant on the `Instant` timeline (time since boot; it stands still while
    /// the host is suspended). Every wait is measured on it.
    func now() -> Instant
    /// Blocks the calling thread until the monotonic clock reads `instant` (at once when it has passed).
    func sleep(until instant: Instant)
    /// The wall clock: milliseconds since the Unix epoch. It goes on during a suspend and may step either way, so
    /// it is never waited on: only shown (the state file, `--status`, METRICS_FILE, log lines) and read against a
    /// Retry-After HTTP-date.
    func unixMilliseconds() -> Int64
}

extension HostClock {
    /// The wall clock in whole seconds since the Unix epoch, rounded down (as `time(2)` gives it).
    package func unixSeconds() -> Int64 {
        let ms = unixMilliseconds()
        return ms / 1000 - (ms % 1000 < 0 ? 1 : 0)
    }
}

/// The system's clocks: CLOCK_MONOTONIC through Dispatch (the process's one `Instant` timeline, shared by the engine,
/// the monitor and the config.xml wait) and CLOCK_REALTIME. Nothing else in the process reads either.
package struct SystemClock: HostClock {
    package init() {}

    package func now() -> Instant {
        Instant(.nanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds)))
    }

    /// `nanosleep(2)`, resumed after a signal, until the clock reads `instant`.
    package func sleep(until instant: Instant) {
        while case let left = instant - now(), left > .zero {
            let ns = left.nanoseconds
            var request = timespec(tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000)
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        }
    }

    /// `clock_gettime(CLOCK_REALTIME)`, to the millisecond.
    package func unixMilliseconds() -> Int64 {
        var ts = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
