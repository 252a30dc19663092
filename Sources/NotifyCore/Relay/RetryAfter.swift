/// Parses an HTTP `Retry-After` header (RFC 9110 §10.2.3) into a wait, clamped for safety.
///
/// Accepts delta-seconds (`"120"`) and an HTTP-date in any of the three forms RFC 9110 §5.6.7 requires a recipient
/// to accept: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). Missing or unreadable → `fallback` (30 s). The result is clamped to
/// `minimum…maximum` (1 s … 1 h), so that a relay's 429 can neither spin the sidecar nor park it for days
/// (README.md, "Relay answers").
package enum RetryAfter {
    package static let fallback: Duration = .seconds(30)
    package static let minimum: Duration = .seconds(1)
    package static let maximum: Duration = .seconds(3600)

    /// - Parameters:
    ///   - header: the raw header value, or nil when absent.
    ///   - wallClockNow: the current wall-clock time in seconds since the Unix epoch (for HTTP-dates).
    /// - Returns: how long to wait, within 1 s … 1 h.
    package static func delay(header: String?, wallClockNow: Int64) -> Duration {
        guard let header, let seconds = waitSeconds(header, wallClockNow: wallClockNow) else { return fallback }
        return clamp(.seconds(seconds))
    }

    static func clamp(_ d: Duration) -> Duration { min(max(d, minimum), maximum) }

    static func waitSeconds(_ raw: String, wallClockNow: Int64) -> Int64? {
        let value = raw.trimmingASCIIWhitespace()
        guard !value.isEmpty, value.utf8.count <= 64 else { return nil }
        if value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            // Delta-seconds; absurdly long values saturate (and are clamped to 1 h later).
            return value.utf8.count > 12 ? Int64(1) << 40 : Int64(value)
        }
        guard let date = httpDate(value) else { return nil }
        return date - wallClockNow
    }

    /// Seconds since the Unix epoch for an HTTP-date, or nil.
    package static func httpDate(_ value: String) -> Int64? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let tokens = value.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int64?, month: Int64?, year: Int64?, time: (Int64, Int64, Int64)?
        if tokens.count == 6, tokens[5] == "GMT" {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            day = Int64(tokens[1])
            month = months.firstIndex(of: tokens[2].lowercased()).map { Int64($0) + 1 }
            year = tokens[3].count == 4 ? Int64(tokens[3]) : nil
            time = clock(tokens[4])
        } else if tokens.count == 4, tokens[3] == "GMT" {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let parts = tokens[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let yy = Int64(parts[2]), parts[2].count == 2 else { return nil }
            day = Int64(parts[0])
            month = months.firstIndex(of: parts[1].lowercased()).map { Int64($0) + 1 }
            year = yy < 70 ? 2000 + yy : 1900 + yy
            time = clock(tokens[2])
        } else if tokens.count == 5 {
            // asctime: Sun Nov  6 08:49:37 1994
            month = months.firstIndex(of: tokens[1].lowercased()).map { Int64($0) + 1 }
            day = Int64(tokens[2])
            time = clock(tokens[3])
            year = tokens[4].count == 4 ? Int64(tokens[4]) : nil
        }
        guard let day, let month, let year, let time, (1...31).contains(day), (1...12).contains(month),
            (1...9999).contains(year)
        else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + time.0 * 3600 + time.1 * 60 + time.2
    }

    private static func clock(_ text: String) -> (Int64, Int64, Int64)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }),
            let h = Int64(parts[0]), let m = Int64(parts[1]), let s = Int64(parts[2]),
            (0...23).contains(h), (0...59).contains(m), (0...60).contains(s)
        else { return nil }
        return (h, m, s)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of a day since 1970-01-01 (Howard Hinnant's `civil_from_days`, the inverse of
    /// `daysFromCivil`): month 1–12, day 1–31.
    package static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, doy - (153 * mp + 2) / 5 + 1)
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs, CR and LF. Compared byte by byte: as Characters, a CR LF
    /// pair is one grapheme that equals neither "\r" nor "\n", and a space followed by a combining mark is one too.
    package func trimmingASCIIWhitespace() -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: utf8[first...last], as: UTF8.self)
    }
}
