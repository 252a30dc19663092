import Foundation
import NotifyCore

/// Collects every log record written to it, in order.
final class RecordingLogSink: LogSink, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LogRecord] = []
    var records: [LogRecord] { lock.withLock { stored } }
    func write(_ record: LogRecord) { lock.withLock { stored.append(record) } }
}
