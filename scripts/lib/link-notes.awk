# Filters the output of the static release link (scripts/build-release): glibc's notes on calls in the Swift runtime
# and c-ares that a static binary could only serve with glibc's shared libraries at run time
# (getservbyname, getpwuid_r, getpwnam_r, getgrgid_r, getgrnam_r, dlopen) and its mktemp note are left out and
# counted; one line at the end says why they are harmless. Every other line, any other warning included (one in
# our own code for the same functions too), passes through unchanged.
# usage: swift build ... 2>&1 | awk -f scripts/lib/link-notes.awk
BEGIN {
    archive = "/(libcares|libswiftCore)\\.a\\("
    note = "warning: (Using .(getservbyname|dlopen|getpwuid_r|getpwnam_r|getgrgid_r|getgrnam_r). in statically linked applications requires at runtime the shared libraries from the glibc version used for linking|the use of .mktemp. is dangerous, better use .mkstemp. or .mkdtemp.)$"
}
$0 ~ archive && $0 ~ note { left_out++; next }
{ print; fflush() }
END {
    if (left_out)
        print "build-release: " left_out " glibc link notes left out (getservbyname, getpw*/getgr*, dlopen, mktemp in the " \
            "Swift runtime and c-ares): vaultsync-notify never reaches them, so it loads no shared library " \
            "and no NSS module at run time (SECURITY.md, static binary)"
}
