/// The simulator's one source of randomness: xoshiro256** seeded through SplitMix64, so that a seed is a replayable
/// run on every machine (no `SystemRandomNumberGenerator`, no hashing of Swift's randomly seeded `Hasher`).
///
/// Each part of the world draws from its own stream, `fork(_:)` of the run's seed by a fixed label: turning one fault
/// kind off (shrinking) then leaves every other part's draws as they were.
struct SimRandom: RandomNumberGenerator {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    /// An independent stream for `label`, derived from `seed` alone.
    static func fork(_ seed: UInt64, _ label: String) -> SimRandom {
        SimRandom(seed: seed ^ fnv1a(label))
    }

    mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// Uniform in 0..<1.
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// Uniform in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// Uniform in `lower...upper`.
    mutating func double(_ lower: Double, _ upper: Double) -> Double { lower + (upper - lower) * unit() }

    /// Log-uniform in `lower...upper` (both > 0): as likely between 1 and 10 as between 10 and 100.
    mutating func logUniform(_ lower: Double, _ upper: Double) -> Double {
        (lower.log() + (upper.log() - lower.log()) * unit()).exp()
    }

    /// Uniform between two durations, to the millisecond.
    mutating func duration(_ lower: Duration, _ upper: Duration) -> Duration {
        let a = lower.milliseconds
        let b = upper.milliseconds
        return .milliseconds(a + Int64(next() % UInt64(max(1, b - a + 1))))
    }

    /// Exponentially distributed with this mean (the gap between events of a Poisson process), to the millisecond.
    mutating func exponential(mean: Duration) -> Duration {
        let u = max(unit(), 1e-12)
        return .milliseconds(Int64((-u.log() * Double(mean.milliseconds)).rounded()) + 1)
    }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// A token of lower-case letters and digits, for planted identifiers.
    mutating func token(_ length: Int) -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        return String((0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] })
    }

    /// A well-formed Syncthing Device ID (8 groups of 7 base32 characters).
    mutating func deviceID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        return (0..<8).map { _ in String((0..<7).map { _ in alphabet[Int(next() % 32)] }) }.joined(separator: "-")
    }
}

/// 64-bit FNV-1a of a string's UTF-8 bytes.
func fnv1a(_ text: String, _ start: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
    var hash = start
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    return hash
}

extension Double {
    /// Natural logarithm and exponential without Foundation (Glibc's `log`/`exp`).
    func log() -> Double { simLog(self) }
    func exp() -> Double { simExp(self) }
}

extension Duration {
    /// Whole milliseconds (truncated).
    var milliseconds: Int64 {
        let (s, a) = components
        return s * 1000 + a / 1_000_000_000_000_000
    }

    /// Seconds as a Double.
    var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }
}

extension Duration {
    /// Seconds to the millisecond, without trailing zeros (`1.5`, `30`).
    var secondsText: String {
        let ms = milliseconds
        let sign = ms < 0 ? "-" : ""
        let a = abs(ms)
        guard a % 1000 != 0 else { return "\(sign)\(a / 1000)" }
        var fraction = String(String(a % 1000 + 1000).dropFirst())
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(a / 1000).\(fraction)"
    }
}
