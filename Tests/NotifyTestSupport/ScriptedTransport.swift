import NotifyCore
import NotifyRuntime
import Testing

/// A scripted `HTTPTransport`: each expected request is matched in order against a predicate and answered with a
/// canned result. An unexpected request fails the test; so does a leftover expectation (`verifyDone`).
final class ScriptedTransport: HTTPTransport {
    struct Expectation {
        var matches: @Sendable (HTTPRequest) -> Bool
        var answer: Result<HTTPResponse, TransportError>
    }
    private let state = ThreadSafe<(expected: [Expectation], seen: [HTTPRequest])>(([], []))

    func expect(
        _ answer: Result<HTTPResponse, TransportError>, where matches: @escaping @Sendable (HTTPRequest) -> Bool
    ) {
        state.withLock { $0.expected.append(Expectation(matches: matches, answer: answer)) }
    }

    /// Expects a request whose URL path ends with `path`, or whose query has `path` as one of its parameters
    /// (`folder=notes`).
    func expect(path: String, status: Int, body: String = "", headers: [String: String] = [:]) {
        expect(.success(HTTPResponse(status: status, headers: headers, body: Array(body.utf8)))) {
            let parts = $0.url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            let query = parts.count > 1 ? parts[1].split(separator: "&").map(String.init) : []
            return parts[0].hasSuffix(path) || query.contains(path)
        }
    }

    var seen: [HTTPRequest] { state.withLock { $0.seen } }

    func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        state.withLock { s in
            s.seen.append(request)
            guard !s.expected.isEmpty else {
                Issue.record("unexpected request to \(request.url)")
                return .failure(.connect)
            }
            let next = s.expected.removeFirst()
            guard next.matches(request) else {
                Issue.record("request to \(request.url) did not match the script")
                return .failure(.connect)
            }
            return next.answer
        }
    }

    func cancel() {}

    func verifyDone(sourceLocation: SourceLocation = #_sourceLocation) {
        let left = state.withLock { $0.expected.count }
        #expect(left == 0, "\(left) scripted requests never came", sourceLocation: sourceLocation)
    }
}
