# scripts/build-release's filter of the static link's output: glibc's notes on the functions in the Swift runtime
# and c-ares that a static binary could only serve with glibc's shared libraries at run time
# (getservbyname, getpwuid_r, getpwnam_r, getgrgid_r, getgrnam_r, dlopen) and its mktemp note are left out and
# counted; one line at the end names the functions left out, per library, and says why they are harmless. Every
# other line, any other warning included (one in our own code for the same functions too), passes through unchanged.
# usage: swift build ... 2>&1 | awk -f scripts/lib/link-notes.awk
BEGIN {
    archive = "/(libcares|libswiftCore)\\.a\\("
    note = "warning: (Using .(getservbyname|dlopen|getpwuid_r|getpwnam_r|getgrgid_r|getgrnam_r). in statically linked applications requires at runtime the shared libraries from the glibc version used for linking|the use of .mktemp. is dangerous, better use .mkstemp. or .mkdtemp.)$"
}
$0 ~ archive && $0 ~ note {
    left_out++
    lib = $0 ~ /\/libcares\.a\(/ ? "c-ares" : "the Swift runtime"
    # "Using 'NAME' in statically ...": 7 characters before NAME, 15 after it.
    fn = match($0, /Using .[A-Za-z_]+. in statically/) ? substr($0, RSTART + 7, RLENGTH - 22) : "mktemp"
    if (!((lib, fn) in seen)) {
        seen[lib, fn] = 1
        names[lib] = names[lib] (names[lib] == "" ? "" : ", ") fn
    }
    next
}
{ print; fflush() }
END {
    if (!left_out)
        exit
    which = ""
    if ("the Swift runtime" in names)
        which = "the Swift runtime: " names["the Swift runtime"]
    if ("c-ares" in names)
        which = which (which == "" ? "" : "; ") "c-ares: " names["c-ares"]
    print "build-release: " left_out " glibc link note" (left_out == 1 ? "" : "s") " left out (" which "): " \
        "vaultsync-notify never reaches them, so it loads no shared library and no NSS module at run time " \
        "(SECURITY.md, static binary)"
}
