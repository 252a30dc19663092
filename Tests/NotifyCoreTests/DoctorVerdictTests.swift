import NotifyCore
import Testing

private let myID = "27CDMTM-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQA"
private let status = SystemStatus(myID: myID, startTime: "2026-01-01T00:00:00Z")

/// What `GET /rest/system/status` comes to for an HTTP answer with status `code` and `body`, as the client
/// classifies it; a 200 stands for a well-formed status when its body is the word `status`, else for a malformed one.
private func answer(_ code: Int, body: String = "") -> DoctorVerdict.StatusAnswer {
    SyncthingAnswer.classify(status: code, body: Array(body.utf8)).flatMap { _ in
        code == 200 && body == "status" ? .success(status) : .failure(.malformed)
    }
}

@Suite("The doctor's verdict on each answer")
struct DoctorVerdictTests {
    @Test(
        "Syncthing's status answer: reachable, the key, the Device ID",
        arguments: [
            // answer, reachable, api-key, device-id
            (answer(200, body: "status"), DoctorCheck.Status.pass, DoctorCheck.Status.pass, DoctorCheck.Status.pass),
            (answer(200, body: "<html>"), .fail, .skip, .skip),
            (answer(401), .pass, .fail, .skip), (answer(403, body: "CSRF Error\n"), .pass, .fail, .skip),
            (answer(403, body: "Host check error\n"), .pass, .fail, .skip), (answer(307), .fail, .skip, .skip),
            (answer(404), .fail, .skip, .skip), (answer(500), .fail, .skip, .skip),
            (.failure(.transport(.connect)), .fail, .skip, .skip), (.failure(.transport(.tls)), .fail, .skip, .skip),
        ] as [(DoctorVerdict.StatusAnswer, DoctorCheck.Status, DoctorCheck.Status, DoctorCheck.Status)])
    func syncthingStatus(
        answer: DoctorVerdict.StatusAnswer, reachable: DoctorCheck.Status, apiKey: DoctorCheck.Status,
        deviceID: DoctorCheck.Status
    ) {
        #expect(DoctorVerdict.reachable(answer) == reachable)
        #expect(DoctorVerdict.apiKey(answer) == apiKey)
        #expect(DoctorVerdict.deviceID(answer) == deviceID)
    }

    @Test("a status with a malformed Device ID fails the Device ID check only")
    func malformedDeviceID() {
        let answer: DoctorVerdict.StatusAnswer = .success(SystemStatus(myID: "27CDMTM", startTime: "x"))
        #expect(DoctorVerdict.reachable(answer) == .pass && DoctorVerdict.apiKey(answer) == .pass)
        #expect(DoctorVerdict.deviceID(answer) == .fail)
    }

    @Test(
        "the TLS pin: a TLS failure fails it, another transport failure leaves it unchecked, any HTTP answer passes",
        arguments: [
            (DoctorVerdict.StatusAnswer.failure(.transport(.tls)), DoctorCheck.Status.fail),
            (.failure(.transport(.timeout)), .skip), (.failure(.transport(.connect)), .skip),
            (.failure(.unauthorized), .pass), (.failure(.redirect), .pass), (.failure(.malformed), .pass),
            (.success(status), .pass),
        ])
    func tlsPin(answer: DoctorVerdict.StatusAnswer, verdict: DoctorCheck.Status) {
        #expect(DoctorVerdict.tlsPin(answer) == verdict)
    }

    @Test("the address source warns only for config.xml's address under an override Syncthing reports")
    func addressSource() {
        #expect(DoctorVerdict.addressSource(fromConfigFile: true, overridden: true) == .warn)
        for (file, overridden) in [(true, false), (true, nil), (false, true), (false, false), (false, nil)]
            as [(Bool, Bool?)]
        {
            #expect(DoctorVerdict.addressSource(fromConfigFile: file, overridden: overridden) == .pass)
        }
    }

