import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Monotonic time and a blocking sleep, so that the first-boot wait can be tested without sleeping.
package protocol WaitClock: Sendable {
    /// Monotonic time since an arbitrary, fixed origin.
    func now() -> Duration
    /// Blocks the calling thread for `duration`.
    func sleep(for duration: Duration)
}

/// The process's monotonic timeline (`MonotonicClock`) and `nanosleep(2)`.
package struct SystemWaitClock: WaitClock {
    package init() {}

    package func now() -> Duration { MonotonicClock.now().sinceOrigin }

    package func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        let ns = duration.nanoseconds
        var request = timespec(tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
