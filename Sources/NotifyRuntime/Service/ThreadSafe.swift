#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a pthread mutex: the lock for state that several threads share, in the program and in its test
/// doubles.
///
/// Not `Synchronization.Mutex`: on Linux it locks with atomics and futex calls inside the uninstrumented standard
/// library, so ThreadSanitizer sees no ordering between two of its critical sections and reports a race whenever
/// two threads take it in turn (a four-thread `Mutex` counter is reported on every run). ThreadSanitizer
/// intercepts pthread mutexes, so scripts/tsan reports only real races.
package final class ThreadSafe<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: `value` is read and written only while `mutex` is held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    package init(_ value: consuming Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
