# shellcheck shell=bash
# One binary out of one Debian package of another suite, pinned and cached: what scripts/fetch-syncthing-trixie and
# scripts/fetch-docker-compose-sid share. Sourced; the caller sets `set -euo pipefail`.
#
# pinned_debian_binary ARG SUITE PACKAGE VERSION_ERE DEST CHECK PIN_HINT PATH_IN_DEB...
#   ARG          the caller's first argument: --cached only prints DEST when it is there, else fails (no root, no
#                network)
#   VERSION_ERE  the whole Debian version that is accepted (any other fails: the pin is changed deliberately)
#   DEST         where the binary is cached; DEST's directory also gets `debian-version`
#   CHECK        a command that, given a path, succeeds when that binary reports the pinned version
#   PIN_HINT     where the pin lives, for the line that says it no longer matches
#   PATH_IN_DEB  the first of these that is a regular file in the package is taken
# Prints DEST. When DEST is already there and CHECK accepts it, nothing else happens (no network).
# How: apt gets a sources list, lists directory and cache of its OWN for SUITE (scripts/lib/debian-apt.sh; the
# machine's apt configuration and package state are left alone) on the Debian mirror the machine already uses; the
# Release file is verified against the machine's Debian archive keyring and the .deb against the signed Packages
# hashes; only the binary is taken out of the package (dpkg-deb -x). Needs `say` and `die` (scripts/lib/ui.sh).
pinned_debian_binary() {
    local arg=$1 suite=$2 package=$3 version_ere=$4 dest=$5 check=$6 pin_hint=$7
    shift 7
    local cache available pinned deb bin="" candidate
    if "$check" "$dest"; then
        echo "$dest"
        return 0
    fi
    [ "$arg" != "--cached" ] || die "$dest is not there yet: run scripts/install-deps --test (as root)"
    cache=$(dirname "$(dirname "$dest")")
    [ "$(id -u)" -eq 0 ] || die "run as root (it writes $cache and runs apt-get)"

    # shellcheck source=scripts/lib/debian-apt.sh
    . "$(dirname "${BASH_SOURCE[0]}")/debian-apt.sh"
    local mirror
    mirror=$(debian_mirror) || die "found no Debian archive in /etc/apt/sources.list or /etc/apt/sources.list.d"
    private_apt_init "$cache/apt-$suite" "deb [signed-by=$debian_keyring] $mirror $suite main"
    local work=$private_apt_dir
    private_apt_update "$suite"

    available=$(apt-cache "${apt_opts[@]}" show "$package" 2>/dev/null | awk '/^Version: /{print $2}' | sort -u)
    pinned=$(grep -E "^($version_ere)\$" <<<"$available" | sort -V | tail -n1 || true)
    [ -n "$pinned" ] || die "$suite's $package is $(tr '\n' ' ' <<<"$available")- not the pinned version; update the pin
in $pin_hint deliberately"

    say "downloading $package $pinned"
    (cd "$work/download" && apt-get "${apt_opts[@]}" -q download "$package=$pinned" >/dev/null)
    deb=$(ls "$work"/download/"${package}"_*.deb)
    dpkg-deb -x "$deb" "$work/extract"
    for candidate in "$@"; do
        if [ -f "$work/extract/$candidate" ] && [ ! -L "$work/extract/$candidate" ]; then
            bin=$work/extract/$candidate
            break
        fi
    done
    [ -n "$bin" ] || die "no $* in $deb: $(dpkg-deb -c "$deb" | awk '{ print $NF }' | tr '\n' ' ')"
    mkdir -p "$(dirname "$dest")"
    install -m 0755 "$bin" "$dest.tmp"
    "$check" "$dest.tmp" || die "the binary in $package $pinned does not report the pinned version"
    mv "$dest.tmp" "$dest"
    echo "$pinned" >"$(dirname "$dest")/debian-version"
    rm -rf "$work"
    say "cached $package $pinned"
    echo "$dest"
}
