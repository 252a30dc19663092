#!/bin/sh
# vaultsync-notify installer: installs the VaultSync Cloud Relay helper next to Syncthing.
#
#   curl -fsSL https://vaultsync.eu/notify.sh | sh
#   curl -fsSL https://vaultsync.eu/notify.sh | sh -s -- --mode systemd --dry-run
#
# It finds Syncthing's config.xml (in the same order as the binary), runs the helper as the uid:gid that owns it,
# picks Docker or a binary-backed service (systemd, OpenRC, launchd) and says why, verifies every download against
# SHA256SUMS (and downloads nothing it has no entry for), runs the new binary's `--check-config` as that owner before
# it changes anything, and finishes with `vaultsync-notify --doctor` run as that owner. Re-running upgrades;
# --uninstall removes exactly what it installed (listed in /etc/vaultsync-notify/manifest) and never Syncthing or its
# config.
#
# Options (each has an environment twin; an option wins over its twin):
#   --dry-run            VAULTSYNC_NOTIFY_DRY_RUN=1     print the mode and why, and every action; change nothing
#   --uninstall          VAULTSYNC_NOTIFY_UNINSTALL=1   remove what this installer installed
#   --mode MODE          VAULTSYNC_NOTIFY_MODE          auto (default), docker, systemd, openrc, launchd or binary
#   --relay-url URL      RELAY_URL                      default: the installed value, else https://relay.vaultsync.eu
#   --config PATH        SYNCTHING_CONFIG               config.xml or its directory (default: searched)
#   --version X          VAULTSYNC_NOTIFY_VERSION       release to install (default: the latest)
#   --metrics-file PATH  METRICS_FILE                   keep Prometheus metrics in PATH (absolute; its directory must
#                                                       exist) for node_exporter's textfile collector; systemd: also
#                                                       a ReadWritePaths= drop-in for its directory; Docker: that
#                                                       directory mounted at the same path (default: the installed
#                                                       value, else no metrics)
#   -h, --help                                          print this text
#
# Other environment:
#   VAULTSYNC_NOTIFY_BASE_URL   where the releases are, https only (default
#                               https://github.com/vaultsync/vaultsync-notify/releases): files come from
#                               <base>/download/notify-v<X>/ (vaultsync-notify-<os>-<arch>, SHA256SUMS,
#                               vaultsync-notify.service, vaultsync-notify.openrc, eu.vaultsync.notify.plist); without
#                               --version, X is read once from where <base>/latest redirects (.../tag/notify-v<X>)
#   VAULTSYNC_NOTIFY_BINARY     a local release binary (offline installs); SHA256SUMS and the service files are
#                               taken from the same directory
#   VAULTSYNC_NOTIFY_SHA256SUMS a local SHA256SUMS (default: beside VAULTSYNC_NOTIFY_BINARY)
#   VAULTSYNC_NOTIFY_PACKAGING_DIR  a checkout's packaging/ directory to take the service files from
#   VAULTSYNC_NOTIFY_IMAGE      Docker image (default ghcr.io/vaultsync/vaultsync-notify); its tag is the release the
#                               binary would be (--version, else the latest, read as above), unless the name has its
#                               own tag or digest; the container runs from the repo digest of the pull when there is one
#   VAULTSYNC_NOTIFY_ROOT       prefix for every path the installer reads or writes: installed files, the config.xml
#                               search and the init-system detection (default empty = /; for tests and staging)
#   SYNCTHING_API_KEY, SYNCTHING_API_URL, STARTUP_ANNOUNCE, SYNCTHING_CONFIG_WAIT_SECONDS, DEBOUNCE_SECONDS,
#   DEBOUNCE_MAX_SECONDS, WATCHED_FOLDERS, STALE_RETRIGGER_SECONDS, RELAY_WINDOW_SECONDS, LOG_LEVEL, LOG_FORMAT,
#   SSL_CERT_FILE, SSL_CERT_DIR: when set, written to the service's environment file (never onto a command line);
#   when unset, an installed value is kept. SSL_CERT_FILE and SSL_CERT_DIR (the CA certificates, for hosts that ship
#   none) are not passed into the Docker container, which carries its own.
#
# systemd refuses a User= id without a passwd entry (a Docker volume owned by 1000 on a host without that user) and
# resolves Group= the same way, and so do OpenRC's supervise-daemon and checkpath: in systemd and OpenRC mode the
# installer then creates a system user (and group) vaultsync-notify with config.xml's uid (and gid), records it in
# the manifest and removes it on --uninstall.
#
# Exit status: 0 installed (or nothing to do) and the doctor passed; 1 an error (a configuration error found by
# --check-config included: nothing is changed then), or installed but the doctor found a failure; 64 usage error.
# Everything is in functions, one per step; the one command, on the last line, calls main: a truncated download
# runs nothing.

# ------------------------------------------------------------------------------------------------- helpers --
# say, warn, die and as_root have the shape of scripts/lib/ui.sh's, which this file cannot source: it is fetched
# and run alone.
say() { printf '%s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}
usage_error() {
    printf 'error: %s (see --help)\n' "$*" >&2
    exit 64
}
usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" 2>/dev/null || say "usage: notify.sh [--dry-run] [--uninstall] [--mode MODE] [--relay-url URL] [--config PATH] [--version X]"; }

# shq ARG...: the arguments as one shell-quoted line (for printing commands).
shq() {
    shq_out=""
    for shq_a in "$@"; do
        case $shq_a in
            '' | *[!A-Za-z0-9_./:=@%+,-]*)
                shq_a="'$(printf '%s' "$shq_a" | sed "s/'/'\\\\''/g")'"
                ;;
        esac
        shq_out="$shq_out${shq_out:+ }$shq_a"
    done
    printf '%s' "$shq_out"
}

# Privileges: only file changes and service-manager commands go through sudo or doas, and only when not root.
need_priv() {
    [ "$priv_ready" = 1 ] && return 0
    priv_ready=1
    [ "$self_uid" = 0 ] && return 0
    if command -v sudo >/dev/null 2>&1; then
        priv_tool=sudo
    elif command -v doas >/dev/null 2>&1; then
        priv_tool=doas
    else
        die "root is needed to install system files: run this as root, or install sudo or doas"
    fi
    say "using $priv_tool for the steps that need root"
}
# as_root CMD...: a change; printed instead of run on --dry-run.
as_root() {
    if [ "$dry_run" = 1 ]; then
        # To stderr, so that a caller's >/dev/null on the command's own output cannot hide it.
        say "  would run: $(shq "$@")" >&2
        return 0
    fi
    need_priv
    if [ -n "$priv_tool" ]; then "$priv_tool" "$@"; else "$@"; fi
}
# root_query CMD...: a read-only command that may need root (also run on --dry-run).
root_query() {
    if [ "$self_uid" = 0 ]; then
        "$@"
        return
    fi
    need_priv
    "$priv_tool" "$@"
}

