/// The version shown by `--version`. Release builds (`scripts/release`) override it: they write
/// `ReleaseVersion.generated.swift` (`let releaseVersion = "…"`, git-ignored) next to this file and build with
/// `-Xswiftc -DVAULTSYNC_VERSION_OVERRIDE`; a plain `swift build` uses the package's own.
package enum Version {
    #if VAULTSYNC_VERSION_OVERRIDE
        package static let current = releaseVersion
    #else
        package static let current = "0.1.0"
    #endif
}
