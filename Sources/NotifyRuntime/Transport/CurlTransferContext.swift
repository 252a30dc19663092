import CCurl
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one transfer collects. Touched only by the thread inside `perform` (curl runs the callbacks from within
/// `curl_multi_perform`), reached from C through an unretained opaque pointer that `perform` keeps alive.
final class TransferContext {
    let maxBodyBytes: Int
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var headerBytes = 0
    /// The blank line of the current response was seen; later lines before a new status line are trailers.
    var headersEnded = false
    var lastHeaderName: String?
    /// Set when a callback aborted the transfer because the body or the headers were too large.
    var tooLarge = false
    /// Set when it was the body (not the headers) that was too large: the status and headers are complete.
    var bodyOverflow = false
    var keepStatusOfOversizedBody = false
    /// `HTTPRequest.keepsHeaders`.
    var keepsHeaders = true

    init(maxBodyBytes: Int) { self.maxBodyBytes = maxBodyBytes }

    /// Returns false to abort the transfer.
    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= maxBodyBytes - body.count else {
            body.append(contentsOf: bytes.prefix(maxBodyBytes - body.count))
            tooLarge = true
            bodyOverflow = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Handles one header line as curl delivers it (status line, field, or the blank line). Returns false to abort.
    func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        guard headerBytes <= CurlTransport.maxHeaderBytes else {
            tooLarge = true
            return false
        }
        var line = bytes[...]
        while let last = line.last, last == 0x0D || last == 0x0A { line = line.dropLast() }
        if line.starts(with: "HTTP/".utf8) {
            // A new response (after a 1xx): only the final response's headers are kept.
            headers = [:]
            headersEnded = false
            lastHeaderName = nil
            return true
        }
        if line.isEmpty {
            headersEnded = true
            return true
        }
        if headersEnded { return true }
        if let first = line.first, first == 0x20 || first == 0x09 {
            // Obsolete line folding: continues the previous field's value.
            if let name = lastHeaderName, let previous = headers[name] {
                let more = Self.trimmed(line)
                headers[name] = previous.isEmpty ? more : previous + " " + more
            }
            return true
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return true }
        if !keepsHeaders {
            // Only the size limit needs a field then, and only when it refuses early.
            guard !keepStatusOfOversizedBody, Self.isContentLength(line[..<colon]) else { return true }
            if let length = Int(Self.trimmed(line[line.index(after: colon)...])), length > maxBodyBytes {
                tooLarge = true
                return false
            }
            return true
        }
        let name = CurlTransport.asciiLowercased(Self.trimmed(line[..<colon]))
        guard !name.isEmpty else { return true }
        let value = Self.trimmed(line[line.index(after: colon)...])
        headers[name] = value
        lastHeaderName = name
        if name == "content-length", let length = Int(value), length > maxBodyBytes, !keepStatusOfOversizedBody {
            // Refuse before the body arrives: no partial parse of an oversized answer.
            tooLarge = true
            return false
        }
        return true
    }

    /// Whether a field name (surrounding blanks allowed) is Content-Length, in any case.
    private static func isContentLength(_ name: Slice<UnsafeRawBufferPointer>) -> Bool {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let start = name.firstIndex(where: { !isSpace($0) }), let end = name.lastIndex(where: { !isSpace($0) })
        else { return false }
        let expected = "content-length".utf8
        guard name.distance(from: start, to: end) + 1 == expected.count else { return false }
        // ASCII letters lower-cased by setting bit 5; '-' (0x2D) already has it.
        return zip(name[start...end], expected).allSatisfy { $0 | 0x20 == $1 }
    }

    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }),
            let end = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[start...end], as: UTF8.self)
    }
}

/// CURLOPT_WRITEFUNCTION: returning anything but `size * count` makes curl stop with CURLE_WRITE_ERROR.
func curlWriteBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    deliverChunk(data, size, count, userdata) { $0.appendBody($1) }
}

/// CURLOPT_HEADERFUNCTION: called once per complete header line, including status lines and the blank line.
func curlWriteHeader(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    deliverChunk(data, size, count, userdata) { $0.appendHeaderLine($1) }
}

/// The common part of both callbacks: finds the transfer's context, guards `size * count` against overflow, and
/// returns what curl expects (the byte count to go on, 0 to abort) from `accept`'s verdict.
private func deliverChunk(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?,
    _ accept: (TransferContext, UnsafeRawBufferPointer) -> Bool
) -> Int {
    guard let userdata else { return 0 }
    let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
    let (total, overflow) = size.multipliedReportingOverflow(by: count)
    guard !overflow else {
        context.tooLarge = true
        return 0
    }
    guard total > 0, let data else { return total }
    return accept(context, UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
}
