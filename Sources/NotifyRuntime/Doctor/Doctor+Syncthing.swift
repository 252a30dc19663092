import NotifyCore

extension Doctor {
    /// What Syncthing answered to `GET /rest/system/status`, the request most Syncthing checks read.
    typealias StatusAnswer = Result<SystemStatus, SyncthingError>

    /// Appends config.file through syncthing.event-stream to `checks`. Returns the Device ID when Syncthing gave a
    /// well-formed one, and the peer checks (empty when Syncthing did not answer with the key accepted).
    static func syncthingChecks(
        _ configuration: Configuration, _ env: [String: String], _ deps: Dependencies, _ checks: inout [DoctorCheck]
    ) -> (myID: String?, peers: [DoctorCheck]) {
        let needed = SyncthingAccessRule.needsConfigFile(configuration)
        let reads = SyncthingAccessRule.readsConfigFile(configuration)
        let (fileCheck, lookup) = configFile(needed: needed, env, deps)
        checks.append(fileCheck)

        let access: SyncthingAccess
        switch SyncthingAccess.resolve(configuration: configuration, configFile: reads ? lookup : nil) {
        case .success(let a):
            access = a
        case .failure(let error):
            checks += unresolvedChecks(error)
            return (nil, [])
        }

        let client = SyncthingClient(transport: deps.syncthingTransport, access: access)
        let status = client.status()
        let accepted = if case .success = status { true } else { false }
        checks.append(addressSourceCheck(access, status))
        checks.append(reachableCheck(access, status))
        checks.append(apiKeyCheck(access, status))
        checks.append(tlsPinCheck(access, status, deps))
        let (idCheck, myID) = deviceIDCheck(status)
        checks.append(idCheck)
        checks.append(eventStreamCheck(accepted ? client : nil))
        return (myID, accepted ? peerChecks(client, myID: myID, configuration) : [])
    }

    /// syncthing.address-source through syncthing.event-stream when no usable address and key were resolved.
    private static func unresolvedChecks(_ error: SyncthingAccessError) -> [DoctorCheck] {
        let skip = "not checked: no usable Syncthing address and key"
        var checks: [DoctorCheck]
        switch error {
        case .configFile:
            checks = [
                .init(.addressSource, .skip, "no address: config.xml is needed (see config.file)"),
                .init(.reachable, .skip, skip), .init(.apiKey, .skip, "no key: config.xml is needed (see config.file)"),
            ]
        case .guiDisabled, .invalidAddress:
            checks = [
                .init(.addressSource, .fail, error.message, fix: error.fix), .init(.reachable, .skip, skip),
                .init(.apiKey, .skip, skip),
            ]
        case .noAPIKey:
            checks = [
                .init(.addressSource, .skip, "not resolved without an API key (see syncthing.api-key)"),
                .init(.reachable, .skip, skip), .init(.apiKey, .fail, error.message, fix: error.fix),
            ]
        }
        return checks + [DoctorCheck.Name.tlsPin, .deviceID, .eventStream].map { .init($0, .skip, skip) }
    }

    /// `syncthing.address-source`: where the address came from, and whether Syncthing reports an override.
    private static func addressSourceCheck(_ access: SyncthingAccess, _ status: StatusAnswer) -> DoctorCheck {
        let whereText = describe(access.endpoint)
        var sourceText =
            switch access.source {
            case .apiURLVariable: "SYNCTHING_API_URL: \(whereText)"
            case .stGUIAddress: "STGUIADDRESS: \(whereText)"
            case .configFile: "config.xml <gui><address>: \(whereText)"
            }
        guard case .success(let st) = status else {
            return .init(.addressSource, .pass, sourceText + "; guiAddressOverridden unknown (status not read)")
        }
        guard let overridden = st.guiAddressOverridden else {
            return .init(.addressSource, .pass, sourceText + "; Syncthing does not report guiAddressOverridden")
        }
        sourceText += "; Syncthing reports guiAddressOverridden=\(overridden)"
        let verdict = DoctorVerdict.addressSource(fromConfigFile: access.source == .configFile, overridden: overridden)
        guard verdict == .warn else { return .init(.addressSource, verdict, sourceText) }
        return .init(
            .addressSource, verdict, sourceText + " (STGUIADDRESS or --gui-address, which config.xml does not show)",
            fix: "Give vaultsync-notify the same STGUIADDRESS as Syncthing (or set SYNCTHING_API_URL), "
                + "so that it does not depend on config.xml's address matching the override.")
    }

    /// `syncthing.reachable`: an HTTP answer from Syncthing's REST API came back (the key may still be wrong).
    private static func reachableCheck(_ access: SyncthingAccess, _ status: StatusAnswer) -> DoctorCheck {
        let whereText = describe(access.endpoint)
        let verdict = DoctorVerdict.reachable(status)
        switch status {
        case .success, .failure(.unauthorized), .failure(.hostCheck):
            return .init(.reachable, verdict, "Syncthing answered at \(whereText)")
        case .failure(.redirect):
            return .init(
                .reachable, verdict,
                "\(whereText) answered with a redirect: Syncthing's GUI there uses HTTPS and this process spoke "
                    + "plain HTTP",
                fix: redirectFix(access))
        case .failure(.transport(let error)):
            return .init(
                .reachable, verdict, "no answer from \(whereText): \(describe(error))",
                fix: error == .tls ? "Apply the fix under syncthing.tls-pin." : unreachableFix(access))
        case .failure(let error):
            let what =
                error == .malformed
                ? "answered 200 with a body that is not Syncthing's /rest/system/status"
                : "answered HTTP \(error.status.map(String.init) ?? "?"), not Syncthing's REST API"
            return .init(
                .reachable, verdict, "\(whereText) \(what)",
                fix: "Point SYNCTHING_API_URL (or STGUIADDRESS) at Syncthing's GUI address itself, not at a "
                    + "proxy or another service.")
        }
    }

