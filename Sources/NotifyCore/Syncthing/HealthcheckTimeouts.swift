/// The time limits of `--healthcheck` (and of each of `--status`'s questions to Syncthing), in one place: Docker
/// runs the check every 30 s and kills it after the HEALTHCHECK timeout the image sets (5 s), and README promises an
/// answer in under 2 s.
package enum HealthcheckTimeouts {
    /// The whole check's bound: 1.8 s. Past it the check answers unhealthy (`HealthVerdict.timedOut`) and the
    /// process exits, whatever is still running; under 2 s, with room for the process's own start and exit.
    package static let budget: Duration = .milliseconds(1800)

    /// libcurl's total timeout for the check's `GET /rest/system/status`, per address tried: 1.2 s. Syncthing on
    /// loopback answers in milliseconds; this leaves the state file's reads and config.xml room inside `budget`.
    package static let request: Duration = .milliseconds(1200)
}
