/// The last relay answer, as a category (never a status body or an identifier).
package enum RelayOutcomeCategory: String, Sendable, CaseIterable {
    /// No trigger has been answered yet.
    case none
    /// 2xx.
    case delivered
    /// 400–403: no active subscription for this server.
    case inactive
    /// 429.
    case rateLimited = "rate-limited"
    /// 3xx, other 4xx, 5xx, a transport failure, or a 404 after the relay had answered (an outage).
    case transient

    /// The category of `outcome`. A 404 is `.transient`: when the service keeps running after it, the relay had
    /// answered before and the 404 is an outage it backs off from (`WakePolicy.relayHasAnswered`); when it is the
    /// start-up's wrong RELAY_URL the process exits 78 and removes the state file, so the category is never read.
    package init(_ outcome: RelayOutcome) {
        switch outcome {
        case .delivered: self = .delivered
        case .subscriptionInactive: self = .inactive
        case .rateLimited: self = .rateLimited
        case .transient, .endpointMissing: self = .transient
        }
    }
}