# have_sha256: a SHA-256 tool exists; checked before any download, so nothing is fetched that cannot be verified.
have_sha256() {
    command -v sha256sum >/dev/null 2>&1 || command -v shasum >/dev/null 2>&1 ||
        die "neither sha256sum nor shasum is installed: nothing to verify a download with, so nothing is downloaded; nothing was changed"
}
sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        die "neither sha256sum nor shasum is installed: cannot verify the download"
    fi
}
# sums_lookup SUMS NAME: the expected hash for NAME in a SHA256SUMS file, or nothing.
sums_lookup() {
    awk -v n="$2" '{ f = $2; sub(/^\*/, "", f); sub(/^\.\//, "", f); if (f == n) { print tolower($1); exit } }' "$1"
}
# verify FILE NAME...: FILE must match the SHA256SUMS entry of the first NAME listed there.
verify() {
    verify_file=$1
    shift
    verify_expected=""
    for verify_name in "$@"; do
        verify_expected=$(sums_lookup "$sums" "$verify_name")
        [ -n "$verify_expected" ] && break
    done
    [ -n "$verify_expected" ] || die "SHA256SUMS has no entry for $1: refusing to install an unverified file; nothing was changed"
    verify_actual=$(sha256_of "$verify_file")
    if [ "$verify_actual" != "$verify_expected" ]; then
        die "SHA-256 mismatch for $verify_name (expected $verify_expected, got $verify_actual): the download is corrupt or was tampered with; nothing was changed"
    fi
    say "verified SHA-256 of $verify_name"
}
fetch() { # fetch URL FILE [WHAT A FAILURE MEANS]
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --proto '=https' --tlsv1.2 -o "$2" "$1" || die "download failed: $1${3:+ ($3)}; nothing was changed"
    elif command -v wget >/dev/null 2>&1; then
        # wget has no switch for what --proto =https does to curl's redirects (GNU wget's --https-only governs
        # recursive downloads only; BusyBox wget rejects it), so its headers (-S, on stderr, also with -q) name every
        # hop, and a Location with another scheme stops the install before the file is used.
        wget -q -S -O "$2" "$1" 2>"$tmp/wget.headers" || die "download failed: $1${3:+ ($3)}; nothing was changed"
        fetch_hop=$(awk '{ sub(/\r$/, "") } tolower($0) ~ /^ *location:/ { sub(/^ *[^:]*: */, ""); if ($0 ~ /^[A-Za-z][A-Za-z0-9+.-]*:/ && tolower($0) !~ /^https:/) { print; exit } }' "$tmp/wget.headers")
        [ -z "$fetch_hop" ] || die "download of $1 was redirected to $fetch_hop, which is not https; nothing was changed"
    else
        die "neither curl nor wget is installed: install one, or set VAULTSYNC_NOTIFY_BINARY to a downloaded release binary"
    fi
}
# latest_version: the X of the release <base>/latest redirects to (.../tag/notify-v<X>), asked once, so that every
# file of this run comes from that one release even when another is published meanwhile.
latest_version() {
    if command -v curl >/dev/null 2>&1; then
        latest_loc=$(curl -fsS --proto '=https' --tlsv1.2 -o /dev/null -w '%{redirect_url}' "$base_url/latest") ||
            die "could not reach $base_url/latest to find the latest release; nothing was changed"
    elif command -v wget >/dev/null 2>&1; then
        # The first Location header of the answer (wget prints the headers on stderr with -S).
        latest_loc=$(wget -S --spider "$base_url/latest" 2>&1 | sed -n 's/^ *[Ll]ocation: *//p' | head -n 1 | tr -d '\r' || true)
    elif [ "$mode" = docker ]; then
        die "neither curl nor wget is installed to find the latest release: install one, or name the release with --version; nothing was changed"
    else
        die "neither curl nor wget is installed: install one, or set VAULTSYNC_NOTIFY_BINARY to a downloaded release binary"
    fi
    latest_loc=${latest_loc%% *} # GNU wget's own log line adds " [following]"
    latest_loc=${latest_loc%%[?#]*}
    latest_loc=${latest_loc%/}
    latest_tag=${latest_loc##*/}
    case $latest_loc in
        */tag/notify-v?*) ;;
        *) die "$base_url/latest does not lead to a vaultsync-notify release (.../tag/notify-v<version>) but to '${latest_loc:-nowhere}'; choose a release with --version; nothing was changed" ;;
    esac
    case ${latest_tag#notify-v} in *[!0-9A-Za-z.+-]*) die "the latest release's tag '$latest_tag' is not notify-v<version>; nothing was changed" ;; esac
    printf '%s\n' "${latest_tag#notify-v}"
}
# resolve_release: sets release_version to --version, else to the latest release's; the binary modes and Docker
# mode's tag resolve it this one way.
resolve_release() {
    if [ -z "$want_version" ]; then
        release_version=$(latest_version) || exit 1
        say "latest release: notify-v$release_version"
    else
        release_version=$want_version
    fi
}
# Accounts: through NSS (getent) on this system; in a staging root (VAULTSYNC_NOTIFY_ROOT), its etc/passwd and
# etc/group, and the account tools get --prefix.
account_id() { # account_id passwd|group NAME-OR-ID: the numeric id, or nothing when there is no entry
    if [ -z "$R" ] && command -v getent >/dev/null 2>&1; then
        getent "$1" "$2" 2>/dev/null | head -n 1 | cut -d: -f3
    elif [ -f "$R/etc/$1" ]; then
        awk -F: -v k="$2" '$1 == k || $3 == k { print $3; exit }' "$R/etc/$1"
    fi
    return 0
}
# repo_digest IMAGE: the REPOSITORY@sha256:<hex> Docker recorded for IMAGE's own repository when it was pulled
# from a registry, or nothing (a locally built or loaded image has none). Another repository's digest of the same
# image is not taken: the container would then run under a name that was not asked for.
repo_digest() {
    rd_repo=${1%@*}
    case ${rd_repo##*/} in *:*) rd_repo=${rd_repo%:*} ;; esac
    # Docker shows Docker Hub names in their short form.
    case $rd_repo in
        docker.io/library/* | index.docker.io/library/*) rd_repo=${rd_repo#*/library/} ;;
        docker.io/* | index.docker.io/*) rd_repo=${rd_repo#*/} ;;
    esac
    run_docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$1" 2>/dev/null |
        awk -v p="$rd_repo@sha256:" 'index($0, p) == 1 && length($0) == length(p) + 64 && substr($0, length(p) + 1) !~ /[^0-9a-f]/ { print; exit }' || true
}
version_of() { # the version printed by "BINARY --version" (last word of its first line)
    "$@" --version 2>/dev/null | awk 'NR == 1 { print $NF }'
}

# Docker commands: directly when this user may use Docker, else through sudo/doas.
docker_change() { # a change; printed instead of run on --dry-run
    if [ "$dry_run" = 1 ]; then
        say "  would run: docker $(shq "$@")"
        return 0
    fi
    if [ "$docker_priv" = 1 ]; then as_root docker "$@"; else docker "$@"; fi
}
run_docker() { if [ "$docker_priv" = 1 ]; then root_query docker "$@"; else docker "$@"; fi; }

manifest_values() { printf '%s\n' "$old_manifest" | sed -n "s/^$1 //p"; }

env_dir() { # an absolute directory from a variable's value, "~/" expanded; relative values are ignored
    # shellcheck disable=SC2088 # a literal "~/" prefix, expanded here by hand like the binary does
    case $1 in
        '~/'*) [ -n "$home" ] && printf '%s\n' "$home/${1#??}" ;;
        /*) printf '%s\n' "$1" ;;
    esac
    return 0
}
candidates() {
    if [ -n "$config_arg" ]; then
        case $config_arg in /*) printf '%s\n' "$config_arg" ;; *) printf '%s\n' "$PWD/$config_arg" ;; esac
        return 0
    fi
    {
        env_dir "${STCONFDIR:-}"
        env_dir "${STHOMEDIR:-}"
        [ -n "${XDG_CONFIG_HOME:-}" ] && env_dir "$XDG_CONFIG_HOME" | sed 's|/*$|/syncthing|'
        [ -n "$home" ] && printf '%s\n' "$home/.config/syncthing"
        [ -n "${XDG_STATE_HOME:-}" ] && env_dir "$XDG_STATE_HOME" | sed 's|/*$|/syncthing|'
        [ -n "$home" ] && printf '%s\n' "$home/.local/state/syncthing"
        [ "$os" = darwin ] && [ -n "$home" ] && printf '%s\n' "$home/Library/Application Support/Syncthing"
        invoker=${SUDO_USER:-${DOAS_USER:-}}
        if [ "$self_uid" = 0 ] && [ -n "$invoker" ] && command -v getent >/dev/null 2>&1; then
            case $invoker in *[!A-Za-z0-9._-]*) ;; *)
                invoker_home=$(getent passwd "$invoker" | cut -d: -f6)
                case $invoker_home in /?*)
                    if [ "$invoker_home" != "$home" ]; then
                        printf '%s\n' "$invoker_home/.config/syncthing" "$invoker_home/.local/state/syncthing"
                        [ "$os" = darwin ] && printf '%s\n' "$invoker_home/Library/Application Support/Syncthing"
                    fi
                    ;;
                esac
                ;;
            esac
        fi
        printf '%s\n' /var/syncthing/config /config /var/packages/syncthing/var /volume1/@appdata/syncthing \
            /var/packages/syncthing/target/var /share/CACHEDEV1_DATA/.qpkg/Syncthing/.config/syncthing \
            /mnt/user/appdata/syncthing /mnt/user/appdata/syncthing/config \
            /mnt/.ix-apps/app_mounts/syncthing/config/config
    } | sed -e 's|//*|/|g' -e 's|\(.\)/$|\1|' -e 's|$|/config.xml|' -e 's|^//config.xml$|/config.xml|' | awk '!seen[$0]++'
}

# Each *_usable sets why_not to one line saying why the mode cannot be used here (for the mode report).
docker_usable() {
    if [ "$os" != linux ]; then
        why_not="not on macOS (a container cannot reach Syncthing on the Mac's loopback)"
        return 1
    fi
    if ! command -v docker >/dev/null 2>&1; then
        why_not="not installed (no docker command)"
        return 1
    fi
    if docker info >/dev/null 2>&1; then
        docker_priv=0
        return 0
    fi
    why_not="installed, but \`docker info\` failed"
    [ "$self_uid" = 0 ] && return 1
    command -v sudo >/dev/null 2>&1 || command -v doas >/dev/null 2>&1 || return 1
    if ! root_query docker info >/dev/null 2>&1; then
        why_not="installed, but \`docker info\` failed, also as root"
        return 1
    fi
    docker_priv=1
}
systemd_usable() {
    if [ "$os" != linux ]; then
        why_not="Linux only"
        return 1
    fi
    if [ ! -d "$R/run/systemd/system" ]; then
        why_not="not running as PID 1 (no /run/systemd/system)"
        return 1
    fi
    if ! command -v systemctl >/dev/null 2>&1; then
        why_not="running, but systemctl is not installed"
        return 1
    fi
}
openrc_usable() {
    if [ "$os" != linux ]; then
        why_not="Linux only"
        return 1
    fi
    if ! command -v rc-service >/dev/null 2>&1; then
        why_not="not installed (no rc-service)"
        return 1
    fi
    if [ ! -d "$R/run/openrc" ] && ! command -v openrc-run >/dev/null 2>&1; then
        why_not="rc-service is installed, but OpenRC is not running (no /run/openrc, no openrc-run)"
        return 1
    fi
}

old_env_value() { # values are KEY='v' in env, KEY=v in docker.env
    printf '%s\n' "$old_env" | sed -n -e "s/^$1='\\(.*\\)'\$/\\1/p" -e "t" -e "s/^$1=\\(.*\\)\$/\\1/p" | head -n 1
}
# value_ok NAME VALUE: the value has one form that every reader of the env files takes the same way: systemd's
# EnvironmentFile= (single quotes; before v241 it also took a backslash inside them as an escape), POSIX sh
# (OpenRC and the doctor source the file) and docker --env-file (no quotes at all, every character literal).
value_ok() {
    case $2 in
        *"$nl"* | *"$cr"*) die "the value of $1 contains a line break, which cannot be written to the environment file; nothing was changed" ;;
        *"'"*) die "the value of $1 contains a single quote, which cannot be written to the environment file; nothing was changed" ;;
        *\\*) die "the value of $1 contains a backslash, which systemd before v241 reads differently from sh; nothing was changed" ;;
    esac
}
xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }
# put SRC DEST MODE OWNER: install SRC as $R/DEST atomically (temporary name, then rename) when it differs.
put() {
    put_dest="$R$2"
    if [ -f "$put_dest" ]; then
        if [ -r "$put_dest" ]; then put_same=$(cmp -s "$1" "$put_dest" && echo 1 || echo 0); else put_same=$(root_query cmp -s "$1" "$put_dest" && echo 1 || echo 0); fi
    else
        put_same=0
    fi
    if [ "$put_same" = 1 ]; then
        say "unchanged: $2"
        as_root chmod "$3" "$put_dest"
        as_root chown "$4" "$put_dest"
        return 0
    fi
    if [ -f "$put_dest" ]; then say "replacing $2"; else say "installing $2"; fi
    as_root cp "$1" "$put_dest.vsn-new"
    as_root chmod "$3" "$put_dest.vsn-new"
    as_root chown "$4" "$put_dest.vsn-new"
    as_root mv -f "$put_dest.vsn-new" "$put_dest"
    changed=1
    return 0
}

# --------------------------------------------------------------------------------------------------- steps --
# Each step sets the variables the next ones read (sh has no other scope); main calls them in this order.

# Line breaks for patterns, and who runs this (only file changes and service-manager commands need root).
init_globals() {
    nl='
'
    cr=$(printf '\r')
    self_uid=$(id -u)
    priv_tool=""
    priv_ready=0
}

# Options and their environment twins; a usage error exits 64.
parse_args() {
    dry_run=${VAULTSYNC_NOTIFY_DRY_RUN:-0}
    uninstall=${VAULTSYNC_NOTIFY_UNINSTALL:-0}
    mode=${VAULTSYNC_NOTIFY_MODE:-auto}
    relay_url=${RELAY_URL:-}
    config_arg=${SYNCTHING_CONFIG:-}
    want_version=${VAULTSYNC_NOTIFY_VERSION:-}
    metrics_file=${METRICS_FILE:-}
    while [ $# -gt 0 ]; do
        case $1 in
            --dry-run) dry_run=1 ;;
            --uninstall) uninstall=1 ;;
            --mode | --relay-url | --config | --version | --metrics-file)
                [ $# -ge 2 ] || usage_error "$1 needs a value"
                case $1 in
                    --mode) mode=$2 ;;
                    --relay-url) relay_url=$2 ;;
                    --config) config_arg=$2 ;;
                    --version) want_version=$2 ;;
                    --metrics-file) metrics_file=$2 ;;
                esac
                shift
                ;;
            --mode=*) mode=${1#*=} ;;
            --relay-url=*) relay_url=${1#*=} ;;
            --config=*) config_arg=${1#*=} ;;
            --version=*) want_version=${1#*=} ;;
            --metrics-file=*) metrics_file=${1#*=} ;;
            -h | --help)
                usage
                exit 0
                ;;
            *) usage_error "unknown argument: $1" ;;
        esac
        shift
    done
    case $dry_run in 1 | true | yes) dry_run=1 ;; 0 | false | no | '') dry_run=0 ;; *) usage_error "VAULTSYNC_NOTIFY_DRY_RUN must be 1 or 0" ;; esac
    case $uninstall in 1 | true | yes) uninstall=1 ;; 0 | false | no | '') uninstall=0 ;; *) usage_error "VAULTSYNC_NOTIFY_UNINSTALL must be 1 or 0" ;; esac
    case $mode in auto | docker | systemd | openrc | launchd | binary) ;; *) usage_error "--mode must be auto, docker, systemd, openrc, launchd or binary, not '$mode'" ;; esac
    case $want_version in *[!0-9A-Za-z.+-]*) usage_error "--version takes a version like 1.2.3, not '$want_version'" ;; esac
    want_version=${want_version#v}
    # The service resolves nothing against a working directory, and neither could a unit's ReadWritePaths=.
    case $metrics_file in '' | /*) ;; *) usage_error "--metrics-file takes an absolute path, e.g. /var/lib/node_exporter/textfile/vaultsync-notify.prom, not '$metrics_file'" ;; esac

    R=${VAULTSYNC_NOTIFY_ROOT:-}
    R=${R%/}
    case $R in '' | /*) ;; *) usage_error "VAULTSYNC_NOTIFY_ROOT must be an absolute path" ;; esac
    base_url=${VAULTSYNC_NOTIFY_BASE_URL:-https://github.com/vaultsync/vaultsync-notify/releases}
    base_url=${base_url%/}
    case $base_url in https://?*) ;; *) usage_error "VAULTSYNC_NOTIFY_BASE_URL must start with https://, not '$base_url'" ;; esac
    image_repo=${VAULTSYNC_NOTIFY_IMAGE:-ghcr.io/vaultsync/vaultsync-notify}
}

set_paths() {
    # Installed paths (as the service sees them; written under $R).
    BIN=/usr/local/bin/vaultsync-notify
    ETC=/etc/vaultsync-notify
    ENVFILE=$ETC/env
    DOCKER_ENVFILE=$ETC/docker.env
    MANIFEST=$ETC/manifest
    UNIT=/etc/systemd/system/vaultsync-notify.service
    DROPIN=/etc/systemd/system/vaultsync-notify.service.d/installer-metrics.conf # ReadWritePaths= for --metrics-file
    INITD=/etc/init.d/vaultsync-notify
    PLIST=/Library/LaunchDaemons/eu.vaultsync.notify.plist
    LABEL=eu.vaultsync.notify
    CONTAINER=vaultsync-notify
    KNOWN_FILES="$BIN $ENVFILE $DOCKER_ENVFILE $UNIT $DROPIN $INITD $PLIST"
    ACCOUNT=vaultsync-notify # the system user/group created for a uid/gid without an entry (systemd mode)
    account_prefix=""
    [ -n "$R" ] && account_prefix="--prefix $R"
    ENV_KEYS="SYNCTHING_API_URL SYNCTHING_API_KEY STARTUP_ANNOUNCE SYNCTHING_CONFIG_WAIT_SECONDS DEBOUNCE_SECONDS DEBOUNCE_MAX_SECONDS WATCHED_FOLDERS STALE_RETRIGGER_SECONDS RELAY_WINDOW_SECONDS LOG_LEVEL LOG_FORMAT SSL_CERT_FILE SSL_CERT_DIR"
}

make_workdir() {
    [ "$dry_run" = 1 ] && say "dry run: nothing will be changed"

    tmp=$(mktemp -d "${TMPDIR:-/tmp}/vaultsync-notify.XXXXXX") || die "cannot create a temporary directory"
    check_dir=""
    trap 'rm -rf "$tmp" ${check_dir:+"$check_dir"}' EXIT
    trap 'exit 130' INT TERM
}

# The release asset for this machine: os and arch, or an error for what is not released.
detect_platform() {
    case $(uname -s) in
        Linux) os=linux ;;
        Darwin) os=darwin ;;
        *) die "unsupported operating system: $(uname -s) (vaultsync-notify runs on Linux and macOS)" ;;
    esac
    machine=$(uname -m)
    case $machine in
        x86_64 | amd64) arch=amd64 ;;
        aarch64 | arm64) arch=arm64 ;;
        *) die "unsupported architecture: $machine (vaultsync-notify is built for amd64 and arm64 only)" ;;
    esac
    if [ "$os" = darwin ] && [ "$arch" = amd64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
        arch=arm64 # an arm64 Mac running this shell under Rosetta
    fi
    if [ "$os" = darwin ] && [ "$arch" = amd64 ]; then
        die "unsupported: an Intel Mac; vaultsync-notify is released for Apple silicon (darwin-arm64) only"
    fi
    if [ "$os" = linux ]; then
        long_bit=$(getconf LONG_BIT 2>/dev/null || true)
        if [ -z "$long_bit" ]; then
            # No getconf: the ELF class of /bin/sh (byte 5: 1 = 32-bit, 2 = 64-bit).
            case $(od -An -tx1 -j4 -N1 /bin/sh 2>/dev/null | tr -d ' \n') in
                01) long_bit=32 ;;
                *) long_bit=64 ;;
            esac
        fi
        if [ "$long_bit" != 64 ]; then
            die "unsupported: a ${long_bit}-bit userland on a 64-bit ($machine) kernel; vaultsync-notify needs a 64-bit userland (e.g. a 64-bit Raspberry Pi OS)"
        fi
    fi
    say "platform: $os/$arch"

    docker_priv=0
}

read_manifest() {
    # Lines: "mode M", "version V", "dir PATH", "file PATH", "user NAME", "group NAME" (accounts it created); Docker:
    # "image I" (the name pulled, IMAGE:TAG), "pinned I@sha256:…" (what the container runs, when the pull gave a repo
    # digest) and "signature RUN-IMAGE UID:GID DIR" (what the container was started with).
    old_manifest=""
    if [ -f "$R$MANIFEST" ]; then
        if [ -r "$R$MANIFEST" ]; then old_manifest=$(cat "$R$MANIFEST"); else old_manifest=$(root_query cat "$R$MANIFEST"); fi
    fi
    old_mode=$(manifest_values mode)
    old_image=$(manifest_values image)
    old_pinned=$(manifest_values pinned)
    old_recorded_version=$(manifest_values version)
    case $old_mode in '' | docker | systemd | openrc | launchd | binary) ;; *) die "$R$MANIFEST names an unknown mode '$old_mode'" ;; esac
    for a in $(manifest_values user) $(manifest_values group); do
        [ "$a" = "$ACCOUNT" ] || die "$R$MANIFEST lists the account $a, which this installer never creates; stopping"
    done
}

# --uninstall: removes what the manifest lists, then exits.
run_uninstall() {
    if [ -z "$old_manifest" ]; then
        say "nothing to uninstall: $MANIFEST does not exist (this installer installed nothing here)"
        for f in $KNOWN_FILES; do [ -e "$R$f" ] && warn "$f exists but was not installed by this installer; left alone"; done
        exit 0
    fi
    say "uninstalling vaultsync-notify (installed as $old_mode); Syncthing and its config are left alone"
    case $old_mode in
        systemd)
            as_root systemctl disable --now vaultsync-notify.service || warn "systemctl could not stop the service"
            ;;
        openrc)
            as_root rc-service vaultsync-notify stop || warn "rc-service could not stop the service"
            as_root rc-update del vaultsync-notify default || true
            ;;
        launchd)
            as_root launchctl bootout "system/$LABEL" || warn "launchctl could not stop the service"
            ;;
        docker)
            docker info >/dev/null 2>&1 || docker_priv=1
            docker_change rm -f "$CONTAINER" >/dev/null || warn "could not remove the container $CONTAINER"
            # The digest reference first: removing it alone leaves an image its tag still names, and the tag's
            # removal then deletes it.
            if [ -n "$old_pinned" ]; then docker_change rmi "$old_pinned" >/dev/null || warn "could not remove the image $old_pinned (still used?)"; fi
            if [ -n "$old_image" ]; then docker_change rmi "$old_image" >/dev/null || warn "could not remove the image $old_image (still used?)"; fi
            ;;
    esac
    for f in $(manifest_values file); do
        case " $KNOWN_FILES " in *" $f "*) ;; *) die "$MANIFEST lists $f, which this installer never installs; stopping" ;; esac
        if [ -e "$R$f" ]; then
            say "removing $f"
            as_root rm -f "$R$f"
        fi
    done
    as_root rm -f "$R$MANIFEST"
    # The account, only when this installer created it (the manifest says so) and only by its one name.
    for kind in user group; do
        for a in $(manifest_values "$kind"); do
            if [ "$kind" = user ]; then db=passwd; else db=group; fi
            [ -n "$(account_id "$db" "$a")" ] || continue
            say "removing the system $kind $a (created by this installer)"
            # $account_prefix is split on purpose: empty, or --prefix and a path without spaces.
            # shellcheck disable=SC2086
            as_root "${kind}del" $account_prefix "$a" || warn "could not remove the system $kind $a"
        done
    done
    # Directories this installer created, newest first, only when empty.
    for d in $(manifest_values dir | sed -n '1!G;h;$p'); do
        case $d in /*) ;; *) continue ;; esac
        if [ -d "$R$d" ] && [ -z "$(ls -A "$R$d" 2>/dev/null)" ]; then as_root rmdir "$R$d"; fi
    done
    [ "$old_mode" = systemd ] && { as_root systemctl daemon-reload || true; }
    say "uninstalled."
    exit 0
}

find_config() {
    # The binary's order (Sources/NotifyCore/Config/ConfigSearchOrder.swift): SYNCTHING_CONFIG alone when set; else
    # STCONFDIR, STHOMEDIR, $XDG_CONFIG_HOME/syncthing, ~/.config/syncthing, $XDG_STATE_HOME/syncthing,
    # ~/.local/state/syncthing, (macOS) ~/Library/Application Support/Syncthing, the container and NAS paths.
    # One addition: run through sudo/doas as root, the invoking user's home is searched right after root's.
    # Tests/NotifyRuntimeTests/InstallerConfigOrderTests.swift runs this search against the binary's.
    home=${HOME:-}
    case $home in /*) ;; *) home="" ;; esac
    config=""
    candidate_list=$(candidates)
    while IFS= read -r c; do
        [ -n "$c" ] || continue
        p=$c
        [ -d "$R$p" ] && p="${p%/}/config.xml"
        if [ -f "$R$p" ]; then
            config=$p
            break
        fi
        pdir=${p%/*}
        if [ "$self_uid" != 0 ] && [ -d "$R$pdir" ] && [ ! -x "$R$pdir" ]; then
            say "$pdir exists but you cannot look inside; checking it as root"
            if root_query test -f "$R$p"; then
                config=$p
                break
            fi
        fi
    done <<EOF
$candidate_list
EOF
    if [ -z "$config" ]; then
        {
            say "error: no Syncthing config.xml found. Searched, in this order:"
            printf '%s\n' "$candidate_list" | sed 's/^/  /'
            say "Is Syncthing installed and has it run once? Point to it with --config PATH (config.xml or its directory)."
        } >&2
        exit 1
    fi
    case $config in *"$nl"* | *"'"*) die "the config.xml path contains a newline or a single quote; move it or use SYNCTHING_API_URL/SYNCTHING_API_KEY" ;; esac
    config_dir=${config%/*}
    [ -n "$config_dir" ] || config_dir=/
    stat_fmt="-c"
    [ "$os" = darwin ] && stat_fmt="-f"
    owner=$(stat "$stat_fmt" '%u:%g' "$R$config" 2>/dev/null || root_query stat "$stat_fmt" '%u:%g' "$R$config")
    case $owner in [0-9]*:[0-9]*) ;; *) die "cannot read the owner of $config" ;; esac
    owner_uid=${owner%%:*}
    owner_gid=${owner#*:}
    case $owner_uid$owner_gid in *[!0-9]*) die "cannot read the owner of $config (got '$owner')" ;; esac
    say "found Syncthing config: $config (owner uid:gid $owner)"
    if [ "$owner_uid" = 0 ]; then
        warn "config.xml is owned by root, so vaultsync-notify will run as root. Syncthing should run as an unprivileged user; after changing that, re-run this installer."
    fi
}

# Auto-detection (or --mode), refused where it cannot work; prints the mode and why.
choose_mode() {
    why_not=""
    requested_mode=$mode
    mode_why=""
    rejected=""
    if [ "$mode" = auto ]; then
        if [ -n "$old_mode" ]; then
            mode=$old_mode
            mode_why="already installed as $old_mode: upgrading it"
            if [ "$mode" = docker ] && ! docker_usable; then die "installed as docker, but Docker is not usable now: $why_not"; fi
        elif [ "$os" = darwin ]; then
            mode=launchd
            mode_why="macOS: a launchd daemon"
        else
            # The first usable of docker, systemd, openrc; else the binary alone. Each one passed over gets its reason.
            for try_mode in docker systemd openrc; do
                usable=0
                case $try_mode in
                    docker) docker_usable && usable=1 ;;
                    systemd) systemd_usable && usable=1 ;;
                    openrc) openrc_usable && usable=1 ;;
                esac
                if [ "$usable" = 1 ]; then
                    mode=$try_mode
                    break
                fi
                rejected="$rejected  $try_mode: not used: $why_not$nl"
            done
            case $mode in
                docker)
                    mode_why="Docker is usable: \`docker info\` answers"
                    [ "$docker_priv" = 1 ] && mode_why="$mode_why as root"
                    ;;
                systemd) mode_why="systemd is running as PID 1 and systemctl is installed" ;;
                openrc) mode_why="OpenRC is running and rc-service is installed" ;;
                auto)
                    mode=binary
                    mode_why="no usable Docker, systemd or OpenRC: the binary alone, nothing will be started"
                    ;;
            esac
        fi
    else
        mode_why="--mode $mode"
    fi
    case $os:$mode in
        darwin:docker) die "--mode docker is not supported on macOS (a container cannot reach Syncthing on the Mac's loopback); use launchd" ;;
        darwin:systemd | darwin:openrc) die "--mode $mode is for Linux; on macOS use launchd or binary" ;;
        linux:launchd) die "--mode launchd is for macOS; on Linux use docker, systemd, openrc or binary" ;;
    esac
    if [ "$requested_mode" = docker ] && [ -z "$old_mode" ]; then docker_usable || die "--mode docker: Docker is not usable: $why_not"; fi
    if [ "$requested_mode" = systemd ] && ! systemd_usable; then warn "systemd: $why_not; installing the unit anyway (--mode systemd)"; fi
    if [ -n "$old_mode" ] && [ "$old_mode" != "$mode" ]; then
        die "vaultsync-notify is already installed as $old_mode; two flavours at once would send every wake-up twice. Run with --uninstall first, then install with --mode $mode (nothing was changed)"
    fi
    say "mode: $mode ($mode_why)"
    if [ -n "$rejected" ]; then printf '%s' "$rejected"; fi
}

mode_settings() {
    # What differs between the modes, set once for the chosen one:
    #   mode_files                 what it installs (and the manifest lists)
    #   pkg_rel, pkg_asset         its service file in packaging/ and as a release asset
    #   svc_path, svc_mode         where that file is installed, and its mode; svc_secret_mode when the file carries
    #                              the API key (the launchd plist holds the environment itself)
    #   env_path, env_mode, env_owner  its environment file: readable by the config owner's group (the doctor reads
    #                              it as that owner); Docker's is read by the docker CLI as root only
    #   env_skip                   variables never written to that file
    #   logs                       where to read its logs
    # What it does (start, stop, render its service file) is in one `case $mode` each, further down.
    pkg_rel="" pkg_asset="" svc_path="" svc_mode="" svc_secret_mode=""
    env_path=$ENVFILE env_mode=0640 env_owner="0:$owner_gid" env_skip=""
    case $mode in
        systemd)
            mode_files="$BIN $ENVFILE $UNIT"
            pkg_rel=systemd/vaultsync-notify.service pkg_asset=vaultsync-notify.service
            svc_path=$UNIT svc_mode=0644 svc_secret_mode=0644
            logs="journalctl -u vaultsync-notify -f"
            ;;
        openrc)
            mode_files="$BIN $ENVFILE $INITD"
            pkg_rel=openrc/vaultsync-notify pkg_asset=vaultsync-notify.openrc
            svc_path=$INITD svc_mode=0755 svc_secret_mode=0755
            logs="rc-service vaultsync-notify status (logs: /var/log/messages or your syslog)"
            ;;
        launchd)
            mode_files="$BIN $ENVFILE $PLIST"
            pkg_rel=launchd/eu.vaultsync.notify.plist pkg_asset=eu.vaultsync.notify.plist
            svc_path=$PLIST svc_mode=0644 svc_secret_mode=0600
            logs="sudo launchctl print system/$LABEL"
            ;;
        binary)
            mode_files="$BIN $ENVFILE"
            logs=""
            ;;
        docker)
            mode_files="$DOCKER_ENVFILE"
            env_path=$DOCKER_ENVFILE env_mode=0600 env_owner=0:0
            # The image carries its own CA bundle; a host path would not exist inside the container.
            env_skip="SSL_CERT_FILE SSL_CERT_DIR"
            logs="docker logs -f $CONTAINER"
            ;;
    esac
}

refuse_foreign() {
    # A refusal to overwrite anything this installer did not install.
    old_files=" $(manifest_values file | tr '\n' ' ') "
    foreign=""
    for f in $KNOWN_FILES; do
        if [ -e "$R$f" ]; then
            case $old_files in *" $f "*) ;; *) foreign="$foreign $f" ;; esac
        fi
    done
    if [ -n "$foreign" ]; then
        die "already present but not installed by this installer:$foreign. Another installation would run twice; remove it (or move it away) and re-run. Nothing was changed."
    fi
    if [ "$mode" != docker ] && [ -z "$old_mode" ] && command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        if [ -n "$(docker ps -aq --filter "name=^/${CONTAINER}\$" 2>/dev/null)" ]; then
            die "a Docker container named $CONTAINER already exists; two flavours at once would send every wake-up twice. Remove it (docker rm -f $CONTAINER) and re-run. Nothing was changed."
        fi
    fi
}

# The release binary (downloaded and verified, or local) or the Docker image; the version check.
get_helper() {
    old_version=""
    new_version=""
    if [ "$mode" = docker ]; then
        pull_image
    else
        get_binary
    fi
    if [ -n "$want_version" ] && [ -n "$new_version" ] && [ "$new_version" != "$want_version" ]; then
        die "asked for version $want_version, but the release reports $new_version; nothing was changed"
    fi
    if [ -n "${release_version:-}" ] && [ "$new_version" != "$release_version" ]; then
        if [ "$mode" = docker ]; then die "the image $image holds vaultsync-notify ${new_version:-unknown}, not $release_version; nothing was changed"; fi
        die "the release notify-v$release_version holds vaultsync-notify ${new_version:-unknown}; nothing was changed"
    fi
    if [ -z "$old_version" ] && [ -z "$old_mode" ]; then
        say "version: ${new_version:-unknown} (new install)"
    elif [ "$old_version" = "$new_version" ]; then
        say "version: ${new_version:-unknown} (same as installed)"
    else
        say "version: ${old_version:-unknown} → ${new_version:-unknown}"
    fi
}

pull_image() {
    # The tag is the release the binary modes would install (--version, else <base>/latest, asked once), so that
    # the manifest records the exact version and a re-run compares versions, not "latest". A name that carries
    # its own tag or digest is taken as it is.
    case ${image_repo##*/} in
        *[:@]*) image=$image_repo ;;
        *)
            resolve_release
            image="$image_repo:$release_version"
            ;;
    esac
    old_version=$old_recorded_version
    if [ "$dry_run" = 1 ]; then
        say "  would run: docker pull $image"
    else
        say "pulling $image"
        docker_change pull "$image" >/dev/null || die "docker pull $image failed; nothing was changed"
    fi
    # The container (and the configuration check) run from the repo digest of what was pulled: a tag can be
    # moved, a digest names these bytes. Without one (a local image) the tag is all there is.
    run_image=$image
    new_image_id=""
    if run_docker image inspect "$image" >/dev/null 2>&1; then
        new_image_id=$(run_docker image inspect -f '{{.Id}}' "$image")
        pinned=$(repo_digest "$image")
        if [ -n "$pinned" ]; then
            run_image=$pinned
            say "image: $pinned (pinned by its repo digest)"
        else
            say "image: $image has no repo digest (not pulled from a registry): the container runs from the tag"
        fi
        if [ "$dry_run" = 0 ]; then
            new_version=$(run_docker run --rm "$run_image" --version 2>/dev/null | awk 'NR == 1 { print $NF }')
            [ -n "$new_version" ] || die "$run_image did not report its version (docker run … --version failed); nothing was changed"
        fi
    elif [ "$dry_run" = 1 ]; then
        say "  would run the container from the repo digest the pull gives (NAME@sha256:…), or from the tag where there is none"
    fi
    # A dry run starts no container, not even to read the image's version: the tag's is shown.
    if [ "$dry_run" = 1 ] && [ -z "$new_version" ]; then new_version=${release_version:-}; fi
}

