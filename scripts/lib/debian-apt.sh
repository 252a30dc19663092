# shellcheck shell=bash
# Shared by scripts/fetch-syncthing-trixie and scripts/static-deps (sourced, not run): an apt with a sources
# list, lists directory and cache of its OWN, pointed at the Debian mirror the machine already uses, so the
# machine's apt configuration and package state are left alone. The Release files are verified by apt against
# the machine's Debian archive keyring.
#
#   debian_mirror                 the machine's Debian archive URI (no trailing slash)
#   debian_security_mirror        the machine's Debian security archive URI, or the archive's sibling
#                                 .../debian-security when the machine lists none
#   private_apt_init DIR LINE...  fresh DIR with a sources.list of the given one-line entries; sets apt_opts
#   private_apt_update LABEL      apt-get update with apt_opts; any W: or E: line fails
# The caller defines die() and say().

debian_keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# Prints the first URI of the first apt source whose suite matches the extended regex $1 (deb822 files first,
# then one-line lists). Sources of type deb only.
_debian_source_uri() {
    local suite_re=$1 f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        # One stanza per blank-line separated paragraph; print the first URI of the first fitting one.
        awk -v re="$suite_re" '
            function flush(   n, i, s) {
                if (types ~ /(^| )deb( |$)/ && uri != "" && enabled != "no") {
                    n = split(suites, s, " ")
                    for (i = 1; i <= n; i++) if (s[i] ~ ("^(" re ")$")) { print uri; found = 1; exit }
                }
                types = ""; uri = ""; suites = ""; enabled = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            tolower($1) == "types:" { $1 = ""; types = $0 }
            tolower($1) == "uris:" { uri = $2 }
            tolower($1) == "suites:" { $1 = ""; suites = $0 }
            tolower($1) == "enabled:" { enabled = tolower($2) }
            END { if (!found) flush() }
        ' "$f" | grep -m1 . && return 0
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        # deb [options] URI SUITE COMPONENT...
        awk -v re="$suite_re" '$1 == "deb" {
                i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                if ($(i + 1) ~ ("^(" re ")$")) { print $i; exit }
            }' "$f" | grep -m1 . && return 0
    done
    return 1
}

# The Debian archive the machine already uses: a plain suite name (no -security, -updates or /updates).
debian_mirror() {
    local uri
    uri=$(_debian_source_uri '[a-z]+') || return 1
    echo "${uri%/}"
}

debian_security_mirror() {
    local uri
    if uri=$(_debian_source_uri '[a-z]+(-security|/updates)'); then
        echo "${uri%/}"
    else
        uri=$(debian_mirror) || return 1
        echo "${uri%/debian}/debian-security"
    fi
}

private_apt_init() {
    local dir=$1
    shift
    [ -r "$debian_keyring" ] || die "$debian_keyring is missing: install debian-archive-keyring"
    rm -rf "$dir"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/download"
    printf '%s\n' "$@" >"$dir/sources.list"
    # apt fetches as the unprivileged _apt user where it exists; let it write its own directories.
    if id _apt >/dev/null 2>&1; then
        chown -R _apt:root "$dir/lists" "$dir/cache" "$dir/download"
    fi
    apt_opts=(
        -o "Dir::Etc::SourceList=$dir/sources.list"
        -o "Dir::Etc::SourceParts=-"
        -o "Dir::State::Lists=$dir/lists"
        -o "Dir::Cache=$dir/cache"
        -o "Acquire::Languages=none"
        -o "APT::Get::List-Cleanup=false"
    )
    private_apt_dir=$dir
}

private_apt_update() {
    local label=$1 log=$private_apt_dir/update.log
    say "reading $label's package lists (from the machine's Debian mirror, verified with $debian_keyring)"
    # apt-get update exits 0 on some fetch errors (a list it could not get is only a W: line): any W: or E: fails.
    if ! apt-get "${apt_opts[@]}" -q update >"$log" 2>&1 || grep -qE '^(W|E): ' "$log"; then
        cat "$log" >&2
        die "apt-get update for $label failed (see above). A NO_PUBKEY error means $debian_keyring holds none of the
keys $label's Release is signed with: apt-get install debian-archive-keyring"
    fi
}
