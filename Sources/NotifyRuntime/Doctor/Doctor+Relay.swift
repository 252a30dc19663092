import NotifyCore

extension Doctor {
    /// `relay.url` through `relay.trigger`.
    /// - Parameters:
    ///   - relayProblem: why RELAY_URL is unusable (from `parseEnvironment`).
    ///   - myID: Syncthing's Device ID for the trigger; nil when unknown.
    ///   - trigger: send the one real wake-up.
    static func relayChecks(
        _ configuration: Configuration?, _ relayProblem: ConfigurationError?, _ myID: String?, _ trigger: Bool,
        _ deps: Dependencies
    ) -> [DoctorCheck] {
        guard let configuration, relayProblem == nil else {
            return [
                .init(
                    .relayURL, .fail, relayProblem?.message ?? "RELAY_URL could not be checked",
                    fix: "Set RELAY_URL to the relay's base URL, e.g. RELAY_URL=https://relay.vaultsync.eu "
                        + "(http:// only for a relay on loopback)."),
                .init(.relayCABundle, .skip, "not checked: RELAY_URL is unusable"),
                .init(.relayHealth, .skip, "not checked: RELAY_URL is unusable"),
                .init(.relayTrigger, .skip, "not sent: RELAY_URL is unusable"),
            ]
        }
        let base = configuration.relayBaseURL
        let relay = RelayClient(transport: deps.relayTransport, baseURL: base, clock: SystemClock())
        return [
            .init(.relayURL, .pass, "\(base) (well-formed; https, or http on loopback)"),
            caBundleCheck(relayBaseURL: base, trustStore: deps.trustStore), healthCheck(relay),
            triggerCheck(relay, myID: myID, trigger: trigger),
        ]
    }

    /// `relay.health`: `GET /api/v1/health`.
    private static func healthCheck(_ relay: RelayClient) -> DoctorCheck {
        let answer = relay.health()
        let verdict = DoctorVerdict.relayHealth(answer.health)
        switch answer.health {
        case .ok:
            return .init(
                .relayHealth, verdict,
                "GET /api/v1/health answered ok; relay version \(answer.version ?? "not reported")")
        case .endpointMissing:
            return .init(
                .relayHealth, verdict, "GET /api/v1/health answered 404: there is no relay API at RELAY_URL",
                fix: RelayClient.notFoundFix)
        case .unhealthy(let status, let error):
            let what =
                if let status, status != 200 {
                    "GET /api/v1/health answered HTTP \(status)"
                } else if status == 200 {
                    "GET /api/v1/health answered 200 without \"status\": \"ok\""
                } else {
                    "GET /api/v1/health failed: \(describe(error))"
                }
            return .init(.relayHealth, verdict, "the relay is not healthy: \(what)", fix: relayDownFix)
        }
    }

    /// `relay.trigger`: one real `POST /api/v1/trigger` with this server's Device ID, unless `--no-trigger`.
    private static func triggerCheck(_ relay: RelayClient, myID: String?, trigger: Bool) -> DoctorCheck {
        guard trigger else { return .init(.relayTrigger, .skip, "not sent (--no-trigger)") }
        guard let myID else {
            return .init(
                .relayTrigger, .skip, "not sent: Syncthing's Device ID is unknown (see syncthing.device-id)")
        }
        let sent = "sent one real wake-up (POST /api/v1/trigger with this server's Device ID): "
        let outcome = relay.trigger(deviceID: myID)
        let verdict = DoctorVerdict.relayTrigger(outcome)
        switch outcome {
        case .delivered(let status):
            return .init(.relayTrigger, verdict, sent + "HTTP \(status), accepted")
        case .rateLimited:
            return .init(
                .relayTrigger, verdict,
                sent + "HTTP 429: the relay's rate limit (over 10 wake-ups a minute for this server)")
        case .subscriptionInactive(let status):
            return .init(
                .relayTrigger, verdict,
                sent + "HTTP \(status): no active Cloud Relay subscription for this server yet: subscribe in "
                    + "the app",
                fix: "In VaultSync on the iPhone, subscribe to Cloud Relay for this server (short ID "
                    + "\(shortID(myID))); the running service re-checks every 60 s, no restart needed.")
        case .endpointMissing:
            return .init(
                .relayTrigger, verdict, sent + "HTTP 404: there is no trigger endpoint at RELAY_URL",
                fix: RelayClient.notFoundFix)
        case .transient(let status, let error):
            let what = status.map { "HTTP \($0)" } ?? describe(error)
            return .init(.relayTrigger, verdict, sent + "not delivered: \(what)", fix: relayDownFix)
        }
    }

    /// `relay.ca-bundle`: which CA certificates the relay's TLS certificate is verified against.
    static func caBundleCheck(relayBaseURL: String, trustStore: TrustStore) -> DoctorCheck {
        // Probed only when https: http on loopback verifies nothing.
        guard CurlTransport.verifiesAgainstCAs(HTTPRequest(url: relayBaseURL)) else {
            return .init(
                .relayCABundle, DoctorVerdict.relayCABundle(.notNeeded), "not needed: RELAY_URL is http on loopback")
        }
        let setFile =
            "Install the system's CA certificates (package ca-certificates), or set SSL_CERT_FILE to a PEM file of "
            + "trusted CAs: SSL_CERT_FILE=/path/to/ca-bundle.pem."
        let trust = trustStore.current()
        let verdict = DoctorVerdict.relayCABundle(trust.finding)
        switch trust {
        case .platformDefault:
            return .init(
                .relayCABundle, verdict, "the system trust store (macOS keychain, through the system's libcurl)")
        case .found(let certificates):
            let named = [certificates.file, certificates.directory].compactMap { $0 }.joined(separator: " and ")
            let origin =
                certificates.fromEnvironment
                ? "named by " + CAVariable.allCases.map(\.rawValue).joined(separator: "/")
                : "the first usual location found"
            return .init(.relayCABundle, verdict, "CA certificates from \(named) (\(origin))")
        case .unusable(let variable):
            return .init(.relayCABundle, verdict, variable.unusableMessage, fix: variable.unusableFix)
        case .notFound:
            let searched = (TrustStore.bundleFiles + TrustStore.bundleDirectories).joined(separator: ", ")
            return .init(.relayCABundle, verdict, "no CA certificate bundle found; probed \(searched)", fix: setFile)
        }
    }

    static let relayDownFix =
        "Check that this host reaches the relay (DNS, firewall, proxy, the system clock for TLS); if the relay itself "
        + "is down, the running service keeps retrying with backoff and needs no restart."
}

extension CATrust {
    /// What `relay.ca-bundle`'s verdict reads: which case, without the paths.
    fileprivate var finding: DoctorVerdict.CABundleFinding {
        switch self {
        case .platformDefault: .platformStore
        case .found: .found
        case .unusable: .unusable
        case .notFound: .notFound
        }
    }
}
