import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether this process runs inside a container. Only advice depends on it: in a container a missing config.xml
/// usually means an unmounted volume, on a plain host a different user or a non-default `--home`.
package enum Container {
    /// Files a container engine puts into every container it starts: Docker's `/.dockerenv`, Podman's
    /// `/run/.containerenv`.
    static let markerFiles = ["/.dockerenv", "/run/.containerenv"]

    /// Parts of a `/proc/self/cgroup` path that only a container has (Docker with either cgroup driver, Kubernetes,
    /// containerd, Podman, LXC). The host's own `docker.service` matches none of them. Under cgroup v2 a container
    /// sees only `0::/`, which is why the marker files are looked at too.
    static let cgroupHints = ["/docker/", "/docker-", "/kubepods", "/containerd/", "/libpod-", "/lxc/"]

    /// - Parameters:
    ///   - exists: whether a path exists.
    ///   - cgroup: the contents of `/proc/self/cgroup`, nil when unreadable (macOS, a restricted /proc).
    package static func detect(exists: (String) -> Bool, cgroup: String?) -> Bool {
        if markerFiles.contains(where: exists) { return true }
        guard let cgroup else { return false }
        return cgroupHints.contains { cgroup.utf8Contains($0) }
    }

    /// This process, looked at once.
    package static let current: Bool = detect(
        exists: { access($0, F_OK) == 0 },
        cgroup: PublicKeyPin.readRegularFile("/proc/self/cgroup", limit: 64 * 1024).map {
            String(decoding: $0, as: UTF8.self)
        })
}
