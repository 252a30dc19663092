import Testing

@testable import NotifyCore

/// `JSONReader`: RFC 8259 syntax in read and skipped values, the depth bound, and how numbers and strings read.
@Suite struct JSONReaderTests {
    /// Skips the whole text as one value: true when the reader accepts it as JSON.
    static func accepts(_ text: String) -> Bool { JSONReader.isValid(Array(text.utf8)) }

    static func readInt64(_ text: String) -> Int64?? {
        try? JSONReader.read(Array(text.utf8)) { (r) throws(JSONError) in try r.readNumber().int64 }
    }

    static func readString(_ text: String) -> String?? {
        try? JSONReader.read(Array(text.utf8)) { (r) throws(JSONError) in try r.readString() }
    }

    @Test(
        "valid JSON is accepted",
        arguments: [
            "0", "-0", "1", "-1", "10", "0.5", "-0.5", "1e5", "1E5", "1e+5", "1e-5", "1.5e10",
            "123456789012345678901234",
            "1e400", "\"\"", "\"a\"", #""\"\\\/\b\f\n\r\t""#, #""\u0041\u00e9\uD83D\uDE00""#, #""\ud800""#, "true",
            "false", "null", "[]", "{}", "[1,2,3]", #"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            " \t\r\n[ 1 , { \"a\" : [ ] } ] \n", "\u{FEFF}[1]", "\"é€😀\"",
        ])
    func acceptsValid(text: String) {
        #expect(Self.accepts(text), "\(text)")
    }

    @Test(
        "invalid JSON is rejected",
        arguments: [
            "", " ", "01", "-01", "00", "1.", ".5", "-", "+1", "1e", "1e+", "1.e1", "0x10", "NaN", "Infinity",
            "-Infinity",
            "tru", "True", "nul", "nulll", "\"a", "\"\\q\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\", "\"a\u{01}b\"",
            "\"a\tb\"", "\"a\nb\"", "[1,]", "[,1]", "[1,,2]", "[1 2]", "{\"a\":1,}", "{,}", "{\"a\" 1}", "{\"a\":}",
            "{1:2}", "{'a':1}", "{\"a\":1 \"b\":2}", "[1]]", "[1][", "[1] x", "1 2", "{} {}", "[", "]", "{", "}",
            "[1", "{\"a\":1", "\u{0B}[1]", "\u{A0}[1]", " \u{FEFF}[1]", "\u{FEFF}", "[1]\u{0}",
        ])
    func rejectsInvalid(text: String) {
        #expect(!Self.accepts(text), "\(text)")
    }

    @Test("a UTF-16 body is rejected (JSONDecoder would read it)")
    func rejectsUTF16() {
        #expect(!JSONReader.isValid([0x5B, 0x00, 0x5D, 0x00]))
        #expect(!JSONReader.isValid([0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00]))
    }

    @Test("nesting up to maxDepth is read, one more level is an error")
    func depthBound() throws {
        let limit = JSONReader.maxDepth
        #expect(Self.accepts(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)))
        let deep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: JSONError.tooDeep(offset: limit)) {
            try JSONReader.read(Array(deep.utf8)) { (r) throws(JSONError) in try r.skipValue() }
        }
        let objects = String(repeating: "{\"a\":", count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        #expect(!Self.accepts(objects))
    }

    @Test("skipping every kind of value consumes exactly that value")
    func skipsEachKind() throws {
        let values = [
            "1", "-2.5e-3", "\"a\\\"b\\u0041\"", "true", "false", "null", "[]", "[[1,[2]],{\"x\":[]}]",
            "{\"a\":{\"b\":[1,\"}\"]}}",
        ]
        for value in values {
            let text = "[" + value + ", 7]"
            let seven = try JSONReader.read(Array(text.utf8)) { (r) throws(JSONError) -> Int64? in
                try r.beginArray()
                _ = try r.nextElement()
                try r.skipValue()
                _ = try r.nextElement()
                let n = try r.readNumber().int64
                _ = try r.nextElement()
                return n
            }
            #expect(seven == 7, "\(value)")
        }
    }

