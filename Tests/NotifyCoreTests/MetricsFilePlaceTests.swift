import Testing

@testable import NotifyCore

/// Which METRICS_FILE places are refused at start, and the line that names the fix.
@Suite("METRICS_FILE: a place the file can never be written is a configuration error")
struct MetricsFilePlaceTests {
    @Test(
        "the file system's facts and the verdict",
        arguments: [
            (MetricsFilePlace(directory: .exists, isDirectory: true), ConfigurationError.Problem?.some(.isADirectory)),
            (MetricsFilePlace(directory: .missing), .directoryMissing),
            (MetricsFilePlace(directory: .notADirectory), .directoryNotADirectory),
            (MetricsFilePlace(directory: .exists, creation: .denied), .directoryNotWritable),
            (MetricsFilePlace(directory: .exists, creation: .readOnlyFileSystem), .readOnlyFileSystem),
            (MetricsFilePlace(directory: .exists, creation: .succeeded), nil),
            // A full disk or a quota passes: the service warns and tries again, as for a write that fails later.
            (MetricsFilePlace(directory: .exists, creation: .failedOtherwise), nil),
        ])
    func verdict(place: MetricsFilePlace, problem: ConfigurationError.Problem?) {
        #expect(place.problem == problem)
    }

    @Test("each refusal names METRICS_FILE, what is wrong and the fix, never the path")
    func lines() {
        let directory = ConfigurationError(.metricsFile, .isADirectory)
        #expect(directory.message.hasPrefix("METRICS_FILE: names a directory, not a file; expected an absolute path"))
        #expect(directory.fix.contains("Add a file name ending in .prom to METRICS_FILE"))
        #expect(ConfigurationError(.metricsFile, .directoryMissing).fix.hasPrefix("Create METRICS_FILE's directory"))
        #expect(
            ConfigurationError(.metricsFile, .directoryNotWritable).fix.contains("write in METRICS_FILE's directory"))
        let readOnly = ConfigurationError(.metricsFile, .readOnlyFileSystem)
        #expect(
            readOnly.message == "METRICS_FILE: names a file on a file system that is read-only here; expected "
                + ConfigurationError.accepts(.metricsFile))
        #expect(readOnly.fix.contains("ReadWritePaths="))
        #expect(readOnly.fix.contains("systemctl edit vaultsync-notify"))
        #expect(readOnly.code == .configInvalid)
    }
}
