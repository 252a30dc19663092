/// The body of the relay's `GET /api/v1/health` (read by `RelayHealthAnswer.classify`):
/// `{"status": String, "version": String?}`, `status` required, `version` absent, null or a string.
package struct RelayHealthBody: Sendable, Equatable, JSONReadable {
    package var status: String
    package var version: String?

    package init(status: String, version: String?) {
        self.status = status
        self.version = version
    }

    private static let keys: [StaticString] = ["status", "version"]

    package init(json reader: inout JSONReader) throws(JSONError) {
        var status: String?
        var version: String?
        let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
            if key == 0 { status = try r.requiredString() } else { version = try r.optionalString() }
        }
        guard valid, let status else { throw .shape }
        self.init(status: status, version: version)
    }
}
