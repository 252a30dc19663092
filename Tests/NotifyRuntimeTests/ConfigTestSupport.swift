import Foundation
import NotifyCore
import NotifyRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// Fixture files under `Fixtures/config/`.
enum ConfigFixture {
    static func url(_ name: String) -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/config") else {
            fatalError("missing fixture \(name)")
        }
        return url
    }

    static func path(_ name: String) -> String { url(name).path }

    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: url(name))) }
}

/// A fresh temporary directory, removed by `cleanUp()`.
struct ConfigTestDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/vaultsync-config-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else { throw POSIXError(.EIO) }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
        let full = file(name)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        chmod(full, mode)
        return full
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs `body` with the calling thread's filesystem uid/gid switched (Linux `setfsuid`/`setfsgid` are per thread),
/// so that a root test process meets real EACCES without affecting other tests. Returns nil when the switch is not
/// possible (not root, or no CAP_SETUID in this container).
/// `setfsuid(2)`/`setfsgid(2)` via dlsym: the Glibc module does not export <sys/fsuid.h>.
private typealias SetFSID = @convention(c) (UInt32) -> Int32
private let setfsuid: SetFSID = unsafeBitCast(
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid"), to: SetFSID.self)
private let setfsgid: SetFSID = unsafeBitCast(
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsgid"), to: SetFSID.self)

func withFilesystemIdentity<T>(uid: UInt32, gid: UInt32, _ body: () throws -> T) rethrows -> T? {
    guard geteuid() == 0 else { return nil }
    _ = setfsgid(gid)
    _ = setfsuid(uid)
    defer {
        _ = setfsuid(0)
        _ = setfsgid(0)
    }
    // setfsuid returns the previous value; an invalid id (-1) changes nothing and reports the current one.
    guard UInt32(bitPattern: setfsuid(UInt32.max)) == uid else { return nil }
    return try body()
}

/// True when a root test process can create files owned by another uid and then be denied access to them.
var canTestForeignOwnership: Bool {
    guard geteuid() == 0 else { return false }
    return (withFilesystemIdentity(uid: 4242, gid: 4343) { true }) ?? false
}

/// In-memory filesystem for the locator.
final class FakeConfigFileSystem: ConfigFileSystem, @unchecked Sendable {
    enum Entry {
        case file(FileInfo, readable: Bool)
        case directory(FileInfo, searchable: Bool)
        case other(FileInfo)
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private(set) var statusCalls: [String] = []
    /// What `userName(uid:)` answers (the /etc/passwd lookup).
    var userNames: [UInt32: String] = [:]

    func userName(uid: UInt32) -> String? { lock.withLock { userNames[uid] } }

    func add(_ path: String, _ entry: Entry) {
        lock.withLock { entries[path] = entry }
    }

    func remove(_ path: String) {
        _ = lock.withLock { entries.removeValue(forKey: path) }
    }

    func status(of path: String) -> PathStatus {
        lock.withLock {
            statusCalls.append(path)
            // Hidden when an ancestor directory is not searchable.
            var ancestor = path
            while let slash = ancestor.lastIndex(of: "/"), slash != ancestor.startIndex {
                ancestor = String(ancestor[..<slash])
                if case .directory(_, searchable: false) = entries[ancestor] { return .hidden }
            }
            switch entries[path] {
            case nil: return .missing
            case .file(let info, _): return .file(info)
            case .directory(let info, _): return .directory(info)
            case .other(let info): return .other(info)
            }
        }
    }

    func isEmptyDirectory(_ path: String) -> Bool {
        lock.withLock {
            guard case .directory = entries[path] else { return false }
            return !entries.keys.contains { $0.hasPrefix(path + "/") }
        }
    }

    func isReadable(_ path: String) -> Bool {
        lock.withLock {
            if case .file(_, let readable) = entries[path] { return readable }
            return false
        }
    }
}
