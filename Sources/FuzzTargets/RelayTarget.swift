import NotifyCore
import NotifyRuntime

/// A device ID of the form `DeviceID.isWellFormed` accepts.
private let deviceID = "MFZWI3D-BONSGYC-YLTMRWG-C43ENR5-QXGZDMM-FZWI3DP-BONSGYY-LTMRWAD"
private let relayBase = "https://relay.example"

/// Answers every request with one fixed response and remembers the last request. Used from one thread only.
private final class FixedTransport: HTTPTransport, @unchecked Sendable {
    let response: HTTPResponse
    var lastRequest: HTTPRequest?

    init(_ response: HTTPResponse) { self.response = response }

    func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        lastRequest = request
        return .success(response)
    }

    func cancel() {}
}

/// `<status> <now>\n<Retry-After value>\n<body>` through `RelayOutcome.classify` and through `RelayClient`'s
/// `trigger` and `health` over a transport that gives that answer.
///
/// Invariants: the classification follows the README's table of relay answers (2xx delivered, 400–403 subscription
/// inactive, 404 endpoint missing, 429 rate limited for `RetryAfter.delay`, anything else transient), and
/// `mayHavePushed` holds for 2xx and 5xx only; the trigger goes to `/api/v1/trigger` with exactly
/// `{"device_id": "<id>"}` and gets the same outcome; a healthy answer needs status 200, and the relay's version is
/// shown only when it is 1–32 characters of `A–Z a–z 0–9 . _ + -`; a 404 health answer is "endpoint missing".
func fuzzRelay(_ input: [UInt8], _ check: inout InvariantCheck) {
    let (firstLine, afterFirst) = splitFirstLine(input)
    let fields = firstLine?.split(separator: " ", maxSplits: 1) ?? []
    let status = fields.first.flatMap { Int($0) }.map { min(max($0, 0), 999) } ?? 429
    let now = wallClock(fields.count > 1 ? fields[1] : nil)
    // Without a second line the rest is the Retry-After value and the body is empty; an empty rest is no header.
    let (retryLine, rest) = splitFirstLine(afterFirst)
    let retryAfter = retryLine ?? (afterFirst.isEmpty ? nil : String(decoding: afterFirst, as: UTF8.self))
    let body = retryLine == nil ? [] : rest

    let outcome = RelayOutcome.classify(status: status, retryAfter: retryAfter, wallClockNow: now)
    let expected: RelayOutcome =
        switch status {
        case 200...299: .delivered(status: status)
        case 400...403: .subscriptionInactive(status: status)
        case 404: .endpointMissing
        case 429: .rateLimited(retryAfter: RetryAfter.delay(header: retryAfter, wallClockNow: now))
        default: .transient(status: status, error: nil)
        }
    check.expect(outcome == expected, "status \(status) classified as \(outcome), expected \(expected)")
    check.expect(
        outcome.mayHavePushed == ((200...299).contains(status) || (500...599).contains(status)),
        "mayHavePushed is \(outcome.mayHavePushed) for status \(status)")
    if let retryAfter { checkRetryAfter(header: retryAfter, now: now, &check) }

    let headers = retryAfter.map { ["retry-after": $0] } ?? [:]
    let transport = FixedTransport(HTTPResponse(status: status, headers: headers, body: body))
    let client = RelayClient(transport: transport, baseURL: relayBase, clock: SystemClock())
    let triggered = client.trigger(deviceID: deviceID)
    if case .rateLimited(let delay) = triggered {
        // The client reads the real clock, so an HTTP-date gives another delay than at `now`.
        check.expect(status == 429 && delay >= RetryAfter.minimum && delay <= RetryAfter.maximum, "trigger: \(delay)")
    } else {
        check.expect(status != 429 && triggered == outcome, "trigger gave \(triggered), classify \(outcome)")
    }
    let sent = transport.lastRequest
    check.expect(
        sent?.method == .post && sent?.url == relayBase + "/api/v1/trigger"
            && sent?.body == Array("{\"device_id\": \"\(deviceID)\"}".utf8),
        "trigger sent \(String(describing: sent))")

    let health = client.health()
    check.expect(health.version == nil || health.health == .ok, "a version shown for an unhealthy relay")
    switch health.health {
    case .ok:
        check.expect(status == 200, "healthy with status \(status)")
        if let version = health.version {
            let safe = version.utf8.allSatisfy { b in
                (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
                    || [0x2E, 0x5F, 0x2B, 0x2D].contains(b)
            }
            check.expect(safe && (1...32).contains(version.utf8.count), "unsafe relay version shown: \(version)")
        }
    case .endpointMissing:
        check.expect(status == 404, "endpoint missing for status \(status)")
    case .unhealthy(let got, _):
        check.expect(status != 404 && got == status, "unhealthy with \(String(describing: got)) for \(status)")
    }
    check.expect(transport.lastRequest?.url == relayBase + "/api/v1/health", "health asked elsewhere")
}
