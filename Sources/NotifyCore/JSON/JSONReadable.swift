/// A model read from JSON through `JSONReader`.
package protocol JSONReadable {
    /// Reads one value of this type: the reader's next value, consumed whole.
    /// - Throws: `JSONError.shape` when it is well-formed JSON of another shape; other `JSONError`s from the reader.
    init(json reader: inout JSONReader) throws(JSONError)
}

/// Decodes a bounded JSON body into `T`, or nil when it is not exactly that shape (or not JSON).
package func decodeJSON<T: JSONReadable>(_ type: T.Type, from body: [UInt8]) -> T? {
    try? JSONReader.read(body) { (reader) throws(JSONError) in try T(json: &reader) }
}

extension Array: JSONReadable where Element: JSONReadable {
    /// A JSON array whose every element is an `Element`.
    package init(json reader: inout JSONReader) throws(JSONError) {
        guard try reader.peek() == .array else { throw .shape }
        try reader.beginArray()
        var elements: [Element] = []
        while try reader.nextElement() { elements.append(try Element(json: &reader)) }
        self = elements
    }
}

/// The models keep the semantics they had as Decodable types read by Foundation's `JSONDecoder`; these helpers are
/// its three ways of reading a field, each consuming the value whatever it is:
/// - `lenient…`: `try? decodeIfPresent(T.self, forKey:)`: the value when it is a T, else nil;
/// - `required…`: `decode(T.self, forKey:)`: the value, or `JSONError.shape` (also for null);
/// - `optional…`: `decodeIfPresent(T.self, forKey:)` (what a synthesized `T?` field does): nil for null, else as
///   `required…`.
extension JSONReader {
    /// A string value (nil when it is not valid Unicode), or nil for any other value.
    package mutating func lenientString() throws(JSONError) -> String? {
        guard try peek() == .string else {
            try skipValue()
            return nil
        }
        return try readString()
    }

    /// An integer as `JSONNumber.int64` reads it, or nil for any other value.
    package mutating func lenientInt64() throws(JSONError) -> Int64? {
        guard try peek() == .number else {
            try skipValue()
            return nil
        }
        return try readNumber().int64
    }

    /// `true` or `false`, or nil for any other value.
    package mutating func lenientBool() throws(JSONError) -> Bool? {
        guard try peek() == .bool else {
            try skipValue()
            return nil
        }
        return try readBool()
    }

    package mutating func requiredString() throws(JSONError) -> String {
        guard let value = try lenientString() else { throw .shape }
        return value
    }

    package mutating func requiredInt64() throws(JSONError) -> Int64 {
        guard let value = try lenientInt64() else { throw .shape }
        return value
    }

    package mutating func optionalString() throws(JSONError) -> String? {
        guard try peek() != .null else { return try skipNull() }
        return try requiredString()
    }

    package mutating func optionalBool() throws(JSONError) -> Bool? {
        guard try peek() != .null else { return try skipNull() }
        guard let value = try lenientBool() else { throw .shape }
        return value
    }

    private mutating func skipNull<T>() throws(JSONError) -> T? {
        try skipValue()
        return nil
    }

    /// Reads the next value, which must be an object: for the first occurrence of each key in `names` (the one
    /// `JSONDecoder` keeps), `member(&reader, i)` with `i` the key's index in `names` reads its value; every other
    /// member is skipped.
    /// - Returns: false when some key is not valid Unicode (`JSONDecoder` then rejects the whole object); the object
    ///   is read to its end either way.
    /// - Throws: `.shape` when the next value is not an object; what `member` throws.
    package mutating func readObject(
        _ names: [StaticString], _ member: (inout JSONReader, Int) throws(JSONError) -> Void
    ) throws(JSONError) -> Bool {
        guard try peek() == .object else { throw .shape }
        try beginObject()
        var seen: UInt64 = 0
        var valid = true
        while let key = try nextKey() {
            guard let i = names.firstIndex(where: { key == $0 }), seen & (1 << UInt64(i)) == 0 else {
                if valid && !key.isValid { valid = false }
                try skipValue()
                continue
            }
            seen |= 1 << UInt64(i)
            try member(&self, i)
        }
        return valid
    }
}
