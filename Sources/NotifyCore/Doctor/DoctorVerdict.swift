/// The doctor's verdicts on what Syncthing and the relay answered: for each check that reads an answer, which
/// `DoctorCheck.Status` it gets. Pure; `Doctor` (NotifyRuntime) asks, then words the reason and the fix.
package enum DoctorVerdict {
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

    /// `syncthing.address-source`: WARN when the address came from config.xml and Syncthing reports
    /// `guiAddressOverridden` true (STGUIADDRESS or `--gui-address`, which config.xml does not show), else PASS.
    /// - Parameters:
    ///   - fromConfigFile: whether the address is config.xml's `<gui><address>`.
    ///   - overridden: what Syncthing reports; nil when unknown.
    package static func addressSource(fromConfigFile: Bool, overridden: Bool?) -> DoctorCheck.Status {
        overridden == true && fromConfigFile ? .warn : .pass
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
