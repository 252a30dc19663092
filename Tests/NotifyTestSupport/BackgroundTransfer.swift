import Dispatch
import Foundation
import NotifyCore
import NotifyRuntime

/// Runs one `perform` on a thread of its own, so the test thread can cancel it.
package final class BackgroundTransfer: Sendable {
    private let outcome = ThreadSafe<Result<HTTPResponse, TransportError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    package init(_ transport: some HTTPTransport, _ request: HTTPRequest) {
        Thread.detachNewThread { [self] in
            let result = transport.perform(request)
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// The transfer's result, or nil if it is still running after `timeout`.
    package func wait(timeout: Duration) -> Result<HTTPResponse, TransportError>? {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcome.withLock { $0 }
    }
}

extension HTTPResponse {
    package var text: String { String(decoding: body, as: UTF8.self) }
}
