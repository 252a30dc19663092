#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A minimal detached thread on pthreads, for the health check's time limit (FoundationEssentials has no `Thread`;
/// the name keeps clear of `Foundation.Thread` where both are visible).
enum DetachedThread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        // pthread_t is an integer in glibc and an optional pointer in Darwin's pthread_create; the start routine's
        // argument is optional in one and not in the other, and the optional binding below accepts both.
        #if canImport(Darwin)
            var thread: pthread_t? = nil
        #else
            var thread = pthread_t()
        #endif
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let argument: UnsafeMutableRawPointer? = raw
                let box = Unmanaged<AnyObject>.fromOpaque(argument!).takeRetainedValue() as! Box
                box.body()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed")
        #if canImport(Darwin)
            pthread_detach(thread!)
        #else
            pthread_detach(thread)
        #endif
    }
}
