/// A streaming pull reader over one JSON text (RFC 8259), made for Syncthing's and the relay's answers.
///
/// Use it through `JSONReader.read(_:_:)`: the closure pulls values in document order (`peek()`, `beginObject()` and
/// `nextKey()`, `beginArray()` and `nextElement()`, `readString()`, `readNumber()`, `readBool()`, `skipValue()`), and
/// `read` then requires that nothing but whitespace follows the top value. Keys are compared as bytes (`JSONKey`), and
/// skipped values build nothing: skipping a 4 MiB array of file names allocates nothing.
///
/// Strictness, and where it differs from Foundation's `JSONDecoder` (docs/syncthing-api.md, bodies):
/// - Syntax is RFC 8259's, also inside skipped values, where `JSONDecoder` only finds the end of strings and numbers:
///   no trailing commas, no raw control characters or unknown escapes in strings, no leading zeros, `1.`, `.5`, `+1`,
///   `1e`. Whitespace is space, tab, LF and CR; one UTF-8 byte order mark may open the text (as `JSONDecoder`). The
///   text must be UTF-8 (`JSONDecoder` also takes UTF-16 and UTF-32).
/// - Nesting deeper than `maxDepth` (64) is an error (`JSONDecoder`: 512).
/// - Kept strings and keys of read objects must be valid Unicode (no invalid UTF-8, no lone surrogate escape), as
///   in `JSONDecoder`; skipped strings are checked for syntax only, not for UTF-8, as in `JSONDecoder`.
/// - Numbers read as integers follow `JSONDecoder`, `1.0` and `1e2` included: see `JSONNumber.int64`.
package struct JSONReader {
    /// The deepest nesting of arrays and objects accepted.
    package static let maxDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index: Int
    private var depth = 0
    /// Bit `d` is set when the container at depth `d + 1` is an object (for `skipValue()`).
    private var objectBits: UInt64 = 0
    /// True right after `beginObject()`/`beginArray()`, until the first `nextKey()`/`nextElement()`.
    private var justOpened = false

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        // One UTF-8 byte order mark, only as the very first bytes (JSONDecoder does the same).
        let bom = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
        index = bom ? 3 : 0
    }

    /// Runs `parse` over `body`, then requires the end of the text (only whitespace left).
    /// - Throws: `JSONError` from `parse`, or `.syntax` for bytes after the top value.
    package static func read<R>(
        _ body: [UInt8], _ parse: (inout JSONReader) throws(JSONError) -> R
    ) throws(JSONError) -> R {
        try body.withUnsafeBufferPointer { (buffer) throws(JSONError) -> R in
            var reader = JSONReader(buffer)
            let result = try parse(&reader)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw .syntax(offset: reader.index) }
            return result
        }
    }

    /// True when `body` is one JSON value within the depth bound, by the rules above (nothing is built).
    package static func isValid(_ body: [UInt8]) -> Bool {
        (try? read(body) { (r) throws(JSONError) in try r.skipValue() }) != nil
    }

    // MARK: Values

    /// The kind of the next value, without consuming it.
    /// - Throws: `.syntax` when no value starts here (including the end of the text).
    package mutating func peek() throws(JSONError) -> JSONKind {
        skipWhitespace()
        guard index < bytes.count else { throw .syntax(offset: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: throw .syntax(offset: index)
        }
    }

    /// Consumes `{`. Follow with `nextKey()` until it returns nil.
    /// - Throws: `.syntax` when the next value is not an object, `.tooDeep` beyond `maxDepth`.
    package mutating func beginObject() throws(JSONError) { try open(UInt8(ascii: "{"), object: true) }

    /// Consumes `[`. Follow with `nextElement()` until it returns false.
    /// - Throws: `.syntax` when the next value is not an array, `.tooDeep` beyond `maxDepth`.
    package mutating func beginArray() throws(JSONError) { try open(UInt8(ascii: "["), object: false) }

    /// The next key of the current object and its `:`, or nil after the closing `}`. The caller then reads or skips
    /// exactly one value.
    /// - Throws: `.syntax` for a missing comma or colon, a trailing comma, or a malformed key.
    package mutating func nextKey() throws(JSONError) -> JSONKey? {
        guard try advance(closing: UInt8(ascii: "}")) else { return nil }
        let key = try scanKey()
        try expect(UInt8(ascii: ":"))
        return key
    }

    /// True when another element of the current array follows (read or skip it), false after the closing `]`.
    /// - Throws: `.syntax` for a missing comma or a trailing comma.
    package mutating func nextElement() throws(JSONError) -> Bool {
        try advance(closing: UInt8(ascii: "]"))
    }

    /// A string value, with its escapes decoded. Allocates.
    /// - Returns: nil when the string is well-formed JSON but not valid Unicode (invalid UTF-8, or a lone surrogate
    ///   escape): the value is consumed either way, and the caller decides what an invalid string means.
    /// - Throws: `.syntax` when the next value is not a well-formed string.
    package mutating func readString() throws(JSONError) -> String? {
        guard try peek() == .string else { throw .syntax(offset: index) }
        let start = index + 1
        let escaped = try scanString()
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)])
        guard escaped else { return Self.string(raw) }
        guard let utf8 = Self.unescape(raw) else { return nil }
        return utf8.withUnsafeBufferPointer { Self.string($0) }
    }

    /// `utf8` as a String, or nil when it is not valid UTF-8.
    private static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        // ASCII (every recorded id, type and folder) needs no validation; the generic validating initializer costs
        // more than the rest of an event.
        if utf8.allSatisfy({ $0 < 0x80 }) { return String(decoding: utf8, as: UTF8.self) }
        return String(validating: utf8, as: UTF8.self)
    }

    /// A number value, checked against the RFC 8259 grammar. Convert it with `int64` or `double`.
    /// - Throws: `.syntax` when the next value is not a well-formed number.
    package mutating func readNumber() throws(JSONError) -> JSONNumber {
        guard try peek() == .number else { throw .syntax(offset: index) }
        let start = index
        let plain = try scanNumber()
        return JSONNumber(text: UnsafeBufferPointer(rebasing: bytes[start..<index]), isPlainInteger: plain)
    }

    /// A `true` or `false` value.
    /// - Throws: `.syntax` when the next value is not one of them.
    package mutating func readBool() throws(JSONError) -> Bool {
        guard try peek() == .bool else { throw .syntax(offset: index) }
        let value = bytes[index] == UInt8(ascii: "t")
        try scanLiteral()
        return value
    }

    /// Consumes the next value of any kind, checking its syntax and depth, without building anything.
    /// - Throws: `.syntax` or `.tooDeep` as the reading methods would.
    package mutating func skipValue() throws(JSONError) {
        let base = depth
        try skipOpening()
        while depth > base {
            let more: Bool
            if objectBits & (1 << UInt64(depth - 1)) != 0 {
                more = try advance(closing: UInt8(ascii: "}"))
                if more {
                    _ = try scanString()
                    try expect(UInt8(ascii: ":"))
                }
            } else {
                more = try advance(closing: UInt8(ascii: "]"))
            }
            if more { try skipOpening() }
        }
    }

    // MARK: Scanning

    /// Skips a scalar, or opens a container (leaving its contents to the caller's loop).
    private mutating func skipOpening() throws(JSONError) {
        switch try peek() {
        case .object: try beginObject()
        case .array: try beginArray()
        case .string: _ = try scanString()
        case .number: _ = try scanNumber()
        case .bool, .null: try scanLiteral()
        }
    }

    private mutating func open(_ byte: UInt8, object: Bool) throws(JSONError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { throw .syntax(offset: index) }
        guard depth < Self.maxDepth else { throw .tooDeep(offset: index) }
        let bit: UInt64 = 1 << UInt64(depth)
        objectBits = object ? objectBits | bit : objectBits & ~bit
        depth += 1
        index += 1
        justOpened = true
    }

    /// Moves to the next member of the current container: true when one follows, false after `closing`.
    private mutating func advance(closing: UInt8) throws(JSONError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw .syntax(offset: index) }
        let byte = bytes[index]
        if byte == closing {
            justOpened = false
            index += 1
            depth -= 1
            return false
        }
        if justOpened {
            justOpened = false
            return true
        }
        guard byte == UInt8(ascii: ",") else { throw .syntax(offset: index) }
        index += 1
        skipWhitespace()
        // A closing bracket right after the comma is a trailing comma.
        guard index < bytes.count, bytes[index] != closing else { throw .syntax(offset: index) }
        return true
    }

    private mutating func expect(_ byte: UInt8) throws(JSONError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { throw .syntax(offset: index) }
        index += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Consumes `true`, `false` or `null`.
    private mutating func scanLiteral() throws(JSONError) {
        let literal: StaticString
        switch bytes[index] {
        case UInt8(ascii: "t"): literal = "true"
        case UInt8(ascii: "f"): literal = "false"
        default: literal = "null"
        }
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw .syntax(offset: index) }
        for i in 0..<count where bytes[index + i] != literal.utf8Start[i] { throw .syntax(offset: index + i) }
        index += count
    }

    /// Consumes a number (RFC 8259: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`).
    /// - Returns: true when it has neither fraction nor exponent.
    private mutating func scanNumber() throws(JSONError) -> Bool {
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, Self.isDigit(bytes[index]) else { throw .syntax(offset: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        var plain = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            try requireDigits()
            plain = false
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            try requireDigits()
            plain = false
        }
        return plain
    }

    private mutating func requireDigits() throws(JSONError) {
        guard index < bytes.count, Self.isDigit(bytes[index]) else { throw .syntax(offset: index) }
        skipDigits()
    }

    private mutating func skipDigits() {
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// Consumes a string from its opening quote, checking escapes and control characters (not UTF-8).
    /// - Returns: true when it contains an escape.
    private mutating func scanString() throws(JSONError) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw .syntax(offset: index) }
        index += 1
        var escaped = false
        while index < bytes.count {
            // File names are most of a large answer: pass over 8 plain bytes at a time.
            while index &+ 8 <= bytes.count, !Self.hasSpecialByte(bytes.loadWord(at: index)) { index &+= 8 }
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return escaped
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                try scanEscape()
            } else if byte < 0x20 {
                throw .syntax(offset: index)
            } else {
                index += 1
            }
        }
        throw .syntax(offset: index)
    }

    /// True when one of the 8 bytes of `word` is `"`, `\` or a control character (below 0x20). Exact: bytes from 0x80
    /// up (UTF-8 sequences) are plain (the classic "has zero byte" and "has byte less than" bit tests).
    private static func hasSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ 0x2222_2222_2222_2222
        let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
        let control = (word &- 0x2020_2020_2020_2020) & ~word
        return ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | control) & high != 0
    }

    /// Consumes one escape from its backslash: `\" \\ \/ \b \f \n \r \t` or `\u` and four hex digits.
    private mutating func scanEscape() throws(JSONError) {
        guard index + 1 < bytes.count else { throw .syntax(offset: index) }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 2
        case UInt8(ascii: "u"):
            guard index + 6 <= bytes.count else { throw .syntax(offset: index) }
            for i in (index + 2)..<(index + 6) where Self.hexValue(bytes[i]) == nil { throw .syntax(offset: i) }
            index += 6
        default:
            throw .syntax(offset: index)
        }
    }

    private mutating func scanKey() throws(JSONError) -> JSONKey {
        skipWhitespace()
        let start = index + 1
        let escaped = try scanString()
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)])
        guard escaped else { return JSONKey(raw: raw, decoded: nil) }
        return JSONKey(raw: raw, decoded: Self.unescape(raw) ?? [])
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// The UTF-8 bytes of a scanned string's contents with escapes decoded, or nil for a lone surrogate escape.
    /// - Precondition: `raw` passed `scanString()` (every escape is well-formed).
    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        func hex4(_ at: Int) -> UInt32 {
            (0..<4).reduce(0) { $0 << 4 | (hexValue(raw[at + $1]) ?? 0) }
        }
        while i < raw.count {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                i += 1
                continue
            }
            let kind = raw[i + 1]
            i += 2
            switch kind {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate needs a low one right after it, as `\uDC00`…`\uDFFF`.
                    guard i + 6 <= raw.count, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u") else {
                        return nil
                    }
                    let low = hex4(i + 2)
                    guard (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return nil
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                UTF8.encode(unicode) { out.append($0) }
            default: out.append(kind)  // `"`, `\` and `/` stand for themselves
            }
        }
        return out
    }
}

