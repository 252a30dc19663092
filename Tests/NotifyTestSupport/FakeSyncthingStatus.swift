import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback stand-in for Syncthing's `/rest/system/status` (Tests/Doubles/fake_syncthing.py --status-only): 200 with
/// a status document for the right X-API-Key, 403 `CSRF Error` otherwise.
package final class FakeSyncthingStatus {
    package let process = Process()
    package let port: Int

    package init(key: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", TestScripts.double("fake_syncthing.py").path, "--status-only", "--api-key", key, "--print-port",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("fake Syncthing did not start")
        }
        self.port = port
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
