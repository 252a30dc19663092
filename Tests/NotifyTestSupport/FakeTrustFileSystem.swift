import Foundation
import NotifyRuntime

/// A filesystem of CA files (size, readable) and directories (entry names), recording every question.
package final class FakeTrustFileSystem: TrustStoreFileSystem, @unchecked Sendable {
    private let lock = NSLock()
    private var files: [String: (size: Int, readable: Bool, pem: Bool)] = [:]
    private var directories: [String: [String]] = [:]
    package private(set) var asked: [String] = []

    package init() {}

    package func addFile(_ path: String, size: Int = 200_000, readable: Bool = true, pem: Bool = true) {
        lock.withLock { files[path] = (size, readable, pem) }
    }

    package func addDirectory(_ path: String, _ names: [String]) { lock.withLock { directories[path] = names } }

    package func removeAll() {
        lock.withLock {
            files = [:]
            directories = [:]
        }
    }

    /// An empty file, like an unreadable one, holds no certificate.
    package func holdsPEMCertificate(_ path: String) -> Bool {
        lock.withLock {
            asked.append(path)
            guard let file = files[path], file.readable else { return false }
            return file.size > 0 && file.pem
        }
    }

    package func directoryContains(_ path: String, where matches: (String) -> Bool) -> Bool {
        let names: [String]? = lock.withLock {
            asked.append(path)
            return directories[path]
        }
        return names?.contains(where: matches) ?? false
    }
}
