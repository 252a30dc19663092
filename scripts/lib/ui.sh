# shellcheck shell=bash
# The helpers the repository's bash scripts share (sourced, not run): progress and error lines, running a command as
# root, and the ok/FAIL lines and counts of the test scripts.
#
# install/notify.sh cannot source this: `curl … | sh` fetches it alone and runs it under POSIX sh. It keeps its own
# say, warn, die and as_root, of the same shape (say: one line of progress; warn: one line on stderr starting
# "warning: "; die: one line on stderr, then exit 1; as_root: the command itself when root, else through sudo or
# doas), without the script-name prefix, because its lines are what the user reads. scripts/static-deps keeps its own
# say and die too: its text is part of its cache key, so any edit to it rebuilds every static library.
#
# Progress and errors, on stderr, each line starting "$ui_name: " (default: the script's file name):
#   say MSG...            one line
#   warn MSG...           one line, "warning: " before MSG
#   die MSG...            one line, then exit 1
#   usage LINE            "usage: LINE" (no prefix), then exit 64
# Root:
#   as_root CMD...        CMD as root: itself when we are root, else through sudo with our PATH (sudo resets PATH)
#                         and the sbin directories it lacks (a user's PATH has none, and root's tools are there:
#                         chroot, ip, useradd, ...)
#   rerun_as_root ARG...  when we are not root, execs ARG... (the script and its arguments) through sudo with that
#                         PATH and each variable named in $keep_env that is set (sudo drops the rest of the
#                         environment); returns when we are root, with the sbin directories on PATH
#   need_pkg CMD PACKAGE  succeeds when CMD is installed, after installing PACKAGE with apt-get when it is missing
#                         and we are root (a test's own tools, which scripts/install-deps leaves out)
# Waiting, for test scripts:
#   wait_until SECONDS CMD...  runs CMD every 0.1 s until it succeeds; fails when SECONDS have passed
# Checks, for test scripts (counters `passed` and `failed`):
#   ok DESC               a pass: "ok   DESC" (nothing when checks_quiet is set: the installer tests run thousands)
#   bad DESC [DETAIL]     a failure: "FAIL DESC" ("FAIL [$check_scope] DESC" when check_scope is set), then DETAIL
#                         indented, or else the last $checks_log_lines (25) lines of the file $checks_log
#   check DESC CMD...     ok or bad by CMD's exit status
#   checks_done           "N passed, M failed" (the last line scripts/test and CI see); fails when M > 0

ui_name=${ui_name:-${0##*/}}

say() { echo "$ui_name: $*" >&2; }
warn() { say "warning: $*"; }
die() {
    say "$*"
    exit 1
}
usage() {
    echo "usage: $*" >&2
    exit 64
}

root_path() {
    local path=$PATH dir
    for dir in /usr/local/sbin /usr/sbin /sbin; do
        case ":$path:" in *":$dir:"*) ;; *) path=$path:$dir ;; esac
    done
    echo "$path"
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        command -v sudo >/dev/null || die "needs root: run it as root, or install sudo"
        sudo env "PATH=$(root_path)" "$@"
    fi
}

rerun_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        PATH=$(root_path)
        return 0
    fi
    command -v sudo >/dev/null || die "needs root: run it as root, or install sudo"
    local name kept=()
    for name in ${keep_env:-}; do
        [ -z "${!name+set}" ] || kept+=("$name=${!name}")
    done
    exec sudo env "PATH=$(root_path)" "${kept[@]}" "$@"
}

need_pkg() {
    command -v "$1" >/dev/null 2>&1 && return 0
    [ "$(id -u)" -eq 0 ] || return 1
    say "installing $2 with apt-get"
    DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq --no-install-recommends "$2" \
        >/dev/null 2>&1 || {
        apt-get update -qq >/dev/null 2>&1
        DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq --no-install-recommends "$2" \
            >/dev/null 2>&1
    }
    command -v "$1" >/dev/null 2>&1
}

wait_until() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.1
    done
}

passed=0
failed=0
ok() {
    passed=$((passed + 1))
    [ -n "${checks_quiet:-}" ] || echo "ok   ${1:-}"
}
bad() {
    failed=$((failed + 1))
    echo "FAIL ${check_scope:+[$check_scope] }$1"
    if [ -n "${2:-}" ]; then
        printf '%s\n' "$2" | sed 's/^/     /'
    elif [ -n "${checks_log:-}" ] && [ -f "$checks_log" ]; then
        sed 's/^/    | /' "$checks_log" | tail -n "${checks_log_lines:-25}"
    fi
}
check() {
    local description=$1
    shift
    if "$@"; then ok "$description"; else bad "$description"; fi
}
checks_done() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
