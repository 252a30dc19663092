/// A point on the sidecar's monotonic timeline: the time since an arbitrary origin (process start in production,
/// zero in tests). The pure core never reads a clock; every input carries `now` as an `Instant`.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Time since the origin.
    public var sinceOrigin: Duration

    public init(_ sinceOrigin: Duration) { self.sinceOrigin = sinceOrigin }

    /// The origin itself.
    public static let zero = Instant(.zero)

    public static func seconds(_ s: Double) -> Instant { Instant(.milliseconds(Int64((s * 1000).rounded()))) }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceOrigin < rhs.sinceOrigin }
    public static func + (lhs: Instant, rhs: Duration) -> Instant { Instant(lhs.sinceOrigin + rhs) }
    public static func - (lhs: Instant, rhs: Instant) -> Duration { lhs.sinceOrigin - rhs.sinceOrigin }

    public var description: String { "t=\(LogValue.seconds(sinceOrigin))s" }
}
