import Testing

@testable import NotifyCore
@testable import NotifyTestSupport

@Suite("Log records")
struct LoggingTests {
    @Test("a record renders as one line of fixed text and typed fields")
    func textLine() {
        let r = LogRecord(
            .warn, .triggerFailed, [.status(503), .attempt(2), .delay(.milliseconds(1500)), .code(.relayTransient)])
        #expect(
            r.textLine()
                == #"level=warn msg="wake-up failed; backing off" status=503 attempt=2 delay=1.500 code=relay.transient"#
        )
        #expect(r.textLine(journald: true).hasPrefix("<4>level=warn"))
        #expect(!r.textLine().contains("\n"))
    }

    @Test(
        "durations render in seconds with milliseconds",
        arguments: [
            (Duration.zero, "0.000"), (.milliseconds(5), "0.005"), (.milliseconds(50), "0.050"),
            (.seconds(300), "300.000"),
            (.milliseconds(-1500), "-1.500"),
        ])
    func seconds(d: Duration, text: String) {
        #expect(LogValue.duration(d).rendered == text)
    }

    @Test("journald priorities follow syslog", arguments: [(LogLevel.error, 3), (.warn, 4), (.info, 6), (.debug, 7)])
    func priorities(level: LogLevel, priority: Int) {
        #expect(LogRecord(level, .starting).syslogPriority == priority)
    }

    @Test("LOG_LEVEL filters: debug records are dropped at info")
    func filtering() {
        let sink = RecordingLogSink()
        let logger = Logger(minimumLevel: .info, sink: sink)
        logger.log(.debug, .eventsReceived, .count(3))
        logger.log(.info, .triggerDelivered, .status(202))
        logger.log(.error, .relayEndpointMissing)
        #expect(sink.records.map(\.message) == [.triggerDelivered, .relayEndpointMissing])
    }

    @Test("every fixed message is printable text without identifiers' shapes")
    func messages() {
        for m in LogMessage.allCases {
            #expect(!m.rawValue.isEmpty)
            #expect(!m.rawValue.contains("\""))
            #expect(!m.rawValue.contains("/"))
        }
    }
}