get_binary() {
    asset="vaultsync-notify-$os-$arch"
    # Service files from a checkout's packaging/ (or VAULTSYNC_NOTIFY_PACKAGING_DIR), else from the release.
    pkg_dir=${VAULTSYNC_NOTIFY_PACKAGING_DIR:-}
    if [ -z "$pkg_dir" ]; then
        case $0 in */notify.sh) [ -f "${0%/*}/../packaging/systemd/vaultsync-notify.service" ] && pkg_dir="${0%/*}/../packaging" ;; esac
    fi
    if [ -n "${VAULTSYNC_NOTIFY_BINARY:-}" ]; then
        [ -f "$VAULTSYNC_NOTIFY_BINARY" ] || die "VAULTSYNC_NOTIFY_BINARY=$VAULTSYNC_NOTIFY_BINARY does not exist"
        src_dir=$(dirname "$VAULTSYNC_NOTIFY_BINARY")
        sums=${VAULTSYNC_NOTIFY_SHA256SUMS:-$src_dir/SHA256SUMS}
        [ -f "$sums" ] || die "no SHA256SUMS beside $VAULTSYNC_NOTIFY_BINARY (or set VAULTSYNC_NOTIFY_SHA256SUMS): refusing to install an unverified binary; nothing was changed"
        say "using the local binary $VAULTSYNC_NOTIFY_BINARY"
        cp "$VAULTSYNC_NOTIFY_BINARY" "$tmp/vaultsync-notify"
        verify "$tmp/vaultsync-notify" "$asset" "$(basename "$VAULTSYNC_NOTIFY_BINARY")"
        if [ -n "$pkg_rel" ] && [ -z "$pkg_dir" ]; then
            [ -f "$src_dir/$pkg_asset" ] || die "no $pkg_asset beside $VAULTSYNC_NOTIFY_BINARY (or set VAULTSYNC_NOTIFY_PACKAGING_DIR to a checkout's packaging/)"
            cp "$src_dir/$pkg_asset" "$tmp/service"
            verify "$tmp/service" "$pkg_asset"
        fi
    else
        have_sha256
        resolve_release
        release_url="$base_url/download/notify-v$release_version"
        # SHA256SUMS first: a file it has no entry for is never downloaded (there is nothing to verify it against).
        # Every release has one, so its absence means there is no release notify-v<X> (a mistyped --version).
        fetch "$release_url/SHA256SUMS" "$tmp/SHA256SUMS" \
            "is there a release notify-v$release_version? the releases are listed at $base_url"
        sums=$tmp/SHA256SUMS
        needed=$asset
        if [ -n "$pkg_rel" ] && [ -z "$pkg_dir" ]; then needed="$needed $pkg_asset"; fi
        for needed_asset in $needed; do
            [ -n "$(sums_lookup "$sums" "$needed_asset")" ] ||
                die "SHA256SUMS of $release_url has no entry for $needed_asset: nothing to verify it against, so it is not downloaded; nothing was changed"
        done
        say "downloading $asset from $release_url"
        fetch "$release_url/$asset" "$tmp/vaultsync-notify"
        verify "$tmp/vaultsync-notify" "$asset"
        if [ -n "$pkg_rel" ] && [ -z "$pkg_dir" ]; then
            fetch "$release_url/$pkg_asset" "$tmp/service"
            verify "$tmp/service" "$pkg_asset"
        fi
    fi
    if [ -n "$pkg_rel" ] && [ -n "$pkg_dir" ]; then
        [ -f "$pkg_dir/$pkg_rel" ] || die "$pkg_dir/$pkg_rel does not exist"
        cp "$pkg_dir/$pkg_rel" "$tmp/service"
        say "service file: $pkg_dir/$pkg_rel"
    fi
    chmod 0755 "$tmp/vaultsync-notify"
    new_version=$(version_of "$tmp/vaultsync-notify")
    [ -n "$new_version" ] || die "the downloaded binary does not run here ($asset: --version failed; if $tmp is on a noexec mount, set TMPDIR to another directory); nothing was changed"
    if [ -x "$R$BIN" ]; then old_version=$(version_of "$R$BIN" || true); fi
}

