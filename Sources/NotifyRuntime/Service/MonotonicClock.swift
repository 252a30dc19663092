import Dispatch
import NotifyCore

/// Monotonic time since boot (CLOCK_MONOTONIC through Dispatch): the process's one `Instant` timeline.
enum MonotonicClock {
    @Sendable static func now() -> Instant {
        Instant(.nanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds)))
    }
}