    @Test("a quote, backslash or control character is found at every position of an 8-byte word")
    func specialBytesAtEveryPosition() {
        for length in 1..<26 {
            for position in 0..<length {
                var content = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                for byte: UInt8 in [0x00, 0x01, 0x1F] {
                    content[position] = byte
                    #expect(!JSONReader.isValid([0x22] + content + [0x22]), "\(byte) at \(position) of \(length)")
                }
                // An unescaped quote ends the string early: what follows is garbage.
                content[position] = 0x22
                #expect(!JSONReader.isValid([0x22] + content + [0x22]), "quote at \(position) of \(length)")
                // Bytes from 0x80 up (0xA2 and 0xDC are a quote and a backslash with the high bit) are plain.
                content[position] = position.isMultiple(of: 2) ? 0xA2 : 0xDC
                #expect(JSONReader.isValid([0x22] + content + [0x22]), "high byte at \(position) of \(length)")
                content[position] = UInt8(ascii: "\\")
                #expect(!JSONReader.isValid([0x22] + content + [0x22]), "bad escape at \(position) of \(length)")
                content.insert(UInt8(ascii: "\""), at: position + 1)
                let escaped = [0x22] + content + [0x22]
                #expect(
                    (try? JSONReader.read(escaped) { (r) throws(JSONError) in try r.readString() })
                        == .some(
                            String(repeating: "a", count: position) + "\""
                                + String(repeating: "a", count: length - position - 1)),
                    "escaped quote at \(position) of \(length)")
            }
        }
    }

    @Test("integers read as JSONDecoder reads Int64, overflow is nil")
    func integers() {
        let cases: [(String, Int64?)] = [
            ("0", 0), ("-0", 0), ("42", 42), ("-42", -42), ("9223372036854775807", .max),
            ("-9223372036854775808", .min), ("9223372036854775808", nil), ("-9223372036854775809", nil),
            ("100000000000000000000", nil), ("1.0", 1), ("-0.0", 0), ("1e2", 100), ("1E+2", 100), ("0.1e1", 1),
            ("10e-1", 1), ("1.5", nil), ("123e-2", nil), ("1e20", nil), ("1e400", nil), ("1e-400", 0),
            ("1.0000000000000001", 1), ("0.99999999999999999", 1), ("1e18", 1_000_000_000_000_000_000),
            ("12345678901234567.0", 12_345_678_901_234_567), ("9007199254740993.5", 9_007_199_254_740_993),
            ("123456789012345678.9", 123_456_789_012_345_678), ("1000000000000000000000e-3", 1_000_000_000_000_000_000),
            ("9223372036854775807.0", nil), ("-9223372036854775808.0", nil), ("9.2233720368547758e18", nil),
        ]
        for (text, expected) in cases {
            #expect(Self.readInt64(text) == .some(expected), "\(text)")
        }
    }

    @Test("strings decode escapes; invalid Unicode in a kept string is nil, not a syntax error")
    func strings() {
        #expect(Self.readString(#""a\/b\"c\\d\n""#) == .some("a/b\"c\\d\n"))
        #expect(Self.readString(#""\u00e9\u20AC\ud83d\ude00\u0000""#) == .some("é€😀\u{0}"))
        #expect(Self.readString(#""\uDBFF\uDFFF""#) == .some("\u{10FFFF}"))
        for lone in [#""\ud800""#, #""\udc00""#, #""\ud800x""#, #""\ud800\u0041""#, #""\ud800\\""#, #""\udc00\ud800""#]
        {
            #expect(Self.readString(lone) == .some(nil), "\(lone)")
        }
        let invalidUTF8: [[UInt8]] = [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82]]
        for bytes in invalidUTF8 {
            let body = [0x22] + bytes + [0x22]
            #expect(
                (try? JSONReader.read(body) { (r) throws(JSONError) in try r.readString() }) == .some(nil), "\(bytes)")
            // Skipped, the same string is only checked for syntax (as JSONDecoder does).
            #expect(JSONReader.isValid(body))
        }
    }

    @Test("keys compare as bytes with escapes decoded; the first of a repeated key wins")
    func keys() throws {
        let body = Array(#"{"i\u0064":1,"id":2,"other":{"id":3}}"#.utf8)
        let seen = try JSONReader.read(body) { (r) throws(JSONError) -> [Int64] in
            var values: [Int64] = []
            let valid = try r.readObject(["id"]) { (r, _) throws(JSONError) in values.append(try r.requiredInt64()) }
            #expect(valid)
            return values
        }
        #expect(seen == [1])
        let invalidKey = Array(#"{"\ud800":1}"#.utf8)
        let valid = try JSONReader.read(invalidKey) { (r) throws(JSONError) in try r.readObject(["id"]) { _, _ in } }
        #expect(!valid)
    }

    @Test("a body cut at any byte is an error")
    func truncation() {
        let text = #"[{"id": 1, "type": "FolderCompletion", "data": {"a": [1.5e3, "x\u00e9", true, null, {}]}}]"#
        let body = Array(text.utf8)
        #expect(JSONReader.isValid(body))
        for cut in 0..<body.count {
            #expect(!JSONReader.isValid(Array(body[..<cut])), "cut at \(cut)")
        }
    }
}
