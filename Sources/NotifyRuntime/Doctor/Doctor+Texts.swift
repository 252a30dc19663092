import NotifyCore

/// The texts the checks share: how an endpoint or an error reads, and the fixes that depend on where the address
/// and the key came from.
extension Doctor {
    /// Where Syncthing is reached: `http://127.0.0.1:8384`, `http://127.0.0.1:8384 then http://[::1]:8384`, or
    /// `unix socket /path (TLS)`.
    static func describe(_ endpoint: SyncthingEndpoint) -> String {
        if let socket = endpoint.unixSocketPath { return "unix socket \(socket)" + (endpoint.tls ? " (TLS)" : "") }
        return endpoint.baseURLs.joined(separator: " then ")
    }

    static func describe(_ error: TransportError) -> String {
        switch error {
        case .dns: "the host name does not resolve"
        case .connect: "connection refused (nothing listens there, or no route)"
        case .timeout: "no answer in time"
        case .tls: "the TLS handshake failed, or the certificate does not match the pin"
        case .bodyTooLarge: "the answer was larger than expected"
        case .truncated: "the answer was cut short"
        case .cancelled: "cancelled"
        case .other(let code): "the transfer failed (libcurl error \(code))"
        case .connectionGone: "the kept-alive connection was closed"
        }
    }

    static func describe(_ error: SyncthingError) -> String {
        switch error {
        case .transport(let t): describe(t)
        case .unauthorized: "the API key was rejected"
        case .hostCheck: "403 Host check error"
        case .redirect: "a redirect (HTTPS expected)"
        case .notFound: "HTTP 404"
        case .status(let s): "HTTP \(s)"
        case .malformed: "the answer was not the expected JSON"
        }
    }

    static func describe(_ code: ErrorCode?) -> String {
        switch code {
        case .transportDNS: describe(TransportError.dns)
        case .transportConnect: describe(TransportError.connect)
        case .transportTimeout: describe(TransportError.timeout)
        case .transportTLS: "the TLS handshake or certificate check failed"
        case .transportBodyTooLarge: describe(TransportError.bodyTooLarge)
        case .transportTruncated: describe(TransportError.truncated)
        case let code?: code.rawValue
        case nil: "no answer"
        }
    }

    static func unreachableFix(_ access: SyncthingAccess) -> String {
        switch access.source {
        case .configFile:
            "Start Syncthing, and check that \(access.configFilePath ?? "config.xml") belongs to the running "
                + "instance. If Syncthing runs in another container, set SYNCTHING_API_URL (e.g. "
                + "http://syncthing:8384) and make its GUI listen on 0.0.0.0:8384; if it runs with STGUIADDRESS or "
                + "--gui-address, give vaultsync-notify the same STGUIADDRESS."
        case .apiURLVariable:
            "Start Syncthing, or set SYNCTHING_API_URL to the address its GUI listens on (Syncthing's log says "
                + "\"GUI and API listening on …\")."
        case .stGUIAddress:
            "Start Syncthing, or set STGUIADDRESS to the same value Syncthing runs with (Syncthing's log says "
                + "\"GUI and API listening on …\")."
        }
    }

    static func redirectFix(_ access: SyncthingAccess) -> String {
        switch access.source {
        case .apiURLVariable: "Use https:// in SYNCTHING_API_URL."
        case .stGUIAddress: "Use an https:// address in STGUIADDRESS, the same as Syncthing's."
        case .configFile:
            "config.xml says TLS is off, but Syncthing serves HTTPS: point SYNCTHING_CONFIG at the running "
                + "instance's config.xml, or set SYNCTHING_API_URL=https://…"
        }
    }

    static func wrongKeyFix(_ access: SyncthingAccess) -> String {
        switch access.keySource {
        case .configFile:
            "The key in \(access.configFilePath ?? "config.xml") is not the running Syncthing's: point "
                + "SYNCTHING_CONFIG at the running instance's config.xml (`syncthing serve --paths` prints it), or set "
                + "SYNCTHING_API_KEY to the key in Syncthing's Settings > GUI > API Key."
        case .apiKeyVariable:
            "Set SYNCTHING_API_KEY to the key in Syncthing's Settings > GUI > API Key, or unset it to read "
                + "config.xml's key."
        case .stGUIAPIKey:
            "Give vaultsync-notify the same STGUIAPIKEY as Syncthing, or unset it here to read config.xml's key."
        }
    }

    static func tlsPinFix(_ access: SyncthingAccess) -> String {
        guard let certificate = access.certificatePath else {
            return "Set SYNCTHING_CONFIG to Syncthing's config directory (where https-cert.pem is), or mount that "
                + "directory into this container."
        }
        return "\(certificate) is not the certificate of the Syncthing at \(describe(access.endpoint)): point "
            + "SYNCTHING_CONFIG at the running instance's config directory; Syncthing also renews the certificate at "
            + "start within 30 days of expiry, so run --doctor again after a Syncthing restart."
    }
}
