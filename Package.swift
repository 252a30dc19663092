// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vaultsync-notify",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vaultsync-notify", targets: ["vaultsync-notify"]),
        // libFuzzer driver over FuzzTargets; a fuzzing build needs `-DFUZZING` (scripts/fuzz, fuzz/README.md).
        .executable(name: "vaultsync-fuzz", targets: ["vaultsync-fuzz"]),
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
        .target(name: "NotifyCore", linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // I/O: libcurl, libxml2, Dispatch, signals.
        .target(name: "NotifyRuntime", dependencies: ["NotifyCore", "CCurl", "CLibXML2", "CCrypto"]),
        .executableTarget(name: "vaultsync-notify", dependencies: ["NotifyRuntime", "NotifyCore"]),
        // Foundation's JSONDecoder over the models, as they were read before JSONReader: the differential oracle of
        // the tests and the fuzz targets. Never a dependency of vaultsync-notify.
        .target(name: "JSONOracle", dependencies: ["NotifyRuntime", "NotifyCore"]),
        // Fuzz targets: each runs one input through a parser and checks its invariants (fuzz/README.md).
        .target(name: "FuzzTargets", dependencies: ["NotifyRuntime", "NotifyCore", "JSONOracle"]),
        .executableTarget(name: "vaultsync-fuzz", dependencies: ["FuzzTargets"]),
        .testTarget(
            name: "NotifyCoreTests", dependencies: ["NotifyCore", "JSONOracle"], resources: [.copy("Fixtures")]),
        .testTarget(
            name: "NotifyRuntimeTests",
            dependencies: ["NotifyRuntime", "NotifyCore", "JSONOracle"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["NotifyCore"]),
        .testTarget(name: "FuzzTargetTests", dependencies: ["FuzzTargets"]),
    ]
)
