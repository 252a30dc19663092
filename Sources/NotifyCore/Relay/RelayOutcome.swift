/// What one POST /api/v1/trigger attempt came to, classified purely from its status (README.md, "Relay answers",
/// lists each status and what the sidecar does).
package enum RelayOutcome: Sendable, Equatable {
    /// 2xx (the relay answers 202; 200 and 204 count too).
    case delivered(status: Int)
    /// 400, 401, 402, 403: no active subscription for this Device ID. Keep the wake-up; re-check slowly.
    case subscriptionInactive(status: Int)
    /// 429: wait this long (Retry-After, clamped to 1 s … 1 h; 30 s when missing or unreadable).
    case rateLimited(retryAfter: Duration)
    /// 404: wrong RELAY_URL or a broken deployment. Fatal (exit 78) until the relay has answered at this URL during
    /// this run; a relay outage (backoff) after that (`WakePolicy.relayHasAnswered`).
    case endpointMissing
    /// 3xx, other 4xx, 5xx (`status`), or a transport failure (`status` nil, `error` set): back off and retry.
    case transient(status: Int?, error: ErrorCode?)

    /// Classifies an HTTP status.
    /// - Parameters:
    ///   - status: the response status code.
    ///   - retryAfter: the raw `Retry-After` header, if any.
    ///   - date: the raw `Date` header, if any: the relay's own clock when it answered. An HTTP-date Retry-After is
    ///     read against it, so that a wrong or stepped local clock neither stretches nor shortens the wait; without a
    ///     readable one, against `wallClockNow`.
    ///   - wallClockNow: seconds since the Unix epoch on this host, for HTTP-date Retry-After values.
    package static func classify(
        status: Int, retryAfter: String?, date: String? = nil, wallClockNow: Int64
    ) -> RelayOutcome {
        switch status {
        case 200...299: .delivered(status: status)
        case 400, 401, 402, 403: .subscriptionInactive(status: status)
        case 404: .endpointMissing
        case 429:
            .rateLimited(
                retryAfter: RetryAfter.delay(
                    header: retryAfter, wallClockNow: date.flatMap(RetryAfter.httpDate) ?? wallClockNow))
        default: .transient(status: status, error: nil)
        }
    }

    /// Whether the relay may have received the trigger, and so may have pushed and opened its push window, although
    /// the answer says it failed: a 5xx (a proxy's 502/504 after the relay accepted, or a relay that failed after
    /// pushing), a timeout or a cut answer after the request was sent. A DNS, connect or TLS failure, or a 3xx/4xx
    /// answer from the relay itself, means it did not push.
    package var mayHavePushed: Bool {
        switch self {
        case .delivered: true
        case .subscriptionInactive, .rateLimited, .endpointMissing: false
        case .transient(let status?, _): (500...599).contains(status)
        case .transient(nil, let error):
            switch error {
            case .transportDNS?, .transportConnect?, .transportTLS?, .transportCancelled?: false
            default: true
            }
        }
    }

    /// A 5xx answer.
    package var isServerError: Bool {
        if case .transient(let status?, _) = self { (500...599).contains(status) } else { false }
    }

    /// Whether only the relay itself gives this answer to `POST /api/v1/trigger`, so that it proves RELAY_URL
    /// points at the relay: 2xx, 400–403 and 429 (README.md, "Relay answers"). A 404, a 3xx, another 4xx, a 5xx
    /// or a transport failure proves nothing: a proxy or another server in front of a wrong path answers those too.
    package var isRelaysOwnAnswer: Bool {
        switch self {
        case .delivered, .subscriptionInactive, .rateLimited: true
        case .endpointMissing, .transient: false
        }
    }

    /// A transport failure (DNS, connect, TLS, timeout, cut body): always transient.
    package static func transportFailure(_ code: ErrorCode) -> RelayOutcome { .transient(status: nil, error: code) }
}
