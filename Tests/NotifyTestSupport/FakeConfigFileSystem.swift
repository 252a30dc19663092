import Foundation
import NotifyCore
import NotifyRuntime

/// In-memory filesystem for the locator.
package final class FakeConfigFileSystem: ConfigFileSystem, @unchecked Sendable {
    package enum Entry {
        case file(FileInfo, readable: Bool)
        case directory(FileInfo, searchable: Bool)
        case other(FileInfo)
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    package private(set) var statusCalls: [String] = []
    /// What `userName(uid:)` answers (the /etc/passwd lookup).
    package var userNames: [UInt32: String] = [:]

    package init() {}

    package func userName(uid: UInt32) -> String? { lock.withLock { userNames[uid] } }

    package func add(_ path: String, _ entry: Entry) {
        lock.withLock { entries[path] = entry }
    }

    package func remove(_ path: String) {
        _ = lock.withLock { entries.removeValue(forKey: path) }
    }

    package func status(of path: String) -> PathStatus {
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

    package func isEmptyDirectory(_ path: String) -> Bool {
        lock.withLock {
            guard case .directory = entries[path] else { return false }
            return !entries.keys.contains { $0.hasPrefix(path + "/") }
        }
    }

    package func isReadable(_ path: String) -> Bool {
        lock.withLock {
            if case .file(_, let readable) = entries[path] { return readable }
            return false
        }
    }
}
