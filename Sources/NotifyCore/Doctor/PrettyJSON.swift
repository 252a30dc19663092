/// A JSON document as `--doctor --json` prints it: the layout of Foundation's `JSONEncoder` with `.prettyPrinted`,
/// `.sortedKeys` and `.withoutEscapingSlashes`, byte for byte, so the output did not change when the encoder went.
///
/// Layout: two spaces per level, `"key" : value`, one member or element a line, `,` at the end of each line but
/// the last, keys sorted by their UTF-8 bytes; an empty array or object is its opening bracket, an empty line and
/// the closing bracket indented to the container's level. Strings are escaped by `JSONText`. No trailing newline.
package indirect enum PrettyJSON: Sendable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case null
    case array([PrettyJSON])
    /// Members in any order: rendering sorts them. A key given twice is rendered twice.
    case object([(key: String, value: PrettyJSON)])

    /// The document's text (UTF-8 when written out as bytes).
    package func rendered() -> String {
        var out = ""
        write(to: &out, level: 0)
        return out
    }

    private func write(to out: inout String, level: Int) {
        switch self {
        case .string(let text): out += JSONText.quoted(text)
        case .int(let value): out += String(value)
        case .bool(let value): out += value ? "true" : "false"
        case .null: out += "null"
        case .array(let elements):
            out += "[\n"
            for (index, element) in elements.enumerated() {
                if index > 0 { out += ",\n" }
                Self.indent(&out, level + 1)
                element.write(to: &out, level: level + 1)
            }
            out += "\n"
            Self.indent(&out, level)
            out += "]"
        case .object(let members):
            out += "{\n"
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out += ",\n" }
                Self.indent(&out, level + 1)
                out += JSONText.quoted(member.key) + " : "
                member.value.write(to: &out, level: level + 1)
            }
            out += "\n"
            Self.indent(&out, level)
            out += "}"
        }
    }

    private static func indent(_ out: inout String, _ level: Int) {
        for _ in 0..<level { out += "  " }
    }
}
