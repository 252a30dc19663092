import Testing

@testable import NotifyCore

/// Found by the retry-after fuzz target (fuzz/README.md): a value ending in CR LF was not trimmed, because CR LF is a
/// single Character, equal to neither "\r" nor "\n", so `Retry-After: 120` read from a raw header line waited the 30 s
/// fallback instead of 120 s.
@Suite("Retry-After trims CR LF")
struct RetryAfterTrimTests {
    static let now: Int64 = 1_796_004_000  // 2026-11-30T02:00:00Z

    @Test(
        "delta-seconds and HTTP-dates surrounded by CR LF",
        arguments: [
            ("120\r\n", 120), ("\r\n\n170", 170), ("\r\n 17 \r\n", 17), ("Mon, 30 Nov 2026 02:01:30 GMT\r\n", 90),
            ("\r\nMon Nov 30 02:00:10 2026\r\n", 10),
        ])
    func crlf(header: String, seconds: Int64) {
        #expect(RetryAfter.delay(header: header, wallClockNow: Self.now) == .seconds(seconds))
    }

    @Test("only ASCII white space is trimmed, and nothing inside")
    func trimming() {
        #expect("\r\n\t a b \r\n".trimmingASCIIWhitespace() == "a b")
        #expect(" \u{301}7".trimmingASCIIWhitespace() == "\u{301}7")
        #expect("\u{A0}7\u{2003}".trimmingASCIIWhitespace() == "\u{A0}7\u{2003}")
        #expect("\r\n".trimmingASCIIWhitespace() == "")
    }
}
