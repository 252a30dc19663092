/// The time limits of the sidecar's requests to the relay, in one place: the relay client sends them as libcurl's
/// limits, the engine bounds a running trigger by `request`, and the service announces it to the watchdog's liveness.
package enum RelayTimeouts {
    /// libcurl's total timeout for one relay request (the health check, a trigger while running): 20 s. The relay
    /// is across the internet; an answer still missing after this long is an outage, and the trigger is retried.
    package static let request: Duration = .seconds(20)

    /// libcurl's connect timeout (TCP and TLS) for a relay request, at most the request's own limit: 10 s.
    package static let connect: Duration = .seconds(10)
}
