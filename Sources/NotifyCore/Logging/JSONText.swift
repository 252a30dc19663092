/// JSON text written by this program: the log's JSON lines and `--doctor --json` share one string escaping.
package enum JSONText {
    /// `text` as a JSON string literal, quotes included (RFC 8259): `"` and `\` escaped, the control characters
    /// U+0000–U+001F as `\b \f \n \r \t` or `\u00XX` (lowercase hex), `/` and everything else as it is (UTF-8).
    /// The same bytes as Foundation's `JSONEncoder` with `.withoutEscapingSlashes`, which `--doctor --json`
    /// printed before (its golden files hold that output).
    package static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\u{8}": out += "\\b"
            case "\u{C}": out += "\\f"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u00"
                out.unicodeScalars.append(hexDigit(scalar.value >> 4))
                out.unicodeScalars.append(hexDigit(scalar.value & 15))
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func hexDigit(_ value: UInt32) -> Unicode.Scalar {
        Unicode.Scalar(UInt8(value < 10 ? 0x30 + value : 0x61 + value - 10))
    }
}
