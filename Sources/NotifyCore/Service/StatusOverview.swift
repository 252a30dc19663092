/// What `vaultsync-notify --status` prints when it runs without the service's environment (no `RELAY_URL`): one
/// report per state file found on the host (`StatusReport`, each judged from its file alone), or one line saying
/// where it looked. Pure: the reports, the places looked in and whether the caller is root go in, text comes out.
///
/// Instances are the state files whose service runs (`StatusReport.running`). Files left behind by services that
/// ended without their clean stop (a SIGKILL, a crash, a test run) are no instance: they are counted, and shown only
/// when that one file is all there is, since a host collects them in `/tmp` over time.
/// - One instance (or no instance and one file left behind): that report, text and JSON exactly as `--status` with
///   the environment prints it (the JSON object of `StatusReport`), so scripts read both the same way.
/// - Several: a first line that counts them, then each report under `[instance N of M, pid P]`, a blank line
///   between. JSON: `{"schema", "healthy", "exit_status", "message", "instances": [report, …]}`, each report the
///   object above.
/// - None: one line naming the places looked in and the command for a Docker install (a container's file is in the
///   container), exit status 1. JSON: the same object as for several, `instances` empty.
///
/// Exit status 0 only when there is an instance and every instance is healthy.
package struct StatusOverview: Sendable, Equatable {
    /// One report per state file found, in the order the places were searched.
    package var reports: [StatusReport]
    /// The places looked in, as shown (`/run/vaultsync-notify`, `/tmp/vaultsync-notify-*`, …).
    package var searched: [String]
    /// Whether the caller is root (reads every user's files); otherwise the none line says how to see them all.
    package var root: Bool

    package init(reports: [StatusReport], searched: [String], root: Bool) {
        self.reports = reports
        self.searched = searched
        self.root = root
    }

    /// True when `--status` should look for every instance instead of the one the environment selects: the
    /// environment has no `RELAY_URL`, which every service needs, so it is not a service's environment.
    package static func discovers(environment: [String: String]) -> Bool {
        (environment["RELAY_URL"] ?? "").isEmpty
    }

    /// The command that shows a Docker install's status (run on the host).
    package static let dockerCommand = "docker exec <container> vaultsync-notify --status"

    /// The reports of services that run.
    package var instances: [StatusReport] { reports.filter(\.running) }

    /// The one report shown alone: the only instance, or with none, the only file found.
    private var single: StatusReport? {
        let instances = instances
        if instances.count == 1 { return instances[0] }
        return instances.isEmpty && reports.count == 1 ? reports[0] : nil
    }

    package var exitStatus: ExitStatus {
        if let single { return single.exitStatus }
        let instances = instances
        return !instances.isEmpty && instances.allSatisfy { $0.exitStatus == .ok } ? .ok : .checkFailed
    }

    /// The first line (also the JSON's `message` when there is not exactly one instance).
    package var headline: String {
        if let single { return single.headline }
        let instances = instances
        let leftover = reports.count - instances.count
        let left =
            leftover == 0
            ? "" : "; \(leftover) state file\(leftover == 1 ? "" : "s") left by services that are not running"
        guard !instances.isEmpty else {
            let places = searched.joined(separator: ", ")
            let sudo = root ? "" : "; run as root (sudo vaultsync-notify --status) to read other users' services too"
            return "vaultsync-notify: no running instance found (looked in \(places)\(left)); for a Docker install "
                + "run `\(Self.dockerCommand)`\(sudo)"
        }
        let healthy = instances.filter { $0.exitStatus == .ok }.count
        return "vaultsync-notify: \(instances.count) instances found, \(healthy) healthy\(left)"
    }

    /// The text form, without a trailing newline.
    package func text() -> String {
        if let single { return single.text() }
        let instances = instances
        var parts = [headline]
        for (index, report) in instances.enumerated() {
            let pid = report.state?.writer.map { ", pid \($0.pid)" } ?? ""
            parts.append("\n[instance \(index + 1) of \(instances.count)\(pid)]\n" + report.text())
        }
        return parts.joined(separator: "\n")
    }

    /// The JSON form, pretty-printed with sorted keys, without a trailing newline.
    package func json() -> String {
        if let single { return single.json() }
        let instances = instances.map { $0.jsonDocument() }
        return PrettyJSON.object([
            ("schema", .int(StatusReport.schema)),
            ("healthy", .bool(exitStatus == .ok)),
            ("exit_status", .int(Int(exitStatus.rawValue))),
            ("message", .string(headline)),
            ("instances", .array(instances)),
        ]).rendered()
    }
}