/// What `JSONReader.peek()` sees next.
package enum JSONKind: Sendable, Equatable {
    case object, array, string, number, bool, null
}

/// Why a JSON text was rejected. `offset` is the byte offset into the body where reading stopped.
package enum JSONError: Error, Sendable, Equatable {
    /// Not RFC 8259 JSON here (including a cut text).
    case syntax(offset: Int)
    /// Arrays and objects nested deeper than `JSONReader.maxDepth`.
    case tooDeep(offset: Int)
    /// Well-formed JSON, but not the shape the model expects (a missing or mistyped required field).
    case shape
}

/// An object key, valid until `JSONReader.read(_:_:)` returns. Compared as bytes: no String is built.
package struct JSONKey {
    fileprivate let raw: UnsafeBufferPointer<UInt8>
    /// The decoded bytes when the key has escapes (empty for a lone surrogate escape).
    fileprivate let decoded: [UInt8]?

    /// The key's UTF-8 bytes, escapes decoded.
    private func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard let decoded else { return body(raw) }
        return decoded.withUnsafeBufferPointer(body)
    }

    /// True when the key is valid Unicode; `JSONDecoder` rejects an object with any other key.
    package var isValid: Bool {
        // An escaped key decodes to at least one byte; empty stands for a lone surrogate.
        if let decoded { return !decoded.isEmpty && String(validating: decoded, as: UTF8.self) != nil }
        // Keys are short and almost always ASCII.
        return raw.allSatisfy { $0 < 0x80 } || String(validating: raw, as: UTF8.self) != nil
    }

    /// The key as a String, or nil when it is not valid Unicode. Allocates.
    package var string: String? {
        guard isValid else { return nil }
        return withBytes { String(validating: $0, as: UTF8.self) }
    }

    /// True when the key is exactly `name` (byte for byte, escapes decoded).
    package static func == (key: JSONKey, name: StaticString) -> Bool {
        key.withBytes { bytes in
            bytes.count == name.utf8CodeUnitCount
                && (0..<bytes.count).allSatisfy { bytes[$0] == name.utf8Start[$0] }
        }
    }
}

