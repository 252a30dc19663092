import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's one clock seam: monotonic time on the `Instant` timeline, and a blocking wait on it.
/// `MonotonicClock` in production; a virtual clock in tests. `ServiceRuntime` refines it with the service's queues
/// and timers; before any engine exists, the config.xml wait (`ConfigLocator.locate`) uses it alone.
package protocol MonotonicTimeline: Sendable {
    /// The current instant.
    func now() -> Instant
    /// Blocks the calling thread until `instant` (at once when it has passed).
    func sleep(until instant: Instant)
}

/// Monotonic time since boot (CLOCK_MONOTONIC through Dispatch): the process's one `Instant` timeline, shared by the
/// engine, the monitor and the config.xml wait.
package struct MonotonicClock: MonotonicTimeline {
    package init() {}

    @Sendable package static func now() -> Instant {
        Instant(.nanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds)))
    }

    package func now() -> Instant { Self.now() }

    /// `nanosleep(2)`, resumed after a signal, until the clock reads `instant`.
    package func sleep(until instant: Instant) {
        while case let left = instant - Self.now(), left > .zero {
            let ns = left.nanoseconds
            var request = timespec(tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000)
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        }
    }
}
