/// The threads off the engine queue. In production the poll loop's requests and the long-poll share one thread, so
/// that the poll loop has one request in flight at a time.
package enum ServiceLane: Sendable, Equatable {
    /// The event long-poll.
    case longPoll
    /// The poll loop's other requests: the relay health check at start, Syncthing's status read and event head.
    case pollLoop
    /// The relay POST.
    case relay
    /// Config and peer reads (they may run while a long-poll is held).
    case peers
}