    /// `syncthing.api-key`: whether Syncthing accepted the key (never shown).
    private static func apiKeyCheck(_ access: SyncthingAccess, _ status: StatusAnswer) -> DoctorCheck {
        let keyFrom =
            switch access.keySource {
            case .apiKeyVariable: "SYNCTHING_API_KEY"
            case .stGUIAPIKey: "STGUIAPIKEY"
            case .configFile: "config.xml"
            }
        let verdict = DoctorVerdict.apiKey(status)
        switch status {
        case .success:
            return .init(.apiKey, verdict, "accepted (the key comes from \(keyFrom); it is never shown)")
        case .failure(.unauthorized):
            return .init(
                .apiKey, verdict,
                "Syncthing rejected the API key from \(keyFrom) (HTTP 401, or 403 \"CSRF Error\"): the key is "
                    + "wrong; the address is right",
                fix: wrongKeyFix(access))
        case .failure(.hostCheck):
            return .init(
                .apiKey, verdict,
                "Syncthing answered 403 \"Host check error\": its GUI listens on a loopback address and then "
                    + "accepts only a loopback Host name, but this process reached it as \(describe(access.endpoint))",
                fix: "Reach Syncthing through a loopback address (e.g. SYNCTHING_API_URL=http://127.0.0.1:8384 "
                    + "from the same host or network namespace); from another container, make Syncthing's GUI "
                    + "listen on 0.0.0.0:8384 (the host check then does not apply) or enable "
                    + "insecureSkipHostcheck in Syncthing's Settings > Advanced > GUI.")
        case .failure:
            return .init(.apiKey, verdict, "not checked: Syncthing did not answer (see syncthing.reachable)")
        }
    }

    /// `syncthing.tls-pin`: whether the certificate Syncthing presents is the one in its config directory.
    private static func tlsPinCheck(_ access: SyncthingAccess, _ status: StatusAnswer, _ deps: Dependencies)
        -> DoctorCheck
    {
        guard access.endpoint.tls else {
            return .init(.tlsPin, .skip, "Syncthing's GUI uses plain HTTP here: nothing to pin")
        }
        guard let certificate = access.certificatePath else {
            return .init(
                .tlsPin, .fail,
                "Syncthing's GUI uses HTTPS, but its config directory is unknown, so https-cert.pem cannot be "
                    + "pinned", fix: tlsPinFix(access))
        }
        if deps.certificatePin(certificate) == nil {
            return .init(
                .tlsPin, .fail, "\(certificate) cannot be read or holds no PEM certificate",
                fix: "Run vaultsync-notify as the owner of Syncthing's config directory (see config.file); "
                    + "Syncthing writes https-cert.pem again at start when it is missing.")
        }
        switch DoctorVerdict.tlsPin(status) {
        case .skip:
            return .init(.tlsPin, .skip, "not checked: Syncthing did not answer (see syncthing.reachable)")
        case .fail:
            return .init(
                .tlsPin, .fail,
                "TLS failed: the certificate Syncthing presents does not match \(certificate), or the "
                    + "handshake failed", fix: tlsPinFix(access))
        case let verdict:
            return .init(.tlsPin, verdict, "the certificate Syncthing presents matches \(certificate)")
        }
    }

    /// `syncthing.device-id`: Syncthing's Device ID is readable and well-formed. Returns it when it is.
    private static func deviceIDCheck(_ status: StatusAnswer) -> (check: DoctorCheck, myID: String?) {
        let verdict = DoctorVerdict.deviceID(status)
        guard case .success(let st) = status, verdict != .skip else {
            return (.init(.deviceID, verdict, "not checked: Syncthing did not answer with the key accepted"), nil)
        }
        guard verdict == .pass else {
            let check = DoctorCheck(
                .deviceID, verdict, "Syncthing's /rest/system/status has no well-formed Device ID",
                fix: "Point SYNCTHING_API_URL at Syncthing itself, not at a proxy that rewrites its answers.")
            return (check, nil)
        }
        return (
            .init(.deviceID, verdict, "readable; short ID \(shortID(st.myID)) (the full ID is never shown)"), st.myID
        )
    }

    /// `syncthing.event-stream`: the filtered subscription answers. `client` is nil when the key was not accepted.
    private static func eventStreamCheck(_ client: SyncthingClient?) -> DoctorCheck {
        let answer = client?.eventHead()
        let verdict = DoctorVerdict.eventStream(answer)
        switch answer {
        case nil:
            return .init(.eventStream, verdict, "not checked: Syncthing did not answer with the key accepted")
        case .success(let head):
            return .init(
                .eventStream, verdict,
                "the filtered subscription (\(WakeRules.eventMask)) answered since=0&limit=1&timeout=0; newest "
                    + "event id \(head)")
        case .failure(let error):
            return .init(
                .eventStream, verdict, "GET /rest/events failed: \(describe(error))",
                fix: "Syncthing answers /rest/system/status but not /rest/events: check that no proxy "
                    + "between them blocks or buffers /rest/events, and that Syncthing is 1.19 or newer.")
        }
    }
}
