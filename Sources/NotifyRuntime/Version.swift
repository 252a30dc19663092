/// The version shown by `--version`. Release builds may override it with `-Xswiftc -DVAULTSYNC_VERSION_OVERRIDE`
/// and a generated file; by default it is the package's own.
public enum Version {
    public static let current = "0.1.0"
}
