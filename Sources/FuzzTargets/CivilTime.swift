import NotifyCore

// HTTP dates (RFC 9110 §5.6.7): the civil calendar behind the Retry-After date writer.

/// A UTC calendar time, from Unix seconds.
struct CivilTime {
    var year: Int64
    var month: Int64
    var day: Int64
    var hour: Int64
    var minute: Int64
    var second: Int64
    /// 0 = Sunday.
    var weekday: Int64

    /// Howard Hinnant's `civil_from_days`, the inverse of the parser's `days_from_civil`.
    init(unixSeconds t: Int64) {
        let days = t >= 0 ? t / 86_400 : -((-t + 86_399) / 86_400)
        let secs = t - days * 86_400
        hour = secs / 3600
        minute = secs % 3600 / 60
        second = secs % 60
        weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (4)
        (year, month, day) = RetryAfter.civilFromDays(days)
    }

    private static let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private var clock: String { "\(padded(hour, 2)):\(padded(minute, 2)):\(padded(second, 2))" }
    private var monthName: String { Self.months[Int(month) - 1] }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`; nil outside the years 1…9999 that the form can hold.
    var imfFixdate: String? {
        guard (1...9999).contains(year) else { return nil }
        let name = Self.weekdays[Int(weekday)].prefix(3)
        return "\(name), \(padded(day, 2)) \(monthName) \(padded(year, 4)) \(clock) GMT"
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`; nil outside 1970…2069, the century RFC 850's two digits are read in.
    var rfc850: String? {
        guard (1970...2069).contains(year) else { return nil }
        return "\(Self.weekdays[Int(weekday)]), \(padded(day, 2))-\(monthName)-\(padded(year % 100, 2)) \(clock) GMT"
    }

    /// `Sun Nov  6 08:49:37 1994`; nil outside the years 1…9999.
    var asctime: String? {
        guard (1...9999).contains(year) else { return nil }
        let dayText = day < 10 ? " \(day)" : "\(day)"
        return "\(Self.weekdays[Int(weekday)].prefix(3)) \(monthName) \(dayText) \(clock) \(padded(year, 4))"
    }
}
