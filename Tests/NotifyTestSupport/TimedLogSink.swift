import NotifyCore

/// Passes each record on to a sink and to an observer.
final class TimedLogSink: LogSink {
    private let sink: any LogSink
    private let observe: @Sendable (LogRecord) -> Void
    init(sink: any LogSink, observe: @escaping @Sendable (LogRecord) -> Void) {
        self.sink = sink
        self.observe = observe
    }
    func write(_ record: LogRecord) {
        observe(record)
        sink.write(record)
    }
}
