import Testing

@testable import NotifyCore

@Suite("Syncthing answers classified")
struct SyncthingAnswerTests {
    @Test(
        "each status class maps to its result",
        arguments: [
            (200, Result<[UInt8], SyncthingError>.success(Array("[]".utf8))), (201, .failure(.status(201))),
            (204, .failure(.status(204))), (100, .failure(.status(100))), (300, .failure(.redirect)),
            (301, .failure(.redirect)), (307, .failure(.redirect)), (399, .failure(.redirect)),
            (400, .failure(.status(400))), (401, .failure(.unauthorized)), (404, .failure(.notFound)),
            (405, .failure(.status(405))), (500, .failure(.status(500))), (503, .failure(.status(503))),
        ])
    func status(status: Int, expected: Result<[UInt8], SyncthingError>) {
        #expect(SyncthingAnswer.classify(status: status, body: Array("[]".utf8)) == expected)
    }

    @Test(
        "a 403 is a host check only when its body says so; any other 403 is a wrong API key",
        arguments: [
            ("Host check error\n", SyncthingError.hostCheck), ("Host check", .hostCheck),
            ("CSRF Error\n", .unauthorized), ("", .unauthorized), ("host check error\n", .unauthorized),
            (" Host check error", .unauthorized), ("Forbidden", .unauthorized),
            ("Host check error" + String(repeating: "x", count: 100), .hostCheck),
        ])
    func forbidden(body: String, expected: SyncthingError) {
        #expect(SyncthingAnswer.classify(status: 403, body: Array(body.utf8)) == .failure(expected))
    }

    @Test("a 200 hands back its body unread, whatever it holds")
    func bodyPassesThrough() {
        let body: [UInt8] = [0xFF, 0x00, 0x7B]
        #expect(SyncthingAnswer.classify(status: 200, body: body) == .success(body))
        #expect(SyncthingAnswer.classify(status: 200, body: []) == .success([]))
    }

    @Test(
        "a transport failure is the transport error",
        arguments: [TransportError.dns, .connect, .timeout, .tls, .bodyTooLarge, .truncated, .cancelled])
    func transport(error: TransportError) {
        #expect(SyncthingAnswer.classify(error) == .failure(.transport(error)))
    }
}

@Suite("Syncthing attempts: fail-over, stickiness, pin re-read")
struct SyncthingAttemptsTests {
    static let ok = Array(#"{"myID":"x"}"#.utf8)

    @Test(
        "the preferred address goes first, the others keep their order",
        arguments: [
            (1, 0, [0]), (2, 0, [0, 1]), (2, 1, [1, 0]), (3, 2, [2, 0, 1]), (3, 1, [1, 0, 2]),
            // An index out of range (the endpoint changed meanwhile) is ignored.
            (2, 2, [0, 1]), (2, 7, [0, 1]), (0, 0, []),
        ])
    func order(addresses: Int, preferred: Int, expected: [Int]) {
        #expect(SyncthingAttempts.order(addresses: addresses, preferred: preferred) == expected)
    }

    @Test(
        "only a DNS or connect failure tries the next address",
        arguments: [
            (TransportError.dns, true), (.connect, true), (.timeout, false), (.tls, false), (.bodyTooLarge, false),
            (.truncated, false), (.cancelled, false), (.other(curlCode: 56), false),
        ])
    func movesOn(error: TransportError, movesOn: Bool) {
        #expect(SyncthingAttempts.triesNextAddress(after: error) == movesOn)
        let next: SyncthingAttempts.Step =
            movesOn
            ? .send(address: 1) : error == .tls ? .rereadPin : .finished(.failure(.transport(error)), stayOn: nil)
        #expect(Self.steps(addresses: 2, preferred: 0, [.fail(error)]).last == next)
    }

    /// What the client feeds back after a step.
    enum Event {
        case answer(status: Int, body: [UInt8] = SyncthingAttemptsTests.ok)
        case fail(TransportError)
        case pinReread(changed: Bool, addresses: Int, preferred: Int)
    }

    /// Every step of one request, from the first, as `events` are fed back in order.
    static func steps(addresses: Int, preferred: Int, _ events: [Event]) -> [SyncthingAttempts.Step] {
        var attempts = SyncthingAttempts(addresses: addresses, preferred: preferred)
        var steps = [attempts.step]
        for event in events {
            switch event {
            case .answer(let status, let body): attempts.answered(status: status, body: body)
            case .fail(let error): attempts.failed(error)
            case .pinReread(let changed, let count, let preferred):
                attempts.pinReread(changed: changed, addresses: count, preferred: preferred)
            }
            steps.append(attempts.step)
        }
        return steps
    }

    @Test("an answer from the first address ends the request and stays on it")
    func firstAnswers() {
        #expect(
            Self.steps(addresses: 2, preferred: 0, [.answer(status: 200)]) == [
                .send(address: 0), .finished(.success(Self.ok), stayOn: 0),
            ])
    }

