import Testing

@testable import NotifyCore

/// IPv6 literals in URLs (RFC 4291 §2.2): each group is exactly 1 to 4 hex digits; an empty group exists only as
/// part of one `::`. A group with a sign (`http://[::+1]`) is not hex digits and must not pass as loopback
/// (`UInt16(_:radix:)` alone accepts a sign).
@Suite struct URLPartsIPv6Tests {
    static let malformed: [String] = [
        "::+1", "::-1", "+::1", "::+ff", "0:0:0:0:0:0:0:+1", "::0x1", "::1_", "::g", "::1:+2",
        // five digits
        "::00001", "00000::1", "0:0:0:0:0:0:0:00001",
        // empty groups outside one `::`
        ":1::2", "1::2:", "1:::2", "::1::", "1::2::3", ":::", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:",
        "1:2:3:4:5:6:7:8:", "1:2:3:4:5:6::7:8",
        // wrong number of groups
        "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::8",
        // a dotted quad only at the end, and strict
        "::127.0.0.1:1", "::ffff:127.0.0.01", "::ffff:127.0.0",
    ]

    @Test(arguments: malformed)
    func malformedLiteralIsNoAddress(_ literal: String) {
        #expect(IPAddress.ipv6Bytes(Substring(literal)) == nil)
        #expect(URLParts("http://[\(literal)]") == nil)
        #expect(!hostIsLoopback("[\(literal)]"))
        #expect(!hostIsLoopback(literal))
    }

    @Test func signedGroupIsNotLoopbackAndRelayURLIsRefused() {
        #expect(!hostIsLoopback("[::+1]"))
        #expect(Configuration.parseRelayURL("http://[::+1]") == .failure(.notAURL))
        #expect(Configuration.parseRelayURL("http://[::+1]:8080/") == .failure(.notAURL))
    }

    static let loopback: [String] = [
        "::1", "0:0:0:0:0:0:0:1", "0000:0000:0000:0000:0000:0000:0000:0001", "::0001", "0::1", "::ffff:127.0.0.1",
        "::FFFF:7F00:1", "::ffff:127.1.2.3",
    ]

    @Test(arguments: loopback)
    func loopbackLiteralIsLoopback(_ literal: String) throws {
        let parts = try #require(URLParts("http://[\(literal)]:8080/"))
        #expect(parts.host == "[\(literal)]")
        #expect(hostIsLoopback(parts.host))
        #expect(Configuration.parseRelayURL("http://[\(literal)]:8080/") == .success("http://[\(literal)]:8080"))
    }

    static let wellFormed: [(String, [UInt8])] = [
        ("::", [UInt8](repeating: 0, count: 16)),
        ("1::", [0, 1] + [UInt8](repeating: 0, count: 14)),
        ("2001:db8::1", [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]),
        ("ABCD:ef01::", [0xAB, 0xCD, 0xEF, 0x01] + [UInt8](repeating: 0, count: 12)),
        ("1:2:3:4:5:6:7:8", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]),
        ("1:2:3:4:5:6::8", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 0, 0, 8]),
        ("::ffff:10.0.0.1", [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 10, 0, 0, 1]),
    ]

    @Test(arguments: wellFormed)
    func wellFormedLiteralParses(_ literal: String, _ bytes: [UInt8]) {
        #expect(IPAddress.ipv6Bytes(Substring(literal)) == bytes)
        #expect(URLParts("https://[\(literal)]") != nil)
    }

    @Test func hexGroupTakesOneToFourHexDigitsOnly() {
        #expect(IPAddress.hexGroup("0") == 0)
        #expect(IPAddress.hexGroup("ffff") == 0xFFFF)
        #expect(IPAddress.hexGroup("FfFf") == 0xFFFF)
        #expect(IPAddress.hexGroup("09aF") == 0x09AF)
        for bad in ["", "+1", "-1", "+ff", "10000", "0fffff", "g", " 1", "1 ", "0x1", "\u{FF11}"] {
            #expect(IPAddress.hexGroup(Substring(bad)) == nil, "\(bad)")
        }
    }
}