/// A number as written in the text, valid until `JSONReader.read(_:_:)` returns.
package struct JSONNumber {
    fileprivate let text: UnsafeBufferPointer<UInt8>
    /// No fraction, no exponent.
    fileprivate let isPlainInteger: Bool

    /// The number as `JSONDecoder` reads an `Int64`, or nil where it throws:
    /// - an integer without fraction or exponent exactly, nil when it overflows;
    /// - any other number as the nearest Double, nil unless that is a whole number in Int64's range; below 2^53 the
    ///   Double is the value (`1.0` → 1, `1e2` → 100, `1.0000000000000001` → 1, `1e-400` → 0), from 2^53 the
    ///   written value with its fraction dropped (`9007199254740993.5` → 9007199254740993), never -2^63. (There
    ///   `JSONDecoder` goes through `Decimal`, which fails on some of these numbers from 20 digits on and traps on some
    ///   of more than 38 digits; this reads them exactly.)
    package var int64: Int64? {
        if isPlainInteger { return exactInteger(dropFraction: false) }
        guard let double, let whole = Int64(exactly: double) else { return nil }
        guard double.magnitude >= 9_007_199_254_740_992 else { return whole }
        return exactInteger(dropFraction: true)
    }

    /// The nearest Double, or nil when it is infinite (beyond ±1.8e308). Allocates (a String for the parser).
    package var double: Double? {
        let string = String(decoding: text, as: UTF8.self)
        guard let value = Double(string), value.isFinite else { return nil }
        return value
    }

    /// The exact value of the written number, its fraction dropped (only when `dropFraction`), or nil beyond
    /// -(2^63 - 1)…2^63 - 1 (for a plain integer -2^63 too).
    private func exactInteger(dropFraction: Bool) -> Int64? {
        var i = 0
        let negative = text[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        var digits: [UInt8] = []  // only on the slow path below
        var pointAt: Int?
        var exponent = 0
        var magnitude: UInt64 = 0
        if !dropFraction {
            while i < text.count {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(text[i] &- UInt8(ascii: "0")))
                if o1 || o2 { return nil }
                magnitude = m2
                i += 1
            }
            if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
            return Int64(exactly: magnitude)
        }
        while i < text.count {
            let byte = text[i]
            if byte == UInt8(ascii: ".") {
                pointAt = digits.count
            } else if byte | 0x20 == UInt8(ascii: "e") {
                i += 1
                var sign = 1
                if text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+") {
                    sign = text[i] == UInt8(ascii: "-") ? -1 : 1
                    i += 1
                }
                while i < text.count {
                    exponent = min(exponent * 10 + Int(text[i] &- UInt8(ascii: "0")), 100_000)
                    i += 1
                }
                exponent *= sign
                break
            } else {
                digits.append(byte &- UInt8(ascii: "0"))
            }
            i += 1
        }
        // Value = digits × 10^(exponent - fraction digits); keep the digits before the decimal point, counted from
        // the first that is not 0 (`0.000…9e150`).
        let first = digits.firstIndex { $0 != 0 } ?? digits.count
        let integerDigits = (pointAt ?? digits.count) + exponent - first
        guard integerDigits <= 40 else { return nil }
        for position in 0..<max(integerDigits, 0) {
            let digit = first + position < digits.count ? digits[first + position] : 0
            let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (m2, o2) = m1.addingReportingOverflow(UInt64(digit))
            if o1 || o2 { return nil }
            magnitude = m2
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return negative ? -Int64(magnitude) : Int64(magnitude)
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The 8 bytes at `offset` as one little- or big-endian word (only tested for which bytes it holds).
    /// - Precondition: `offset + 8 <= count`.
    fileprivate func loadWord(at offset: Int) -> UInt64 {
        UnsafeRawPointer(baseAddress.unsafelyUnwrapped + offset).loadUnaligned(as: UInt64.self)
    }
}
