import CLibXML2
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Permission bits as four octal digits, e.g. `0600`.
func octal(_ mode: UInt32) -> String {
    let digits = String(mode & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

/// Reads Syncthing's config.xml with libxml2, safely.
///
/// - Important: The parser never substitutes entities, never loads a DTD and never touches the network
///   (`XML_PARSE_NONET`, no `XML_PARSE_NOENT`, no `XML_PARSE_DTDLOAD`); its error output is silenced so that no
///   document excerpt (which could hold the API key) reaches stderr; the declared encoding is ignored
///   (`XML_PARSE_IGNORE_ENC`, parsed as UTF-8); and any document with a DOCTYPE or entity declaration is refused
///   before libxml2 sees it.
package enum SyncthingConfigFile {
    /// Largest config.xml accepted: 16 MiB. A real one is a few KiB plus about 1.5 KiB per folder and device.
    ///
    /// - Note: `XML_PARSE_HUGE` stays off (it would raise libxml2's nesting limit from 256 to 2048 levels of a
    ///   recursive parser), so libxml2 2.9 keeps its own 10 MB limits: a single text node over 10 MB, or some long
    ///   constructs past the 10 MB mark, fail as `.malformed(.notXML)` even under this bound.
    package static let maxBytes = 16 << 20

    /// Reads and parses the file at `path` (open, fstat, read; at most `maxBytes`).
    ///
    /// - Throws: `ConfigFileError.notFound`, `.unreadable`, `.notRegularFile`, `.tooLarge`, or those of `parse(_:)`.
    package static func load(path: String) throws(ConfigFileError) -> SyncthingGUIConfig {
        try parse(readBounded(path: path, limit: maxBytes))
    }

    /// Parses config.xml bytes and returns the top-level `<configuration><gui>` settings.
    ///
    /// Only the first `<gui>` child of the root is read, and only its `tls` and `enabled` attributes and its first
    /// direct `<address>` and `<apikey>` children (text and CDATA, trimmed). `<device><address>` and anything nested
    /// deeper are ignored. Booleans follow Go's `strconv.ParseBool`, as Syncthing's decoder does.
    ///
    /// - Throws: `.tooLarge` over `maxBytes`; `.malformed(.encoding)` for NUL bytes or a first character other than
    ///   `<`; `.malformed(.doctype)` for a DOCTYPE or entity declaration; `.malformed(.notXML)` when libxml2 fails;
    ///   `.malformed(.notSyncthingConfig)` for another root element; `.malformed(.invalidBoolean)`;
    ///   `.noGUIElement`.
    package static func parse(_ bytes: [UInt8]) throws(ConfigFileError) -> SyncthingGUIConfig {
        guard bytes.count <= maxBytes else { throw .tooLarge(limitBytes: maxBytes) }
        try precheck(bytes)

        xmlInitParser()
        vaultsync_xml_silence_errors()
        let options = Int32(
            bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                | XML_PARSE_IGNORE_ENC.rawValue)
        let parsed: xmlDocPtr? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                xmlReadMemory(chars.baseAddress, Int32(chars.count), nil, "UTF-8", options)
            }
        }
        guard let doc = parsed else { throw .malformed(.notXML) }
        defer { xmlFreeDoc(doc) }
        guard doc.pointee.intSubset == nil, doc.pointee.extSubset == nil else { throw .malformed(.doctype) }
        guard let root = xmlDocGetRootElement(doc), name(of: root) == "configuration" else {
            throw .malformed(.notSyncthingConfig)
        }
        guard let gui = firstChild(of: root, named: "gui") else { throw .noGUIElement }

        let tls = try attribute(gui, "tls").map { v throws(ConfigFileError) in try goBool(v) } ?? false
        let enabled = try attribute(gui, "enabled").map { v throws(ConfigFileError) in try goBool(v) } ?? true
        let address = firstChild(of: gui, named: "address").map { trim(text(of: $0)) }
        let apiKey = firstChild(of: gui, named: "apikey").map { trim(text(of: $0)) }.flatMap { $0.isEmpty ? nil : $0 }
        return SyncthingGUIConfig(address: address, apiKey: apiKey, tls: tls, enabled: enabled)
    }

    // MARK: - Pre-parse checks

    private static func precheck(_ bytes: [UInt8]) throws(ConfigFileError) {
        let (hasNUL, hasDeclaration) = bytes.withUnsafeBufferPointer { buffer -> (Bool, Bool) in
            guard let base = buffer.baseAddress else { return (false, false) }
            let doctype = Array("!DOCTYPE".utf8)
            let entity = Array("!ENTITY".utf8)
            var found = false
            var offset = 0
            // memchr to each '<', then compare what follows.
            while offset < buffer.count,
                let hit = memchr(base + offset, Int32(UInt8(ascii: "<")), buffer.count - offset)
            {
                let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
                let rest = buffer[index..<min(buffer.count, index + doctype.count)]
                if rest.starts(with: doctype) || rest.starts(with: entity) {
                    found = true
                    break
                }
                offset = index
            }
            return (memchr(base, 0, buffer.count) != nil, found)
        }
        guard !hasNUL else { throw .malformed(.encoding) }
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard start < bytes.count else { throw .malformed(.notXML) }
        guard bytes[start] == UInt8(ascii: "<") else { throw .malformed(.encoding) }
        if hasDeclaration { throw .malformed(.doctype) }
    }

    // MARK: - Tree helpers (no libxml2 allocation, so nothing to xmlFree)

    private static func name(of node: xmlNodePtr) -> String? {
        guard let name = node.pointee.name else { return nil }
        return String(cString: name)
    }

    private static func firstChild(of node: xmlNodePtr, named wanted: String) -> xmlNodePtr? {
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE, current.pointee.ns == nil, name(of: current) == wanted {
                return current
            }
            child = current.pointee.next
        }
        return nil
    }

    /// Concatenated text and CDATA of the direct children (Go's encoding/xml chardata of the element).
    private static func text(of node: xmlNodePtr) -> String {
        var bytes: [UInt8] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                let content = current.pointee.content
            {
                var pointer = content
                while pointer.pointee != 0 {
                    bytes.append(pointer.pointee)
                    pointer += 1
                }
            }
            child = current.pointee.next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func attribute(_ node: xmlNodePtr, _ wanted: String) -> String? {
        var attribute = node.pointee.properties
        while let current = attribute {
            if current.pointee.ns == nil, let name = current.pointee.name, String(cString: name) == wanted {
                var bytes: [UInt8] = []
                var child = current.pointee.children
                while let piece = child {
                    if piece.pointee.type == XML_TEXT_NODE, let content = piece.pointee.content {
                        var pointer = content
                        while pointer.pointee != 0 {
                            bytes.append(pointer.pointee)
                            pointer += 1
                        }
                    }
                    child = piece.pointee.next
                }
                return String(decoding: bytes, as: UTF8.self)
            }
            attribute = current.pointee.next
        }
        return nil
    }

    /// Go `strconv.ParseBool(strings.TrimSpace(v))`; an empty value is false.
    private static func goBool(_ value: String) throws(ConfigFileError) -> Bool {
        switch trim(value) {
        case "1", "t", "T", "TRUE", "true", "True": return true
        case "0", "f", "F", "FALSE", "false", "False", "": return false
        default: throw .malformed(.invalidBoolean)
        }
    }

    private static func trim(_ value: String) -> String {
        let scalars = value.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    // MARK: - Bounded read

    /// Reads at most `limit` bytes from the regular file at `path`.
    static func readBounded(path: String, limit: Int) throws(ConfigFileError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let error = errno
            if error == ENOENT || error == ENOTDIR { throw .notFound }
            let owner = FileOwner.nearest(path)
            throw .unreadable(
                permissions: owner?.permissions, ownerUID: owner?.uid, ownerGID: owner?.gid,
                directory: owner?.isDirectory ?? false)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .unreadable(permissions: nil, ownerUID: nil, ownerGID: nil)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notRegularFile }
        guard Int(info.st_size) <= limit else { throw .tooLarge(limitBytes: limit) }

        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count <= limit else { throw .tooLarge(limitBytes: limit) }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - bytes.count)))
            }
            let n = bytes.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + count, raw.count - count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .unreadable(
                    permissions: UInt32(info.st_mode) & 0o7777, ownerUID: UInt32(info.st_uid),
                    ownerGID: UInt32(info.st_gid))
            }
            if n == 0 { break }
            count += n
            if count > limit { throw .tooLarge(limitBytes: limit) }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}

/// Owner and permission bits of a path, or of its nearest ancestor that can be examined.
struct FileOwner: Equatable {
    var uid: UInt32
    var gid: UInt32
    var permissions: UInt32
    var isDirectory: Bool

    static func of(_ path: String) -> FileOwner? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileOwner(
            uid: UInt32(info.st_uid), gid: UInt32(info.st_gid), permissions: UInt32(info.st_mode) & 0o7777,
            isDirectory: (info.st_mode & S_IFMT) == S_IFDIR)
    }

    /// The path's own owner when it can be stat'ed; else that of the deepest ancestor directory that can.
    static func nearest(_ path: String) -> FileOwner? {
        var current = path
        while true {
            if let owner = of(current) { return owner }
            guard let slash = current.lastIndex(of: "/"), current != "/" else { return nil }
            current = slash == current.startIndex ? "/" : String(current[..<slash])
        }
    }
}
