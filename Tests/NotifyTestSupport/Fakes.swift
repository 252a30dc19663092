import Foundation
import NotifyCore

@testable import NotifyRuntime

/// A clock that only moves when something sleeps on it, recording every sleep.
final class FakeWaitClock: WaitClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Duration = .zero
    private(set) var sleeps: [Duration] = []
    /// Called after each sleep with the new time.
    var onAdvance: (@Sendable (Duration) -> Void)?

    func now() -> Duration { lock.withLock { current } }

    func sleep(for duration: Duration) {
        let now = lock.withLock {
            sleeps.append(duration)
            current += duration
            return current
        }
        onAdvance?(now)
    }
}

/// Collects log records.
final class ConfigLogSink: LogSink, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LogRecord] = []
    var records: [LogRecord] { lock.withLock { stored } }
    func write(_ record: LogRecord) { lock.withLock { stored.append(record) } }
}
