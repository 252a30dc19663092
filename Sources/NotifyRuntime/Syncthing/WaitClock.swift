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

/// `ContinuousClock` time and `nanosleep(2)`.
package struct SystemWaitClock: WaitClock {
    private let origin = ContinuousClock.now

    package init() {}

    package func now() -> Duration { origin.duration(to: .now) }

    package func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
