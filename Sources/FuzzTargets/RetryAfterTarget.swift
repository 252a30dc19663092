import NotifyCore

/// The wall clock used when an input does not give one: 2026-11-30T02:00:00Z.
let defaultWallClock: Int64 = 1_796_004_000

/// Splits `<first line>\n<rest>`; without a newline the whole input is the rest.
func splitFirstLine(_ input: [UInt8]) -> (first: String?, rest: [UInt8]) {
    guard let newline = input.firstIndex(of: 0x0A) else { return (nil, input) }
    return (String(decoding: input[..<newline], as: UTF8.self), Array(input[(newline + 1)...]))
}

/// Reads a wall clock (Unix seconds) from `text`: decimal digits within 0…2^40 (year 36812), else the default.
func wallClock(_ text: Substring?) -> Int64 {
    guard let text, let value = Int64(text), (0...(Int64(1) << 40)).contains(value) else { return defaultWallClock }
    return value
}

/// `<now>\n<header value>` through `RetryAfter`.
///
/// Invariants: every delay is within `RetryAfter.minimum…maximum`; a missing header waits `fallback`; delta-seconds
/// wait that many seconds (clamped; more than 12 digits saturate); an HTTP-date waits until that time (clamped);
/// anything else waits `fallback`; and an HTTP-date rendered from the parsed time, or from the input's clock, in each
/// of the three forms parses back to the same second.
func fuzzRetryAfter(_ input: [UInt8], _ check: inout InvariantCheck) {
    let (first, rest) = splitFirstLine(input)
    let now = wallClock(first.map { Substring($0) })
    let header = String(decoding: rest, as: UTF8.self)
    checkRetryAfter(header: header, now: now, &check)

    // The date arithmetic over the whole clock range, against an independent calendar.
    let civil = CivilTime(unixSeconds: now)
    for text in [civil.imfFixdate, civil.rfc850, civil.asctime].compactMap({ $0 }) {
        check.expect(RetryAfter.httpDate(text) == now, "\(text) did not parse as \(now)")
    }
}

/// Checks `RetryAfter.delay(header:wallClockNow:)` for one header value against the rules in its documentation.
func checkRetryAfter(header: String, now: Int64, _ check: inout InvariantCheck) {
    let delay = RetryAfter.delay(header: header, wallClockNow: now)
    check.expect(
        delay >= RetryAfter.minimum && delay <= RetryAfter.maximum, "delay \(delay) out of bounds for \(header)")
    check.expect(RetryAfter.delay(header: nil, wallClockNow: now) == RetryAfter.fallback, "missing header")

    func clamped(_ seconds: Int64) -> Duration {
        min(max(.seconds(seconds), RetryAfter.minimum), RetryAfter.maximum)
    }
    let value = asciiTrimmed(header)
    let expected: Duration
    if value.isEmpty || value.utf8.count > 64 {
        expected = RetryAfter.fallback
    } else if value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
        // More than 12 digits saturate (leading zeros count): documented, and always past the 1 h clamp.
        expected = value.utf8.count > 12 ? RetryAfter.maximum : clamped(Int64(value)!)
    } else if let date = RetryAfter.httpDate(value) {
        expected = clamped(date - now)
        let civil = CivilTime(unixSeconds: date)
        for text in [civil.imfFixdate, civil.rfc850, civil.asctime].compactMap({ $0 }) {
            check.expect(RetryAfter.httpDate(text) == date, "\(value) → \(date), but \(text) does not")
        }
    } else {
        expected = RetryAfter.fallback
    }
    check.expect(delay == expected, "Retry-After \(header.debugDescription) at \(now): \(delay), expected \(expected)")
}
