#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func simLog(_ x: Double) -> Double { log(x) }
func simExp(_ x: Double) -> Double { exp(x) }

/// Whether `needle` occurs in `haystack` (`memmem`).
func memmemFound(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeRawBufferPointer) -> Bool {
    guard let h = haystack.baseAddress, let n = needle.baseAddress, needle.count > 0 else { return false }
    let first = Int32(n.load(as: UInt8.self))
    var offset = 0
    while offset + needle.count <= haystack.count, let hit = memchr(h + offset, first, haystack.count - offset) {
        let at = h.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        guard at + needle.count <= haystack.count else { return false }
        if memcmp(h + at, n, needle.count) == 0 { return true }
        offset = at + 1
    }
    return false
}