# The environment file, in $tmp: options and environment, else the installed values, else defaults.
write_env() {
    relay_source="--relay-url/RELAY_URL"
    old_env=""
    if [ -f "$R$env_path" ]; then
        if [ -r "$R$env_path" ]; then old_env=$(cat "$R$env_path"); else old_env=$(root_query cat "$R$env_path"); fi
    fi
    if [ -z "$relay_url" ]; then
        relay_url=$(old_env_value RELAY_URL)
        relay_source="the installed environment file"
    fi
    if [ -z "$relay_url" ]; then
        relay_url=https://relay.vaultsync.eu
        relay_source="default"
    fi
    value_ok RELAY_URL "$relay_url"
    value_ok SYNCTHING_CONFIG "$config"
    case $relay_url in https://?* | http://?*) ;; *) die "RELAY_URL must start with https:// (or http:// for a loopback relay), not '$relay_url'" ;; esac
    say "relay: $relay_url ($relay_source)"
    env_lines="RELAY_URL=$relay_url${nl}SYNCTHING_CONFIG=$config"
    has_secret=0
    for k in $ENV_KEYS; do
        case " $env_skip " in *" $k "*) continue ;; esac
        eval "v=\${$k:-}"
        [ -n "$v" ] || v=$(old_env_value "$k")
        [ -n "$v" ] || continue
        value_ok "$k" "$v"
        case $k in SYNCTHING_API_KEY) has_secret=1 ;; esac
        env_lines="$env_lines$nl$k=$v"
    done
    plan_metrics
    printf '%s\n' "$env_lines" >"$tmp/env.plain"
    if [ "$mode" = docker ]; then
        {
            say "# vaultsync-notify (Docker): written by the installer; docker --env-file takes values literally."
            cat "$tmp/env.plain"
        } >"$tmp/env"
    else
        {
            say "# vaultsync-notify environment: written by the installer; re-run it to change values."
            say "# Single-quoted values, read the same way by systemd EnvironmentFile= and by POSIX sh."
            sed "s/^\\([A-Z_]*\\)=\\(.*\\)\$/\\1='\\2'/" "$tmp/env.plain"
        } >"$tmp/env"
    fi
}

