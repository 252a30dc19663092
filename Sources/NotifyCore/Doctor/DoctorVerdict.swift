/// The doctor's verdicts: for each check, from what was read (an answer, counts, flags; never a path, an ID or a
/// body), which `DoctorCheck.Status` it gets and, where the wording depends on it, which case was hit. Pure;
/// `Doctor` (NotifyRuntime) reads, asks, then words the reason and the fix.
package enum DoctorVerdict {
    /// `config.environment`: PASS when no variable that is set is invalid, else FAIL (every check after it still
    /// runs, without the invalid variables).
    /// - Parameter problems: how many invalid variables (RELAY_URL left out: relay.url reports it).
    package static func configEnvironment(problems: Int) -> DoctorCheck.Status {
        problems == 0 ? .pass : .fail
    }

    /// The variables that say where Syncthing is and which key it takes: one of them invalid leaves every Syncthing
    /// check SKIP, because any answer would be about another address or key than the service's.
    package static let syncthingVariables: Set<ConfigVariable> = [
        .syncthingAPIKey, .syncthingAPIURL, .syncthingConfig, .stGUIAddress, .stGUIAPIKey,
    ]

    /// Which invalid variable, if any, keeps the Syncthing checks from running: the first of `invalid` (in the
    /// order they are reported) that is one of `syncthingVariables`; nil when Syncthing is checked.
    package static func syncthingBlocked(by invalid: [ConfigVariable]) -> ConfigVariable? {
        invalid.first { syncthingVariables.contains($0) }
    }

    /// What `GET /rest/system/status` came to, as the Syncthing checks read it.
    package typealias StatusAnswer = Result<SystemStatus, SyncthingError>

    /// `syncthing.reachable`: PASS when an HTTP answer from Syncthing's REST API came back, even one that rejects
    /// the key (401, 403 `CSRF Error`) or the Host (403 `Host check error`); FAIL for a transport failure, a
    /// redirect, any other status or a body that is not the status.
    package static func reachable(_ status: StatusAnswer) -> DoctorCheck.Status {
        switch status {
        case .success, .failure(.unauthorized), .failure(.hostCheck): .pass
        case .failure: .fail
        }
    }

    /// `syncthing.api-key`: PASS when the status was read; FAIL when Syncthing rejected the key or the Host;
    /// SKIP when Syncthing did not answer with either (`reachable` says why).
    package static func apiKey(_ status: StatusAnswer) -> DoctorCheck.Status {
        switch status {
        case .success: .pass
        case .failure(.unauthorized), .failure(.hostCheck): .fail
        case .failure: .skip
        }
    }

    /// `syncthing.tls-pin` once the endpoint uses TLS and a pin was read from `https-cert.pem`: FAIL for a TLS
    /// failure, SKIP for another transport failure (nothing was learnt about the certificate), else PASS: any HTTP
    /// answer means the handshake with the pin completed.
    package static func tlsPin(_ status: StatusAnswer) -> DoctorCheck.Status {
        switch status {
        case .failure(.transport(.tls)): .fail
        case .failure(.transport): .skip
        default: .pass
        }
    }

    /// `syncthing.device-id`: SKIP unless the status was read; then PASS for a well-formed Device ID
    /// (`DeviceID.isWellFormed`), else FAIL.
    package static func deviceID(_ status: StatusAnswer) -> DoctorCheck.Status {
        guard case .success(let st) = status else { return .skip }
        return DeviceID.isWellFormed(st.myID) ? .pass : .fail
    }

    /// What the config.xml search came to, as `config.file` reads it (the runtime's `ConfigLocation` and the read
    /// that followed, without the paths).
    package enum ConfigFileFinding: Sendable, Equatable, CaseIterable {
        /// Found and read.
        case read
        /// Found, but reading or parsing it failed.
        case readFailed
        /// Nothing readable, but something exists that this process may not read.
        case blocked
        /// Nothing found, and SYNCTHING_CONFIG names a path that is not there yet or cannot be a config.xml.
        case explicitPathWrong
        /// Nothing found at any searched path.
        case notFound
    }

    /// `config.file`: PASS when config.xml was read. When it was needed (the address or the key must come from it),
    /// anything else FAILs. When it was not, a file found but not read WARNs (worth knowing, not a failure) and
    /// nothing found is SKIP.
    /// - Parameter needed: whether the address or the key must come from config.xml.
    package static func configFile(_ finding: ConfigFileFinding, needed: Bool) -> DoctorCheck.Status {
        switch finding {
        case .read: .pass
        case .readFailed, .blocked: needed ? .fail : .warn
        case .explicitPathWrong, .notFound: needed ? .fail : .skip
        }
    }

    /// `syncthing.address-source`: WARN when the address came from config.xml and Syncthing reports
    /// `guiAddressOverridden` true (STGUIADDRESS or `--gui-address`, which config.xml does not show), else PASS.
    /// - Parameters:
    ///   - fromConfigFile: whether the address is config.xml's `<gui><address>`.
    ///   - overridden: what Syncthing reports; nil when unknown.
    package static func addressSource(fromConfigFile: Bool, overridden: Bool?) -> DoctorCheck.Status {
        overridden == true && fromConfigFile ? .warn : .pass
    }

    /// `syncthing.event-stream`: SKIP when it was not asked (Syncthing did not answer with the key accepted); PASS
    /// when the filtered subscription answered with its newest event ID, FAIL for any failure.
    /// - Parameter head: what `GET /rest/events?…&limit=1&timeout=0` came to; nil when it was not asked.
    package static func eventStream(_ head: Result<Int, SyncthingError>?) -> DoctorCheck.Status {
        switch head {
        case nil: .skip
        case .success: .pass
        case .failure: .fail
        }
    }

    /// Which CA certificates the relay's certificate is verified against, as `relay.ca-bundle` reads it (the
    /// runtime's `CATrust`, without the paths).
    package enum CABundleFinding: Sendable, Equatable, CaseIterable {
        /// RELAY_URL is http on loopback: no certificate is verified, so nothing was probed.
        case notNeeded
        /// The platform's own trust store (the macOS keychain, through the system's libcurl).
        case platformStore
        /// A CA file or directory, named by SSL_CERT_FILE/SSL_CERT_DIR or found at a usual location.
        case found
        /// SSL_CERT_FILE or SSL_CERT_DIR is set but names nothing usable (there is no fallback).
        case unusable
        /// Neither variable is set and nothing is at any probed location.
        case notFound
    }

    /// `relay.ca-bundle`: PASS when there is something to verify against, FAIL when there is not (every https
    /// request to the relay would fail), SKIP when nothing is verified.
    package static func relayCABundle(_ finding: CABundleFinding) -> DoctorCheck.Status {
        switch finding {
        case .notNeeded: .skip
        case .platformStore, .found: .pass
        case .unusable, .notFound: .fail
        }
    }

    /// `relay.health`: PASS for a healthy relay, else FAIL (a 404, any other status, a body without
    /// `"status": "ok"`, a transport failure).
    package static func relayHealth(_ health: Engine.RelayHealth) -> DoctorCheck.Status {
        health == .ok ? .pass : .fail
    }

    /// `relay.trigger` for a wake-up that was sent: PASS when the relay took it (2xx) or rate-limited it (429);
    /// WARN for no active subscription yet (400–403: subscribing in the app fixes it, no restart needed); FAIL for
    /// a 404 or a wake-up not delivered.
    package static func relayTrigger(_ outcome: RelayOutcome) -> DoctorCheck.Status {
        switch outcome {
        case .delivered, .rateLimited: .pass
        case .subscriptionInactive: .warn
        case .endpointMissing, .transient: .fail
        }
    }
}
