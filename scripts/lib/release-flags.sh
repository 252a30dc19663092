# shellcheck shell=bash
# The SwiftPM flags both release builds start from, so that amd64 and arm64 are built alike (sourced by
# scripts/build-release and scripts/build-release-arm64, after scripts/lib/ui.sh):
#   release_flags [--version-override]   sets the array `flags`: the vaultsync-notify product in the release
#                                        configuration, this project's modules with -Osize, or -O when
#                                        VAULTSYNC_SWIFT_OPT=speed (any other value dies), and with --version-override
#                                        -DVAULTSYNC_VERSION_OVERRIDE (scripts/release writes the version file first);
#                                        and without Swift's incremental LLVM code generation, for the same bytes
#                                        from any checkout (SECURITY.md, "Verifying a release"): it stores in each
#                                        object's .swift_modhash a hash of the LLVM module, which names the source by
#                                        its path and carries the C modules' signatures, made from their headers'
#                                        modification times (two clones' arm64 builds differed there, although
#                                        both compile at /src); without it the section is zeros
release_flags() {
    flags=(-c release --product vaultsync-notify)
    case "${VAULTSYNC_SWIFT_OPT:-size}" in
        size) flags+=(-Xswiftc -Osize) ;;
        speed) ;;
        *) die "VAULTSYNC_SWIFT_OPT is size or speed, not '${VAULTSYNC_SWIFT_OPT}'" ;;
    esac
    flags+=(-Xswiftc -Xfrontend -Xswiftc -disable-incremental-llvm-codegen)
    [ "${1:-}" != --version-override ] || flags+=(-Xswiftc -DVAULTSYNC_VERSION_OVERRIDE)
}
