#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A minimal detached thread on pthreads (FoundationEssentials has no Thread).
enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! Box
                box.body()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed")
        pthread_detach(thread)
    }
}