# METRICS_FILE (--metrics-file, else the installed value): into the environment, and where the service must be let
# write it: a ReadWritePaths= drop-in for its directory under systemd (the unit's ProtectSystem=strict makes the rest
# read-only), the directory mounted at the same path in Docker. The binary's --check-config then tries a write there
# as the owner. A directory that does not exist is refused here: creating one is the operator's choice of owner.
plan_metrics() {
    [ -n "$metrics_file" ] || metrics_file=$(old_env_value METRICS_FILE)
    metrics_dir=""
    metrics_mount=""
    rm -f "$tmp/dropin"
    [ -n "$metrics_file" ] || return 0
    value_ok METRICS_FILE "$metrics_file"
    case $metrics_file in
        /*) ;;
        *) die "METRICS_FILE in the installed environment file is not an absolute path ('$metrics_file'); re-run with --metrics-file PATH. Nothing was changed" ;;
    esac
    # It goes into a ReadWritePaths= line and a docker -v argument, which split on spaces and colons.
    case $metrics_file in *[!A-Za-z0-9/._+@-]*) die "--metrics-file: the path may hold letters, digits and / . _ + @ - only, not '$metrics_file'; nothing was changed" ;; esac
    metrics_dir=${metrics_file%/*}
    [ -n "$metrics_dir" ] || metrics_dir=/
    if [ -d "$R$metrics_file" ]; then
        die "--metrics-file names a directory ($metrics_file); give a file in it, e.g. ${metrics_file%/}/vaultsync-notify.prom. Nothing was changed"
    fi
    # Its directory becomes writable for the service (ReadWritePaths=, a Docker mount): never a system directory,
    # which would undo the unit's ProtectSystem=strict for all of it.
    case ${metrics_dir%/} in
        "" | /etc | /usr | /boot | /efi | /bin | /sbin | /lib | /lib32 | /lib64 | /libx32 | /dev | /proc | /sys | /run | /var | /home | /root | /opt | /srv | /mnt | /media | /tmp)
            die "--metrics-file: its directory, ${metrics_dir}, would be made writable for the service as a whole; put the file in a directory of its own, e.g. /var/lib/node_exporter/textfile/vaultsync-notify.prom. Nothing was changed" ;;
    esac
    if [ ! -d "$R$metrics_dir" ]; then
        die "the directory of --metrics-file, $metrics_dir, does not exist; create it, writable by uid:gid $owner_uid:$owner_gid and readable by node_exporter (install -d -o $owner_uid -g $owner_gid -m 0755 $metrics_dir), and re-run. Nothing was changed"
    fi
    say "metrics: $metrics_file (node_exporter's textfile collector reads *.prom in $metrics_dir)"
    env_lines="$env_lines${nl}METRICS_FILE=$metrics_file"
    case $mode in
        systemd)
            {
                say "# vaultsync-notify: written by the installer for METRICS_FILE; removed by --uninstall."
                say "# The unit's ProtectSystem=strict makes the file system read-only but for what is named here."
                say "[Service]"
                say "ReadWritePaths=$metrics_dir"
            } >"$tmp/dropin"
            mode_files="$mode_files $DROPIN"
            ;;
        docker) metrics_mount="$metrics_dir:$metrics_dir" ;;
    esac
}

# The service file, in $tmp, for the config owner.
render_service() {
    case $mode in
        systemd | openrc)
            sed -e "s/@USER@/$owner_uid/g" -e "s/@GROUP@/$owner_gid/g" "$tmp/service" >"$tmp/service.out"
            if [ "$mode" = systemd ]; then
                { grep -q "^User=$owner_uid\$" "$tmp/service.out" && grep -q "^Group=$owner_gid\$" "$tmp/service.out"; } ||
                    die "the systemd unit has no User=@USER@ and Group=@GROUP@ lines to set; nothing was changed"
                grep -q "^EnvironmentFile=-\{0,1\}$ENVFILE\$" "$tmp/service.out" ||
                    die "the systemd unit does not read EnvironmentFile=$ENVFILE; nothing was changed"
            else
                grep -q "$owner_uid:$owner_gid" "$tmp/service.out" ||
                    die "the OpenRC script has no command_user=\"@USER@:@GROUP@\" to set; nothing was changed"
                grep -q "$ENVFILE" "$tmp/service.out" ||
                    die "the OpenRC script does not read $ENVFILE; nothing was changed"
            fi
            ;;
        launchd)
            owner_name=$(id -un "$owner_uid" 2>/dev/null || true)
            [ -n "$owner_name" ] || die "uid $owner_uid (the owner of config.xml) has no user name, which launchd needs; nothing was changed"
            owner_primary_gid=$(id -g "$owner_name" 2>/dev/null || true)
            [ "$owner_primary_gid" = "$owner_gid" ] || warn "config.xml's group $owner_gid is not $owner_name's primary group; launchd runs it with the primary group"
            {
                printf '\t<key>UserName</key>\n\t<string>%s</string>\n' "$(printf '%s' "$owner_name" | xml_escape)"
                printf '\t<key>EnvironmentVariables</key>\n\t<dict>\n'
                while IFS= read -r line; do
                    printf '\t\t<key>%s</key>\n\t\t<string>%s</string>\n' "${line%%=*}" "$(printf '%s' "${line#*=}" | xml_escape)"
                done <"$tmp/env.plain"
                printf '\t</dict>\n'
            } >"$tmp/plist.insert"
            # Placeholders elsewhere in the plist (comments, the log file's owner) name the owner too.
            sed -e "s/@USER@/$owner_name/g" -e "s/@GROUP@/$owner_gid/g" "$tmp/service" >"$tmp/service.named" &&
                mv "$tmp/service.named" "$tmp/service"
            # Drops UserName, GroupName and EnvironmentVariables (one element per line, as plutil writes them)
            # and inserts ours before the top-level dict closes. Values travel in a file, not on a command line.
            awk -v insert="$tmp/plist.insert" '
                { line[NR] = $0 }
                END {
                    last = 0
                    for (i = NR; i >= 1; i--) if (line[i] ~ /<\/dict>/) { last = i; break }
                    skip = 0
                    for (i = 1; i <= NR; i++) {
                        l = line[i]
                        if (i == last) while ((getline x < insert) > 0) print x
                        if (skip == 2) { if (l ~ /<\/dict>/) skip = 0; continue }
                        if (skip == 1) { skip = (l ~ /<dict>/ && l !~ /<\/dict>/) ? 2 : 0; continue }
                        if (l ~ /<key>(UserName|GroupName|EnvironmentVariables)<\/key>/) {
                            rest = l; sub(/.*<\/key>/, "", rest)
                            if (rest ~ /<dict>/ && rest !~ /<\/dict>/) skip = 2
                            else if (rest ~ /[^ \t]/) skip = 0
                            else skip = 1
                            continue
                        }
                        print l
                    }
                    if (last == 0) exit 1
                }' "$tmp/service" >"$tmp/service.out" || die "the launchd plist has no top-level <dict>; nothing was changed"
            grep -q "<string>$LABEL</string>" "$tmp/service.out" || die "the launchd plist does not carry the label $LABEL; nothing was changed"
            ;;
    esac
}

choose_runner() {
    # As the config owner: directly when that is us; else setpriv (any uid, even one without a passwd entry, which
    # sudo may refuse), through sudo/doas when not root; else sudo -u '#uid'; else doas -u NAME.
    run_line="set -a; . $ENVFILE; set +a; exec $BIN"
    as_owner=""
    as_owner_shown=""
    if [ "$self_uid" != "$owner_uid" ]; then
        if command -v setpriv >/dev/null 2>&1 && setpriv --help 2>&1 | grep -q -- --reuid; then
            as_owner="setpriv --reuid $owner_uid --regid $owner_gid --clear-groups"
            if [ "$self_uid" != 0 ]; then
                need_priv
                as_owner="$priv_tool $as_owner"
            fi
        elif command -v sudo >/dev/null 2>&1; then
            as_owner="sudo -u #$owner_uid -g #$owner_gid"
            as_owner_shown="sudo -u '#$owner_uid' -g '#$owner_gid'"
        elif command -v doas >/dev/null 2>&1 && owner_name=$(id -un "$owner_uid" 2>/dev/null); then
            as_owner="doas -u $owner_name"
        else
            as_owner=none
            as_owner_shown="sudo -u '#$owner_uid' -g '#$owner_gid'"
        fi
        [ -n "$as_owner_shown" ] || as_owner_shown=$as_owner
    fi
}

check_config() {
    # The binary about to be installed judges the configuration by its own rules before anything here changes:
    # `vaultsync-notify --check-config` (no network call, no waiting; exit 0 fine, 78 a configuration error, 75
    # config.xml not there yet). It runs as the config owner, as the service will, with the service's environment:
    # the env file's variables, passed on stdin (never on a command line), and none of the others the binary reads.
    # In Docker mode it runs in the image, the way the container will; a dry run there pulls and starts nothing.
    # shellcheck disable=SC2016 # expanded by the inner shell
    check_script='unset RELAY_URL SYNCTHING_CONFIG METRICS_FILE STGUIAPIKEY STGUIADDRESS STCONFDIR STHOMEDIR XDG_CONFIG_HOME XDG_STATE_HOME '"$ENV_KEYS"'
set -a
eval "$(cat)"
set +a
exec "$1" --check-config'
    check_status=""
    check_runner=$as_owner
    if [ "$mode" = docker ]; then
        if [ "$dry_run" = 1 ]; then
            say "configuration check: not run (Docker mode: --check-config runs in the image, which a dry run neither pulls nor starts)"
        else
            check_status=0
            run_docker run --rm --user "$owner" --network none --read-only --env-file "$tmp/env" \
                -v "$config_dir:$config_dir:ro" ${metrics_mount:+-v} ${metrics_mount:+"$metrics_mount"} \
                "$run_image" --check-config >"$tmp/check.out" 2>"$tmp/check.err" || check_status=$?
        fi
    elif [ "$check_runner" = none ] && [ "$self_uid" != 0 ]; then
        say "configuration check: not run (cannot switch to uid:gid $owner, which it must run as)"
    else
        [ "$check_runner" = none ] && check_runner="" # root without a way to switch: root reads config.xml too
        # A directory the owner can enter: $tmp is private to us (it holds the env file).
        check_dir=$(mktemp -d "${TMPDIR:-/tmp}/vaultsync-notify-check.XXXXXX") || die "cannot create a temporary directory"
        chmod 0755 "$check_dir"
        cp "$tmp/vaultsync-notify" "$check_dir/vaultsync-notify"
        chmod 0755 "$check_dir/vaultsync-notify"
        check_status=0
        # $check_runner is split on purpose: a command and its words, none of them with spaces.
        # shellcheck disable=SC2086
        $check_runner sh -c "$check_script" sh "$check_dir/vaultsync-notify" <"$tmp/env" >"$tmp/check.out" 2>"$tmp/check.err" ||
            check_status=$?
    fi
    case $check_status in
        '') ;;
        0) say "configuration check: $(head -n 1 "$tmp/check.out")" ;;
        75)
            cat "$tmp/check.err" >&2
            warn "Syncthing's config.xml is not there yet; the service will wait/retry"
            ;;
        78)
            cat "$tmp/check.err" >&2
            die "vaultsync-notify --check-config found a configuration error (above); fix it and re-run. Nothing was changed"
            ;;
        *)
            cat "$tmp/check.err" >&2
            if [ "$mode" = docker ] && [ "$check_status" = 125 ]; then
                die "docker could not run $run_image for the configuration check (exit 125); nothing was changed"
            elif [ "$mode" != docker ] && { [ "$check_status" = 126 ] || [ "$check_status" = 127 ]; }; then
                die "could not run the new binary as uid:gid $owner for the configuration check (exit $check_status); if that user cannot read ${TMPDIR:-/tmp}, set TMPDIR to a directory it can read. Nothing was changed"
            fi
            die "vaultsync-notify ${new_version:-} does not know --check-config (exit $check_status): it is older than this installer; install a newer release (--version) or use the installer of that release. Nothing was changed"
            ;;
    esac
}

plan_account() {
    # systemd refuses a numeric User= without a passwd entry (status 217/USER, measured) and resolves Group= the same
    # way: e.g. a Docker volume owned by 1000 on a host without that user. OpenRC does too: supervise-daemon --user
    # and checkpath --owner take numbers but look them up ("user `1000' not found", "owner `1000:1000' not found",
    # measured with OpenRC 0.45.2). A system account then gets those ids, so that the service runs as config.xml's
    # owner with one line; the service file keeps the numbers. One created earlier stays recorded.
    add_group=0
    add_user=0
    kept_accounts=$(printf '%s\n' "$old_manifest" | grep -E '^(user|group) ' || true)
    case $mode in
        systemd) acct_needs="systemd needs one for User=/Group=" ;;
        openrc) acct_needs="OpenRC needs one for command_user (supervise-daemon --user, checkpath --owner)" ;;
        *) acct_needs="" ;;
    esac
    if [ -n "$acct_needs" ]; then
        [ -n "$(account_id group "$owner_gid")" ] || add_group=1
        [ -n "$(account_id passwd "$owner_uid")" ] || add_user=1
    fi
    if [ "$add_group" = 1 ] || [ "$add_user" = 1 ]; then
        nologin=/bin/false
        for n in /usr/sbin/nologin /sbin/nologin; do
            if [ -x "$R$n" ]; then
                nologin=$n
                break
            fi
        done
        group_cmd="groupadd --system --gid $owner_gid${account_prefix:+ $account_prefix} $ACCOUNT"
        user_cmd="useradd --system --uid $owner_uid --gid $owner_gid --no-create-home --home-dir / --shell $nologin${account_prefix:+ $account_prefix} $ACCOUNT"
        account_cmds=""
        [ "$add_group" = 1 ] && account_cmds=$group_cmd
        [ "$add_user" = 1 ] && account_cmds="${account_cmds:+$account_cmds && }$user_cmd"
        missing_ids=""
        [ "$add_user" = 1 ] && missing_ids="uid $owner_uid has no user"
        [ "$add_group" = 1 ] && missing_ids="${missing_ids:+$missing_ids and }gid $owner_gid has no group"
        taken=""
        if [ "$add_user" = 1 ] && [ -n "$(account_id passwd "$ACCOUNT")" ]; then taken="a user named $ACCOUNT already exists (uid $(account_id passwd "$ACCOUNT"))"; fi
        if [ "$add_group" = 1 ] && [ -n "$(account_id group "$ACCOUNT")" ]; then taken="${taken:+$taken; }a group named $ACCOUNT already exists (gid $(account_id group "$ACCOUNT"))"; fi
        if [ -n "$taken" ]; then
            die "$missing_ids ($acct_needs), and $taken. Create them under another name as root, then re-run: $(printf '%s' "$account_cmds" | sed "s/ $ACCOUNT\( \|\$\)/ NAME\1/g"). Nothing was changed"
        fi
        for t in groupadd useradd; do
            case $account_cmds in *"$t "*) command -v "$t" >/dev/null 2>&1 || die "$missing_ids ($acct_needs), and $t is not installed. Create them as root, then re-run: $account_cmds. Nothing was changed" ;; esac
        done
        say "$missing_ids: $acct_needs, so the system account $ACCOUNT is created for it (removed again by --uninstall)"
    fi
}

# The new manifest, in $tmp.
write_plan() {
    # Directories to create (recorded so that --uninstall removes them again), parents first.
    new_dirs=""
    for f in $mode_files $MANIFEST; do
        d=${f%/*}
        chain=""
        while [ -n "$d" ] && [ ! -d "$R$d" ]; do
            chain="$d$nl$chain"
            d=${d%/*}
        done
        for d in $chain; do
            case "$nl$new_dirs$nl" in *"$nl$d$nl"*) ;; *) new_dirs="$new_dirs${new_dirs:+$nl}$d" ;; esac
        done
    done
    {
        say "# vaultsync-notify: what the installer created; --uninstall removes exactly this (never Syncthing or its config)."
        say "mode $mode"
        [ -n "$new_version" ] && say "version $new_version"
        if [ "$mode" = docker ]; then
            say "image $image"
            if [ "$run_image" != "$image" ]; then say "pinned $run_image"; fi
            say "signature $run_image $owner $config_dir"
        fi
        manifest_values dir | sed 's/^/dir /'
        [ -n "$new_dirs" ] && printf '%s\n' "$new_dirs" | sed 's/^/dir /'
        for f in $mode_files; do say "file $f"; done
        [ -n "$kept_accounts" ] && printf '%s\n' "$kept_accounts"
        [ "$add_user" = 1 ] && say "user $ACCOUNT"
        [ "$add_group" = 1 ] && say "group $ACCOUNT"
    } | awk '!seen[$0]++' >"$tmp/manifest"
}

# Directories, the manifest, the account, the files; sets changed and service_changed.
install_files() {
    changed=0
    service_changed=0
    if [ -n "$new_dirs" ]; then
        for d in $new_dirs; do
            say "creating $d"
            as_root mkdir -m 0755 "$R$d"
        done
    fi
    put "$tmp/manifest" "$MANIFEST" 0644 0:0
    changed=0 # the manifest alone is no reason to restart
    # The account after the manifest that records it: a failure half-way leaves nothing --uninstall would miss.
    # $account_prefix is split on purpose: empty, or --prefix and a path without spaces.
    # shellcheck disable=SC2086
    if [ "$add_group" = 1 ]; then
        say "creating the system group $ACCOUNT (gid $owner_gid)"
        as_root groupadd --system --gid "$owner_gid" $account_prefix "$ACCOUNT" || die "groupadd failed; create the group yourself: $group_cmd"
    fi
    # shellcheck disable=SC2086
    if [ "$add_user" = 1 ]; then
        say "creating the system user $ACCOUNT (uid $owner_uid)"
        as_root useradd --system --uid "$owner_uid" --gid "$owner_gid" --no-create-home --home-dir / --shell "$nologin" \
            $account_prefix "$ACCOUNT" || die "useradd failed; create the user yourself: $user_cmd"
    fi
    if [ "$mode" != docker ]; then
        put "$tmp/vaultsync-notify" "$BIN" 0755 0:0
    fi
    put "$tmp/env" "$env_path" "$env_mode" "$env_owner"
    if [ -n "$svc_path" ]; then
        svc_changed_before=$changed
        changed=0
        [ "$has_secret" = 1 ] && svc_mode=$svc_secret_mode
        put "$tmp/service.out" "$svc_path" "$svc_mode" 0:0
        service_changed=$changed
        if [ "$svc_changed_before" = 1 ]; then changed=1; fi
    fi
    if [ -f "$tmp/dropin" ]; then
        dropin_changed_before=$changed
        changed=0
        put "$tmp/dropin" "$DROPIN" 0644 0:0
        if [ "$changed" = 1 ]; then service_changed=1; fi
        if [ "$dropin_changed_before" = 1 ]; then changed=1; fi
    fi
}

# Starts, restarts or leaves the service, as the mode needs.
start_service() {
    fresh=0
    [ -z "$old_mode" ] && fresh=1
    start_failed=0
    case $mode in
        systemd)
            if [ "$fresh" = 1 ]; then
                say "enabling and starting vaultsync-notify.service"
                as_root systemctl daemon-reload || start_failed=1
                as_root systemctl enable --now vaultsync-notify.service || start_failed=1
            elif [ "$changed" = 1 ]; then
                say "restarting vaultsync-notify.service"
                if [ "$service_changed" = 1 ]; then as_root systemctl daemon-reload || start_failed=1; fi
                as_root systemctl restart vaultsync-notify.service || start_failed=1
            else
                say "nothing changed: not restarting"
            fi
            ;;
        openrc)
            if [ "$fresh" = 1 ]; then
                say "adding vaultsync-notify to the default runlevel and starting it"
                as_root rc-update add vaultsync-notify default || start_failed=1
                as_root rc-service vaultsync-notify start || start_failed=1
            elif [ "$changed" = 1 ]; then
                say "restarting vaultsync-notify"
                as_root rc-service vaultsync-notify restart || start_failed=1
            else
                say "nothing changed: not restarting"
            fi
            ;;
        launchd)
            if [ "$fresh" = 1 ]; then
                say "loading $LABEL into launchd"
                as_root launchctl bootstrap system "$PLIST" || start_failed=1
            elif [ "$service_changed" = 1 ]; then
                say "reloading $LABEL (its plist changed)"
                as_root launchctl bootout "system/$LABEL" || true
                as_root launchctl bootstrap system "$PLIST" || start_failed=1
            elif [ "$changed" = 1 ]; then
                say "restarting $LABEL"
                as_root launchctl kickstart -k "system/$LABEL" || start_failed=1
            else
                say "nothing changed: not restarting"
            fi
            ;;
        docker)
            container_image=""
            if [ "$dry_run" = 0 ] || [ -n "$old_mode" ]; then
                container_image=$(run_docker inspect -f '{{.Image}}' "$CONTAINER" 2>/dev/null || true)
            fi
            signature="$run_image $owner $config_dir"
            old_signature=$(manifest_values signature)
            if [ "$fresh" = 1 ] || [ "$changed" = 1 ] || [ -z "$container_image" ] || [ -z "$new_image_id" ] ||
                [ "$container_image" != "$new_image_id" ] || [ "$signature" != "$old_signature" ]; then
                [ -n "$container_image" ] && docker_change rm -f "$CONTAINER" >/dev/null
                say "starting the container $CONTAINER"
                # Network: the host's, so that Syncthing's GUI on 127.0.0.1 is reachable. The config directory is
                # mounted read-only at the same path; secrets come from the env file, never the command line.
                # unless-stopped: back after a reboot; a configuration error (78) is retried at most once a minute
                # (Docker's backoff), see packaging/README.md "Restart policy".
                as_root docker run -d --name "$CONTAINER" --restart unless-stopped --user "$owner" \
                    --read-only --tmpfs /run --tmpfs /tmp --network host --cap-drop ALL \
                    --security-opt no-new-privileges \
                    --env-file "$R$DOCKER_ENVFILE" -v "$config_dir:$config_dir:ro" \
                    ${metrics_mount:+-v} ${metrics_mount:+"$metrics_mount"} \
                    --label eu.vaultsync.notify.installer=1 "$run_image" >/dev/null || start_failed=1
                changed=1
                # The previous image by its tag (which also drops its digest reference), or, when the tag stayed
                # but was moved to other bytes, by the digest it ran from: nothing else names it any more.
                if [ "$start_failed" = 0 ]; then
                    if [ -n "$old_image" ] && [ "$old_image" != "$image" ]; then
                        docker_change rmi "$old_image" >/dev/null || warn "could not remove the previous image $old_image"
                    elif [ -n "$old_pinned" ] && [ "$old_pinned" != "$run_image" ]; then
                        docker_change rmi "$old_pinned" >/dev/null || warn "could not remove the previous image $old_pinned"
                    fi
                fi
            else
                say "nothing changed: not restarting"
            fi
            ;;
        binary)
            say "binary mode: no service manager, so nothing will be started: you start it yourself (the next: line below says how)"
            if [ "$changed" = 1 ] && [ "$fresh" = 0 ]; then
                say "the binary or its environment changed: restart your running vaultsync-notify to use it"
            elif [ "$fresh" = 0 ]; then
                say "nothing changed: not restarting"
            fi
            ;;
    esac
}

# vaultsync-notify --doctor as the config owner; the summary and the exit status.
run_doctor() {
    doctor_cmd="${as_owner_shown:+$as_owner_shown }sh -c '$run_line --doctor'"
    [ "$mode" = docker ] && doctor_cmd="docker exec $CONTAINER vaultsync-notify --doctor"
    if [ "$dry_run" = 1 ]; then
        say "  would run the doctor as uid:gid $owner: $doctor_cmd"
        [ "$mode" = binary ] && say "next: start it as the config owner under your own supervisor, e.g.: ${as_owner_shown:+$as_owner_shown }sh -c '$run_line'"
        say "dry run finished: nothing was changed."
        exit 0
    fi
    say ""
    say "running vaultsync-notify --doctor as uid:gid $owner:"
    doctor_status=0
    # shellcheck disable=SC2016 # expanded by the inner shell
    doctor_script='set -a; . "$1"; set +a; exec "$2" --doctor'
    if [ "$mode" = docker ]; then
        run_docker exec "$CONTAINER" /usr/local/bin/vaultsync-notify --doctor || doctor_status=$?
    elif [ "$as_owner" = none ]; then
        doctor_status=-1
    else
        # $as_owner is split on purpose: a command and its words, none of them with spaces.
        # shellcheck disable=SC2086
        $as_owner sh -c "$doctor_script" sh "$R$ENVFILE" "$R$BIN" || doctor_status=$?
    fi
    say ""
    if [ "$start_failed" = 1 ]; then
        say "the service manager could not start vaultsync-notify; see its logs: $logs"
    fi
    if [ "$doctor_status" = -1 ]; then
        say "could not switch to uid $owner_uid to run the doctor here; run it yourself: $doctor_cmd"
    elif [ "$doctor_status" = 0 ]; then
        say "doctor: passed."
    else
        say "doctor: found a failure (exit status $doctor_status); see the FAIL lines above, fix them, then run: $doctor_cmd"
    fi
    if [ "$mode" = binary ]; then
        say "installed vaultsync-notify ${new_version:-} as $mode, to run as uid:gid $owner (not started)."
    else
        say "installed vaultsync-notify ${new_version:-} as $mode, running as uid:gid $owner."
    fi
    if [ "$mode" = binary ]; then
        say "next: start it as the config owner under your own supervisor, e.g.: ${as_owner_shown:+$as_owner_shown }sh -c '$run_line'"
    else
        say "next: open VaultSync on your iPhone (Cloud Relay): it shows the relay as active after the first wake-up. Logs: $logs"
    fi
    if [ "$mode" = binary ]; then
        say "status, once it runs: $(status_command)"
    else
        say "status: $(status_command)"
    fi
    if [ "$start_failed" = 1 ] || { [ "$doctor_status" != 0 ] && [ "$doctor_status" != -1 ]; }; then exit 1; fi
    exit 0
}

# The one command that shows the service's status: as root with no variables, --status finds every service's state
# file on the host (README, "Is it working?"); a container's is inside the container, so Docker's runs there.
status_command() {
    status_priv=""
    if [ "$self_uid" != 0 ]; then
        status_priv=${priv_tool:-sudo}
    elif [ "$mode" != docker ] && command -v sudo >/dev/null 2>&1; then
        status_priv=sudo # what a user types later, from a shell that is not root
    fi
    if [ "$mode" = docker ]; then
        echo "${status_priv:+$status_priv }docker exec $CONTAINER vaultsync-notify --status"
    else
        echo "${status_priv:+$status_priv }vaultsync-notify --status"
    fi
}

main() {
    set -eu
    umask 022
    init_globals
    parse_args "$@"
    set_paths
    make_workdir
    detect_platform
    read_manifest
    if [ "$uninstall" = 1 ]; then run_uninstall; fi
    find_config
    choose_mode
    mode_settings
    refuse_foreign
    get_helper
    write_env
    render_service
    choose_runner
    check_config
    plan_account
    write_plan
    install_files
    start_service
    run_doctor
}

main "$@"
