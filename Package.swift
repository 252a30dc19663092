// swift-tools-version:6.0
import PackageDescription

// The shipped modules import neither _StringProcessing nor _Concurrency implicitly, so the release binary links
// none of _StringProcessing, _RegexParser and _Concurrency (docs/benchmarks.md, "Binary size"); substring search is
// NotifyCore's StringScan.swift, and the program uses Dispatch, not Swift concurrency. Dispatch still loads both
// modules, and their members stay visible to a module that imports Dispatch: scripts/release's link-map check is
// what catches a use that slips through.
let noStringProcessing: [SwiftSetting] = [
    .unsafeFlags([
        "-Xfrontend", "-disable-implicit-string-processing-module-import",
        "-Xfrontend", "-disable-implicit-concurrency-module-import",
    ])
]

// Planted defects (Sources/NotifyCore/Support/PlantedDefects.swift) exist in debug builds and in the simulator's own
// build (scripts/simulate), never in a release build of the service.
let plantable: [SwiftSetting] = [.define("VAULTSYNC_PLANTED_DEFECTS", .when(configuration: .debug))]

let package = Package(
    name: "vaultsync-notify",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vaultsync-notify", targets: ["vaultsync-notify"]),
        // libFuzzer driver over FuzzTargets; a fuzzing build needs `-DFUZZING` (scripts/fuzz, fuzz/README.md).
        .executable(name: "vaultsync-fuzz", targets: ["vaultsync-fuzz"]),
        // The deterministic simulator's command (scripts/simulate); never shipped.
        .executable(name: "vaultsync-simulate", targets: ["vaultsync-simulate"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]
        ),
        // Pure decision logic: no I/O, no clock reads.
        .target(
            name: "NotifyCore", swiftSettings: noStringProcessing + plantable,
            linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // I/O: libcurl, libxml2, Dispatch, signals.
        .target(
            name: "NotifyRuntime", dependencies: ["NotifyCore", "CCurl", "CLibXML2", "CCrypto"],
            swiftSettings: noStringProcessing + plantable),
        .executableTarget(
            name: "vaultsync-notify", dependencies: ["NotifyRuntime", "NotifyCore"],
            swiftSettings: noStringProcessing),
        // Foundation's JSONDecoder over the models, as they were read before JSONReader: the differential oracle of
        // the tests and the fuzz targets. Never a dependency of vaultsync-notify.
        .target(name: "JSONOracle", dependencies: ["NotifyCore"]),
        // Fuzz targets: each runs one input through a parser and checks its invariants (fuzz/README.md).
        .target(name: "FuzzTargets", dependencies: ["NotifyRuntime", "NotifyCore", "JSONOracle"]),
        .executableTarget(name: "vaultsync-fuzz", dependencies: ["FuzzTargets"]),
        // Counts the process's heap allocations by interposing glibc's malloc family (the decode benchmark only).
        .target(name: "CAllocCount", path: "bench/decode-bench/CAllocCount"),
        // The decode benchmark (bench/decode, docs/benchmarks.md); never shipped.
        .executableTarget(
            name: "vaultsync-decode-bench",
            dependencies: ["NotifyCore", "CAllocCount"],
            path: "bench/decode-bench/DecodeBench"
        ),
        // The unit suites' test host (NotifyCoreTests, NotifyRuntimeTests): the manual runtime, the real Service on
        // virtual time (as swift-nio ships NIOEmbedded) and every Swift double they use. The end-to-end suites run the
        // release binary and keep their process launchers with their harness; the simulator has its own world. Never
        // a dependency of vaultsync-notify.
        .target(
            name: "NotifyTestSupport", dependencies: ["NotifyRuntime", "NotifyCore"], path: "Tests/NotifyTestSupport"),
        // The deterministic simulator (docs/architecture.md, "The simulator"): the real Service in a simulated world of
        // Syncthing, the relay and the host's clocks, judged by a checker written from README's promises. Its command
        // is vaultsync-simulate (scripts/simulate). Never a dependency of vaultsync-notify.
        .target(
            name: "NotifySimulator", dependencies: ["NotifyRuntime", "NotifyCore"], path: "Tests/Simulator",
            swiftSettings: plantable),
        .executableTarget(
            name: "vaultsync-simulate", dependencies: ["NotifySimulator"], path: "Tests/SimulatorCLI",
            swiftSettings: plantable),
        .testTarget(
            name: "SimulatorTests", dependencies: ["NotifySimulator", "NotifyCore"], swiftSettings: plantable),
        .testTarget(
            name: "NotifyCoreTests", dependencies: ["NotifyCore", "JSONOracle", "NotifyTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "NotifyRuntimeTests",
            dependencies: ["NotifyRuntime", "NotifyCore", "NotifyTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["NotifyCore"]),
        .testTarget(name: "FuzzTargetTests", dependencies: ["FuzzTargets"]),
    ]
)
