import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private (0700) temporary directory, `/tmp/vsnt-XXXXXX`, removed by `remove()`. The path is short because a
/// unix socket's path inside it is limited to about 100 bytes.
package final class TemporaryDirectory {
    package let path: String

    package init() throws {
        var template = Array("/tmp/vsnt-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw TestFailure("mkdtemp failed")
        }
        path = String(cString: made)
    }

    /// `name` (a relative path) inside the directory; nothing is created.
    package func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` (a relative path, its directories created) with `mode`; returns the full path.
    @discardableResult
    package func write(_ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
        let full = file(name)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        chmod(full, mode)
        return full
    }

    package func remove() { try? FileManager.default.removeItem(atPath: path) }
}
