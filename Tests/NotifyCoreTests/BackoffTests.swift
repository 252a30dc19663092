import Testing

@testable import NotifyCore

@Suite("The relay backoff")
struct BackoffTests {
    @Test(
        "backoff ceilings double from 1 s to a 5 min cap",
        arguments: [
            (1, 1), (2, 2), (3, 4), (4, 8), (8, 128), (9, 256), (10, 300), (50, 300),
        ])
    func backoffTable(failures: Int, ceilingSeconds: Int64) {
        #expect(Backoff().ceiling(afterFailures: failures) == .seconds(ceilingSeconds))
        #expect(
            Backoff().delay(afterFailures: failures, jitter: 0.5)
                == max(.milliseconds(100), .seconds(ceilingSeconds) / 2))
        #expect(Backoff().delay(afterFailures: failures, jitter: 0) == .milliseconds(100))
    }
}
