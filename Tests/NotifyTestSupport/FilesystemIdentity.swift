import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `setfsuid(2)`/`setfsgid(2)` via dlsym: the Glibc module does not export <sys/fsuid.h>.
private typealias SetFSID = @convention(c) (UInt32) -> Int32
private let setfsuid: SetFSID = unsafeBitCast(
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid"), to: SetFSID.self)
private let setfsgid: SetFSID = unsafeBitCast(
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsgid"), to: SetFSID.self)

/// Runs `body` with the calling thread's filesystem uid/gid switched (Linux `setfsuid`/`setfsgid` are per thread),
/// so that a root test process meets real EACCES without affecting other tests. Returns nil when the switch is not
/// possible (not root, or no CAP_SETUID in this container).
package func withFilesystemIdentity<T>(uid: UInt32, gid: UInt32, _ body: () throws -> T) rethrows -> T? {
    guard geteuid() == 0 else { return nil }
    _ = setfsgid(gid)
    _ = setfsuid(uid)
    defer {
        _ = setfsuid(0)
        _ = setfsgid(0)
    }
    // setfsuid returns the previous value; an invalid id (-1) changes nothing and reports the current one.
    guard UInt32(bitPattern: setfsuid(UInt32.max)) == uid else { return nil }
    return try body()
}

/// True when a root test process can create files owned by another uid and then be denied access to them.
package var canTestForeignOwnership: Bool {
    guard geteuid() == 0 else { return false }
    return (withFilesystemIdentity(uid: 4242, gid: 4343) { true }) ?? false
}
