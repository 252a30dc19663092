import Foundation
import Testing

@testable import NotifyCore

/// `--doctor --json` was written by Foundation's `JSONEncoder` (pretty-printed, sorted keys, slashes unescaped);
/// its replacement must give the same bytes, which these tests compare against the encoder itself.
@Suite("JSON text: string escaping and the doctor's document layout")
struct JSONTextTests {
    private static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("every control character, quote, backslash, slash and non-ASCII text escape as JSONEncoder does")
    func escapingMatchesEncoder() throws {
        var all = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
        all += ["\"", "\\", "/", "\u{7F}", "é", "😀", "\u{2028}", "a\"b\\c\nd\u{1}e", "", "plain text"]
        for text in all {
            #expect(
                JSONText.quoted(text) == (try Self.encoded([text])).dropFirst(4).dropLast(2), "\(text.debugDescription)"
            )
        }
    }

    @Test("the log's JSON lines use the same escaping")
    func logUsesSameEscaping() {
        let text = "a\u{8}\u{C}\u{1F}\"\\/"
        #expect(LogRecord.jsonString(text) == JSONText.quoted(text))
        #expect(JSONText.quoted(text) == #""a\b\f\u001f\"\\/""#)
    }

    private struct Inner: Encodable {
        var b: Int
        var a: String
        var list: [Int]
        var empty: [String]
        var nested: [String: Bool]
        var emptyObject: [String: Int]
    }

    @Test("nesting, key order, empty containers, numbers and booleans are laid out as JSONEncoder does")
    func layoutMatchesEncoder() throws {
        let value: [String: Inner] = [
            "z": Inner(b: -3, a: "x/y", list: [1, 2], empty: [], nested: ["t": true, "f": false], emptyObject: [:]),
            "B": Inner(b: Int.max, a: "", list: [Int.min], empty: [], nested: [:], emptyObject: [:]),
        ]
        func pretty(_ inner: Inner) -> PrettyJSON {
            .object([
                ("b", .int(inner.b)), ("a", .string(inner.a)), ("list", .array(inner.list.map { .int($0) })),
                ("empty", .array([])), ("nested", .object(inner.nested.map { ($0.key, .bool($0.value)) })),
                ("emptyObject", .object([])),
            ])
        }
        let document = PrettyJSON.object(value.map { ($0.key, pretty($0.value)) })
        #expect(document.rendered() == (try Self.encoded(value)))
        // Keys sort by UTF-8 bytes: upper case before lower case, "_" between them.
        let keys = PrettyJSON.object([("b", .int(1)), ("_", .int(2)), ("B", .int(3)), ("é", .int(4)), ("a", .int(5))])
        #expect(keys.rendered() == (try Self.encoded(["b": 1, "_": 2, "B": 3, "é": 4, "a": 5])))
    }
}