    @Test("a refused address fails over to the next, and the one that answered is the one to stay on")
    func failOver() {
        #expect(
            Self.steps(addresses: 3, preferred: 0, [.fail(.connect), .fail(.dns), .answer(status: 200)]) == [
                .send(address: 0), .send(address: 1), .send(address: 2), .finished(.success(Self.ok), stayOn: 2),
            ])
    }

    @Test("the next request starts at the address it stays on, and falls back to the others in order")
    func sticky() {
        #expect(
            Self.steps(addresses: 3, preferred: 2, [.fail(.connect), .fail(.connect), .answer(status: 200)]) == [
                .send(address: 2), .send(address: 0), .send(address: 1), .finished(.success(Self.ok), stayOn: 1),
            ])
    }

    @Test("any status ends the request at that address: an error answer is still the address that answered")
    func errorAnswerSticks() {
        let csrf = Array("CSRF Error\n".utf8)
        #expect(
            Self.steps(addresses: 2, preferred: 0, [.fail(.connect), .answer(status: 403, body: csrf)]).last
                == .finished(.failure(.unauthorized), stayOn: 1))
        #expect(
            Self.steps(addresses: 2, preferred: 0, [.answer(status: 307, body: [])]).last
                == .finished(.failure(.redirect), stayOn: 0))
    }

    @Test("every address refused: the last failure, and the preference kept")
    func allRefused() {
        #expect(
            Self.steps(addresses: 2, preferred: 1, [.fail(.connect), .fail(.dns)]) == [
                .send(address: 1), .send(address: 0), .finished(.failure(.transport(.dns)), stayOn: nil),
            ])
    }

    @Test("a timeout at the first address does not try the second")
    func timeoutStops() {
        #expect(
            Self.steps(addresses: 2, preferred: 0, [.fail(.timeout)]) == [
                .send(address: 0), .finished(.failure(.transport(.timeout)), stayOn: nil),
            ])
    }

    @Test("no address at all is a connect failure, with nothing sent")
    func noAddress() {
        #expect(
            Self.steps(addresses: 0, preferred: 0, []) == [.finished(.failure(.transport(.connect)), stayOn: nil)])
    }

    @Test("a TLS failure re-reads the pin; a changed pin retries from the address preferred now")
    func tlsChangedPin() {
        // Another request settled on address 1 meanwhile: the retry starts there.
        let events: [Event] = [
            .fail(.connect), .fail(.tls), .pinReread(changed: true, addresses: 2, preferred: 1), .answer(status: 200),
        ]
        #expect(
            Self.steps(addresses: 2, preferred: 0, events) == [
                .send(address: 0), .send(address: 1), .rereadPin, .send(address: 1),
                .finished(.success(Self.ok), stayOn: 1),
            ])
    }

    @Test("an unchanged pin keeps the TLS failure, with no retry")
    func tlsUnchangedPin() {
        let events: [Event] = [.fail(.tls), .pinReread(changed: false, addresses: 1, preferred: 0)]
        #expect(
            Self.steps(addresses: 1, preferred: 0, events) == [
                .send(address: 0), .rereadPin, .finished(.failure(.transport(.tls)), stayOn: nil),
            ])
    }

    @Test("the pin is re-read once: a second TLS failure after the retry is the result")
    func tlsOnce() {
        let events: [Event] = [.fail(.tls), .pinReread(changed: true, addresses: 1, preferred: 0), .fail(.tls)]
        #expect(
            Self.steps(addresses: 1, preferred: 0, events) == [
                .send(address: 0), .rereadPin, .send(address: 0), .finished(.failure(.transport(.tls)), stayOn: nil),
            ])
    }

    @Test("the retry after a pin re-read fails over like the first round")
    func retryFailsOver() {
        let events: [Event] = [
            .fail(.tls), .pinReread(changed: true, addresses: 2, preferred: 0), .fail(.connect), .fail(.connect),
        ]
        #expect(
            Self.steps(addresses: 2, preferred: 0, events) == [
                .send(address: 0), .rereadPin, .send(address: 0), .send(address: 1),
                .finished(.failure(.transport(.connect)), stayOn: nil),
            ])
        // The endpoint lost its addresses meanwhile.
        let emptied: [Event] = [.fail(.tls), .pinReread(changed: true, addresses: 0, preferred: 0)]
        #expect(
            Self.steps(addresses: 1, preferred: 0, emptied).last
                == .finished(.failure(.transport(.connect)), stayOn: nil))
    }
}
