// Writers for the round-trip invariants: each renders a parsed value back into the text form its parser reads,
// written independently of the parser under test.

/// `text` as XML character data or an attribute value: markup characters as entities, C0/C1 controls and DEL as
/// character references (so that a CR survives XML's line-end normalisation).
func xmlEscaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default:
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                out += "&#x" + String(scalar.value, radix: 16) + ";"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

/// `text` as a JSON string literal, quotes included (RFC 8259 §7).
func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

/// Whether `bytes` contains `needle` (ASCII) anywhere.
func contains(_ bytes: [UInt8], _ needle: String) -> Bool {
    let pattern = Array(needle.utf8)
    guard !pattern.isEmpty, bytes.count >= pattern.count else { return pattern.isEmpty }
    for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
        if bytes[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
    }
    return false
}

/// `text` without leading and trailing ASCII space, tab, CR and LF, compared byte by byte.
func asciiTrimmed(_ text: String) -> String {
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    let bytes = Array(text.utf8)
    guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(decoding: bytes[first...last], as: UTF8.self)
}

/// True when `text` neither starts nor ends with a Unicode white-space scalar.
func isUnicodeTrimmed(_ text: String) -> Bool {
    text.unicodeScalars.first?.properties.isWhitespace != true
        && text.unicodeScalars.last?.properties.isWhitespace != true
}

// MARK: - HTTP dates (RFC 9110 §5.6.7)

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
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
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
