/// A point on the sidecar's monotonic timeline: the time since an arbitrary origin (the host's boot in production,
/// zero in tests). The pure core never reads a clock; every input carries `now` as an `Instant`.
package struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Time since the origin.
    package var sinceOrigin: Duration

    package init(_ sinceOrigin: Duration) { self.sinceOrigin = sinceOrigin }

    /// The origin itself.
    package static let zero = Instant(.zero)

    package static func seconds(_ s: Double) -> Instant { Instant(.milliseconds(Int64((s * 1000).rounded()))) }

    package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceOrigin < rhs.sinceOrigin }
    package static func + (lhs: Instant, rhs: Duration) -> Instant { Instant(lhs.sinceOrigin + rhs) }
    package static func - (lhs: Instant, rhs: Instant) -> Duration { lhs.sinceOrigin - rhs.sinceOrigin }

    package var description: String { "t=\(LogValue.seconds(sinceOrigin))s" }
}
