import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shared by two threads without synchronisation, on purpose.
nonisolated(unsafe) private var racyCounter = 0

private func incrementRacily(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    for _ in 0..<1000 { racyCounter += 1 }
    return nil
}

/// A data race that ThreadSanitizer must report, so that `scripts/tsan --self-test` (run by fuzz/tests/run) proves
/// the sanitizer build and the check for its reports work. Runs only with VAULTSYNC_TSAN_SELFTEST=1.
@Suite struct ThreadSanitizerSelfTest {
    @Test(
        "two threads write one variable without a lock",
        .enabled(if: getenv("VAULTSYNC_TSAN_SELFTEST").map { String(cString: $0) == "1" } ?? false))
    func dataRace() {
        var threads: [pthread_t] = []
        for _ in 0..<2 {
            var thread = pthread_t()
            #expect(pthread_create(&thread, nil, incrementRacily, nil) == 0)
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
        #expect(racyCounter > 0)
    }
}
