# shellcheck shell=bash
# Sourced by every script that runs swift: puts the Swift toolchain on PATH when it is not there yet. `sudo` resets
# PATH to its secure_path, which holds no toolchain, and a service manager's or CI's bare environment may hold none
# either, so a script run that way must find it by itself.
#
# Where it looks: VAULTSYNC_SWIFT_BIN (a directory holding `swift`; only there when set), else PATH, the invoking
# user's swiftly (under sudo: SUDO_USER's home), then /opt/swift/usr/bin, /usr/share/swift/usr/bin and
# /usr/local/swift/usr/bin.
# Without one it stops with the places it looked and how to point at a toolchain; a script for which Swift is optional
# sets toolchain_optional=1 before sourcing and tests `command -v swift` itself.
find_swift_toolchain() {
    local dir home candidates=()
    if [ -n "${VAULTSYNC_SWIFT_BIN:-}" ]; then
        if [ -x "$VAULTSYNC_SWIFT_BIN/swift" ]; then
            export PATH="$VAULTSYNC_SWIFT_BIN:$PATH"
            return 0
        fi
        echo "error: VAULTSYNC_SWIFT_BIN=$VAULTSYNC_SWIFT_BIN holds no executable swift" >&2
        echo "fix: name the toolchain's bin directory (the one holding swift), or unset it to search" >&2
        return 1
    fi
    command -v swift >/dev/null 2>&1 && return 0
    home=${HOME:-/root}
    if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
        home=$(getent passwd "$SUDO_USER" | cut -d: -f6) || home=${HOME:-/root}
    fi
    candidates+=("$home/.local/share/swiftly/bin" /opt/swift/usr/bin /usr/share/swift/usr/bin /usr/local/swift/usr/bin)
    for dir in "${candidates[@]}"; do
        if [ -x "$dir/swift" ]; then
            export PATH="$dir:$PATH"
            return 0
        fi
    done
    {
        echo "error: no Swift toolchain: \`swift\` is not on PATH, nor in ${candidates[*]}"
        echo "fix: install Swift 6 (https://www.swift.org/install/linux/), or name its bin directory:"
        echo "     VAULTSYNC_SWIFT_BIN=/path/to/usr/bin $0 …  (under sudo: sudo VAULTSYNC_SWIFT_BIN=… $0)"
    } >&2
    return 1
}
if [ "${toolchain_optional:-0}" = 1 ]; then
    find_swift_toolchain 2>/dev/null || true
else
    find_swift_toolchain || exit 1
fi