    @Test(
        "the relay's health answer: only a healthy relay passes",
        arguments: [
            (200, #"{"status":"ok","version":"1.3.2"}"#, DoctorCheck.Status.pass),
            (200, #"{"status":"degraded"}"#, .fail), (200, "", .fail), (404, "", .fail), (503, "", .fail),
            (301, "", .fail),
        ])
    func relayHealth(code: Int, body: String, verdict: DoctorCheck.Status) {
        let answer = RelayHealthAnswer.classify(status: code, body: Array(body.utf8))
        #expect(DoctorVerdict.relayHealth(answer.health) == verdict)
        #expect(DoctorVerdict.relayHealth(RelayHealthAnswer.transportFailure(.transportDNS).health) == .fail)
    }

    @Test(
        "the trigger's answer: taken or rate-limited passes, no subscription warns, the rest fails",
        arguments: [
            (202, DoctorCheck.Status.pass), (200, .pass), (204, .pass), (429, .pass), (400, .warn), (401, .warn),
            (402, .warn), (403, .warn), (404, .fail), (405, .fail), (301, .fail), (500, .fail), (503, .fail),
        ])
    func relayTrigger(code: Int, verdict: DoctorCheck.Status) {
        let outcome = RelayOutcome.classify(status: code, retryAfter: nil, wallClockNow: 0)
        #expect(DoctorVerdict.relayTrigger(outcome) == verdict)
        #expect(DoctorVerdict.relayTrigger(.transient(status: nil, error: .transportTimeout)) == .fail)
    }

    @Test(
        "the environment: any invalid variable fails it",
        arguments: [(0, DoctorCheck.Status.pass), (1, .fail), (2, .fail), (16, .fail)])
    func configEnvironment(problems: Int, verdict: DoctorCheck.Status) {
        #expect(DoctorVerdict.configEnvironment(problems: problems) == verdict)
    }

    @Test(
        "an invalid variable saying where Syncthing is or which key it takes leaves Syncthing unchecked; others do not",
        arguments: [
            ([], nil), ([.debounceSeconds, .metricsFile, .logLevel], nil), ([.relayURL], nil),
            ([.syncthingAPIURL], .syncthingAPIURL), ([.syncthingAPIKey], .syncthingAPIKey),
            ([.syncthingConfig], .syncthingConfig), ([.stGUIAddress], .stGUIAddress), ([.stGUIAPIKey], .stGUIAPIKey),
            ([.watchedFolders, .stGUIAPIKey, .syncthingAPIURL], .stGUIAPIKey),
        ] as [([ConfigVariable], ConfigVariable?)])
    func syncthingBlocked(invalid: [ConfigVariable], blocker: ConfigVariable?) {
        #expect(DoctorVerdict.syncthingBlocked(by: invalid) == blocker)
    }

    @Test(
        "the event stream: not asked is skipped, an answer passes, any failure fails",
        arguments: [
            (nil, DoctorCheck.Status.skip), (.success(0), .pass), (.success(4_812), .pass),
            (.failure(.transport(.timeout)), .fail), (.failure(.notFound), .fail), (.failure(.unauthorized), .fail),
            (.failure(.status(502)), .fail), (.failure(.malformed), .fail),
        ] as [(Result<Int, SyncthingError>?, DoctorCheck.Status)])
    func eventStream(head: Result<Int, SyncthingError>?, verdict: DoctorCheck.Status) {
        #expect(DoctorVerdict.eventStream(head) == verdict)
    }

    @Test(
        "config.xml: read passes; when needed anything else fails, when not a file not read warns and none is skipped",
        arguments: [
            // finding, needed, not needed
            (DoctorVerdict.ConfigFileFinding.read, DoctorCheck.Status.pass, DoctorCheck.Status.pass),
            (.readFailed, .fail, .warn), (.blocked, .fail, .warn), (.explicitPathWrong, .fail, .skip),
            (.notFound, .fail, .skip),
        ])
    func configFile(finding: DoctorVerdict.ConfigFileFinding, needed: DoctorCheck.Status, notNeeded: DoctorCheck.Status)
    {
        #expect(DoctorVerdict.configFile(finding, needed: true) == needed)
        #expect(DoctorVerdict.configFile(finding, needed: false) == notNeeded)
    }

    @Test(
        "the relay's CA certificates: something to verify against passes, nothing fails, http on loopback is skipped",
        arguments: [
            (DoctorVerdict.CABundleFinding.notNeeded, DoctorCheck.Status.skip), (.platformStore, .pass),
            (.found, .pass),
            (.unusable, .fail), (.notFound, .fail),
        ])
    func relayCABundle(finding: DoctorVerdict.CABundleFinding, verdict: DoctorCheck.Status) {
        #expect(DoctorVerdict.relayCABundle(finding) == verdict)
    }

    @Test("a peer list that could not be read warns")
    func peerListUnread() {
        #expect(DoctorVerdict.peerListUnread == .warn)
    }

    @Test(
        "connected peers: paused devices are not counted; only a connected unpaused device passes",
        arguments: [
            // remote, paused, connected (of the unpaused), case
            (0, 0, 0, DoctorVerdict.PeersConnected.noRemoteDevice), (1, 1, 0, .allPaused), (3, 3, 0, .allPaused),
            (1, 0, 0, .noneConnected), (2, 1, 0, .noneConnected), (1, 0, 1, .connected), (3, 2, 1, .connected),
            (5, 0, 2, .connected),
        ])
    func peersConnected(remote: Int, paused: Int, connected: Int, verdict: DoctorVerdict.PeersConnected) {
        let counts = DoctorVerdict.PeerCounts(remote: remote, paused: paused, connected: connected)
        #expect(DoctorVerdict.peersConnected(counts) == verdict)
        #expect(verdict.status == (verdict == .connected ? .pass : .warn))
    }

    @Test(
        "shared folders: nothing watched, then the connection state, then shared with a connected device passes",
        arguments: [
            // watched, shared with a connected device, shared pairs, a watched folder lists a paused device, case
            (0, 0, 0, false, DoctorVerdict.PeersSharedFolders.noneWatched), (0, nil, 0, true, .noneWatched),
            (0, 1, 1, false, .noneWatched), (2, nil, 0, false, .connectionsUnknown),
            (2, nil, 3, true, .connectionsUnknown),
            (2, 1, 2, false, .shared), (2, 2, 4, true, .shared), (2, 0, 0, true, .sharedWithPausedOnly),
            (2, 0, 1, true, .notShared), (2, 0, 0, false, .notShared), (1, 0, 3, false, .notShared),
        ] as [(Int, Int?, Int, Bool, DoctorVerdict.PeersSharedFolders)])
    func peersSharedFolders(
        watched: Int, shared: Int?, pairs: Int, listsPaused: Bool, verdict: DoctorVerdict.PeersSharedFolders
    ) {
        let sharing = DoctorVerdict.FolderSharing(
            watched: watched, sharedWithConnected: shared, sharedPairs: pairs, listsPausedDevice: listsPaused)
        #expect(DoctorVerdict.peersSharedFolders(sharing) == verdict)
        #expect(verdict.status == (verdict == .shared ? .pass : .warn))
    }
}
