/// The choices of one Syncthing REST request, from the first send to the answer: which of the endpoint's base URLs
/// (addresses) to try and in what order, which one to stay on, and when to re-read the certificate pin and retry.
/// Pure: the client performs each `step` and feeds back what happened.
///
/// - Addresses are tried in order (e.g. `127.0.0.1` then `[::1]` for `localhost`), the preferred one first.
/// - Only a failure to connect or to resolve moves on to the next address; any other transport failure, and any
///   answer whatever its status, ends the request.
/// - The address that answered is the one to stay on: the next request tries it first.
/// - A TLS failure re-reads `https-cert.pem` once: Syncthing regenerates its certificate near expiry and users may
///   swap in their own (docs/syncthing-api.md, TLS). A changed pin retries the request from the preferred address.
package struct SyncthingAttempts: Sendable, Equatable {
    /// What the client does next.
    package enum Step: Sendable, Equatable {
        /// Send the request to the base URL at this index (with the current pin), then call `answered` or
        /// `failed`.
        case send(address: Int)
        /// Re-read the certificate pin, then call `pinReread`.
        case rereadPin
        /// The request is over: its result, and the address to prefer from now on (nil: keep the preference).
        case finished(Result<[UInt8], SyncthingError>, stayOn: Int?)
    }

    /// What to do next.
    package private(set) var step: Step
    /// The addresses still to try after the one being sent to, in order.
    private var remaining: [Int]
    private var pinWasReread = false

    /// Starts a request.
    /// - Parameters:
    ///   - addresses: how many base URLs the endpoint has (≥ 0; none fails at once as `.transport(.connect)`).
    ///   - preferred: the index of the address that answered last (0 when none has, or when out of range).
    package init(addresses: Int, preferred: Int) {
        step = .rereadPin
        remaining = []
        start(addresses: addresses, preferred: preferred)
    }

    /// The order to try `addresses` base URLs in: `preferred` first when it is a valid index, then the others in
    /// their own order.
    package static func order(addresses: Int, preferred: Int) -> [Int] {
        var order = Array(0..<max(0, addresses))
        if preferred > 0, preferred < addresses {
            order.remove(at: preferred)
            order.insert(preferred, at: 0)
        }
        return order
    }

    /// Whether a transport failure at one address moves on to the next: only DNS and connect failures, which
    /// mean that address is not where Syncthing listens. A timeout, TLS failure or cut body came from Syncthing.
    package static func triesNextAddress(after error: TransportError) -> Bool {
        error == .connect || error == .dns
    }

    /// The address being sent to answered (any status).
    /// - Precondition: `step` is `.send`.
    package mutating func answered(status: Int, body: [UInt8]) {
        guard case .send(let address) = step else { preconditionFailure("an answer without a send") }
        step = .finished(SyncthingAnswer.classify(status: status, body: body), stayOn: address)
    }

    /// The send to the current address got no complete answer.
    /// - Precondition: `step` is `.send`.
    package mutating func failed(_ error: TransportError) {
        guard case .send = step else { preconditionFailure("a failure without a send") }
        if Self.triesNextAddress(after: error), !remaining.isEmpty {
            step = .send(address: remaining.removeFirst())
        } else if error == .tls, !pinWasReread {
            step = .rereadPin
        } else {
            step = .finished(SyncthingAnswer.classify(error), stayOn: nil)
        }
    }

    /// The pin was re-read.
    /// - Parameters:
    ///   - changed: true when a readable pin different from the one that failed is now in use; false keeps the
    ///     TLS failure as the result.
    ///   - addresses, preferred: the endpoint's address count and preferred address now, for the retry.
    /// - Precondition: `step` is `.rereadPin`.
    package mutating func pinReread(changed: Bool, addresses: Int, preferred: Int) {
        guard case .rereadPin = step else { preconditionFailure("a pin re-read that was not asked for") }
        pinWasReread = true
        guard changed else {
            step = .finished(SyncthingAnswer.classify(.tls), stayOn: nil)
            return
        }
        start(addresses: addresses, preferred: preferred)
    }

    private mutating func start(addresses: Int, preferred: Int) {
        remaining = Self.order(addresses: addresses, preferred: preferred)
        if remaining.isEmpty {
            step = .finished(SyncthingAnswer.classify(.connect), stayOn: nil)
        } else {
            step = .send(address: remaining.removeFirst())
        }
    }
}
