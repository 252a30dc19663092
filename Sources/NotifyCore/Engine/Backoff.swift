/// Exponential backoff with full jitter for transient relay and Syncthing failures.
///
/// Ceiling after `n` consecutive failures: `min(cap, base × 2^(n-1))`; the delay is `jitter × ceiling`, floored at
/// `minimum`. With the relay defaults (base 1 s, cap 5 min) the ceilings are 1, 2, 4, 8, 16, 32, 64, 128, 256, 300,
/// 300, … seconds (from 1 s doubling to a 5 min cap, reset after a success).
package struct Backoff: Sendable, Equatable {
    package var base: Duration
    package var cap: Duration
    package var minimum: Duration

    package init(base: Duration = .seconds(1), cap: Duration = .seconds(300), minimum: Duration = .milliseconds(100)) {
        self.base = base
        self.cap = cap
        self.minimum = minimum
    }

    /// The ceiling after `failures` consecutive failures (≥ 1).
    package func ceiling(afterFailures failures: Int) -> Duration {
        var ceiling = base
        var n = 1
        while n < failures && ceiling < cap {
            ceiling = ceiling * 2
            n += 1
        }
        return min(ceiling, cap)
    }

    /// The delay before the next attempt.
    /// - Parameters:
    ///   - failures: consecutive failures so far, ≥ 1.
    ///   - jitter: a uniform random number in `0..<1`, supplied by the caller so that the result is deterministic.
    package func delay(afterFailures failures: Int, jitter: Double) -> Duration {
        let j = jitter.isFinite ? min(max(jitter, 0), 1) : 1
        let ceiling = ceiling(afterFailures: failures)
        return max(minimum, ceiling * j)
    }
}
