#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One fuzz target: a parser of untrusted input, run on one input, with the invariants it must keep.
///
/// Each target takes the raw bytes libFuzzer makes (seeds: `fuzz/corpus/<rawValue>/`, taken from the test fixtures;
/// input formats: fuzz/README.md) and returns the invariants that input broke, as one line each. "No crash" is
/// implied: a trap, an out-of-bounds access or an arithmetic overflow aborts the process, and libFuzzer keeps the
/// input. The `vaultsync-fuzz` executable turns any returned line into a crash too.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// `SyncthingConfigFile.parse(_:)` (config.xml through libxml2). Input: the file's bytes.
    case configXML = "config-xml"
    /// `SyncthingEvent.decodeArray(_:)` and the `/rest/…` models of SyncthingModels.swift. Input: a response body.
    case events
    /// `JSONReader` through every model, against Foundation's `JSONDecoder`. Input: a response body.
    case json
    /// `RetryAfter.delay(header:wallClockNow:)` and `RetryAfter.httpDate(_:)`. Input: `<now>\n<header value>`.
    case retryAfter = "retry-after"
    /// `RelayOutcome.classify` and `RelayClient.trigger`/`health` over a fake transport. Input:
    /// `<status> <now>\n<Retry-After>\n<body>`.
    case relay
    /// `URLParts`, `hostIsLoopback` and `SyncthingEndpoint`'s address parsers. Input: one URL or address.
    case url
    /// `Configuration.parse(environment:)`. Input: `NAME=value` lines.
    case configuration
    /// Checks `scripts/fuzz` itself: breaks an invariant on an input that starts with `CRASH`.
    case selfTestCrash = "selftest-crash"
    /// Checks `scripts/fuzz` itself: leaks 64 bytes on every input.
    case selfTestLeak = "selftest-leak"

    /// The targets `scripts/fuzz` runs by default: all but the self-tests.
    package static var productTargets: [FuzzTarget] { allCases.filter { !$0.isSelfTest } }

    /// True for the targets that exist only to prove that `scripts/fuzz` reports a finding.
    package var isSelfTest: Bool { self == .selfTestCrash || self == .selfTestLeak }

    /// Runs one input.
    /// - Returns: one line per broken invariant; empty when the input kept them all.
    package func run(_ input: [UInt8]) -> [String] {
        var check = InvariantCheck()
        switch self {
        case .configXML: fuzzConfigXML(input, &check)
        case .events: fuzzEvents(input, &check)
        case .json: fuzzJSON(input, &check)
        case .retryAfter: fuzzRetryAfter(input, &check)
        case .relay: fuzzRelay(input, &check)
        case .url: fuzzURL(input, &check)
        case .configuration: fuzzConfiguration(input, &check)
        case .selfTestCrash:
            check.expect(!input.starts(with: Array("CRASH".utf8)), "self-test: the input starts with CRASH")
        case .selfTestLeak: leakForSelfTest()
        }
        return check.failures
    }
}

/// Collects broken invariants.
struct InvariantCheck {
    private(set) var failures: [String] = []

    mutating func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { failures.append(message()) }
    }

    mutating func fail(_ message: String) { failures.append(message) }
}

/// The last allocation of `selftest-leak`; each run overwrites it, so the previous one becomes unreachable.
nonisolated(unsafe) private var leakedForSelfTest: UnsafeMutableRawPointer?

private func leakForSelfTest() {
    guard let block = malloc(64) else { return }
    memset(block, 0x5A, 64)
    leakedForSelfTest = block
}
