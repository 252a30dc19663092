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
