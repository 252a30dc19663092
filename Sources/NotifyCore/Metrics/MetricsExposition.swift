/// Renders `Metrics` in Prometheus' text exposition format (version 0.0.4), the format node_exporter's textfile
/// collector reads.
///
/// Each family has a `# HELP` and a `# TYPE` line, then its samples; names carry the `vaultsync_notify_` prefix
/// (but `process_start_time_seconds`, named as Prometheus' client libraries name it), counters end in `_total`, times
/// are Unix seconds (`_timestamp_seconds`, millisecond precision, 0 before the first). Wake-ups are listed for every
/// reason and outcome, decisions for every cause (0 when none yet), so that `rate()` and `increase()` see a series
/// from the start; poll failures only for the codes that occurred. Label values come from closed enums whose raw
/// values need no escaping, but the build's version, which is escaped. The text ends with a line feed.
package enum MetricsExposition {
    /// The metric families, in the order they are written.
    package enum Family: String, Sendable, CaseIterable {
        case up = "vaultsync_notify_up"
        case wakeUps = "vaultsync_notify_wakeups_total"
        case eventsRead = "vaultsync_notify_events_read_total"
        case pollFailures = "vaultsync_notify_poll_failures_total"
        case windowDeferrals = "vaultsync_notify_relay_window_deferrals_total"
        case decisions = "vaultsync_notify_decisions_total"
        case lastPollSuccess = "vaultsync_notify_last_poll_success_timestamp_seconds"
        case lastWakeUpDelivered = "vaultsync_notify_last_wakeup_delivered_timestamp_seconds"
        /// Prometheus' convention for a build's facts: a gauge that is always 1, the facts in its labels.
        case buildInfo = "vaultsync_notify_build_info"
        /// The name every Prometheus client library gives it, unprefixed, so that the usual dashboards find it.
        case processStartTime = "process_start_time_seconds"

        package var type: String {
            switch self {
            case .up, .lastPollSuccess, .lastWakeUpDelivered, .buildInfo, .processStartTime: "gauge"
            case .wakeUps, .eventsRead, .pollFailures, .windowDeferrals, .decisions: "counter"
            }
        }

        package var help: String {
            switch self {
            case .up: "1 while vaultsync-notify runs, 0 after it stopped."
            case .wakeUps: "Wake-ups sent to the relay, by reason and by the relay's answer."
            case .eventsRead: "Syncthing events read."
            case .pollFailures: "Failed requests of the Syncthing event poll loop, by error code."
            case .windowDeferrals: "Wake-ups held until the relay's push window ended."
            case .decisions: "Decisions on what was read, by the rule that applied (--status shows the last ones)."
            case .lastPollSuccess: "Unix time of the last successful Syncthing event poll (0 before the first)."
            case .lastWakeUpDelivered: "Unix time the relay last accepted a wake-up (0 before the first)."
            case .buildInfo: "Always 1; the release of vaultsync-notify that runs, in the version label."
            case .processStartTime: "Start time of the process since unix epoch in seconds."
            }
        }
    }

    /// The relay outcomes a wake-up is counted under (`none` is no answer, never a wake-up's outcome).
    package static let outcomes = RelayOutcomeCategory.allCases.filter { $0 != .none }

    /// The exposition text of `metrics`.
    package static func render(_ metrics: Metrics) -> String {
        var text = ""
        for family in Family.allCases {
            text += "# HELP \(family.rawValue) \(family.help)\n# TYPE \(family.rawValue) \(family.type)\n"
            for (labels, value) in samples(family, metrics) {
                text += family.rawValue + labels + " " + value + "\n"
            }
        }
        return text
    }

    private static func samples(_ family: Family, _ m: Metrics) -> [(labels: String, value: String)] {
        switch family {
        case .up:
            return [("", m.up ? "1" : "0")]
        case .wakeUps:
            return WakeReason.allCases.flatMap { reason in
                outcomes.map { outcome in
                    (
                        #"{reason="\#(reason.rawValue)",outcome="\#(outcome.rawValue)"}"#,
                        String(m.wakeUps[Metrics.WakeUp(reason, outcome)] ?? 0)
                    )
                }
            }
        case .eventsRead:
            return [("", String(m.eventsRead))]
        case .pollFailures:
            return m.pollFailures.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                (#"{code="\#($0.key.rawValue)"}"#, String($0.value))
            }
        case .windowDeferrals:
            return [("", String(m.windowDeferrals))]
        case .decisions:
            return DecisionCause.allCases.map { (#"{decision="\#($0.rawValue)"}"#, String(m.decisions[$0] ?? 0)) }
        case .lastPollSuccess:
            return [("", seconds(m.lastPollSuccess))]
        case .lastWakeUpDelivered:
            return [("", seconds(m.lastWakeUpDelivered))]
        case .buildInfo:
            return [(#"{version="\#(labelValue(m.version))"}"#, "1")]
        case .processStartTime:
            return [("", seconds(m.processStart))]
        }
    }

    /// `text` as a label value: `\`, `"` and a line feed escaped, as the text format requires. The version is the
    /// only label value that does not come from a closed enum (a release build sets it).
    static func labelValue(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }

    /// Milliseconds since the epoch as seconds: 1_718_000_000_250 → `1718000000.250`; whole seconds bare; nil → `0`.
    static func seconds(_ milliseconds: Int64?) -> String {
        guard let ms = milliseconds else { return "0" }
        let whole = ms / 1000
        let frac = abs(ms % 1000)
        guard frac != 0 else { return String(whole) }
        let digits = String(frac)
        let sign = ms < 0 && whole == 0 ? "-" : ""
        return sign + String(whole) + "." + String(repeating: "0", count: 3 - digits.count) + digits
    }
}
