/// Every check of one `--doctor` run, with the text and JSON renderings and the exit status.
package struct DoctorReport: Sendable, Equatable {
    /// The version line's number (`Version.current`), shown in both renderings.
    package var version: String
    package var checks: [DoctorCheck]

    package init(version: String, checks: [DoctorCheck]) {
        self.version = version
        self.checks = checks
    }

    /// True when at least one check failed (warnings and skips do not count).
    package var failed: Bool { checks.contains { $0.status == .fail } }

    /// `ExitStatus.ok` (0) when nothing failed, else `ExitStatus.checkFailed` (1).
    package var exitStatus: ExitStatus { failed ? .checkFailed : .ok }

    /// How many checks ended with `status`.
    package func count(_ status: DoctorCheck.Status) -> Int { checks.filter { $0.status == status }.count }

    /// The checklist for a terminal or a pipe, ending with a newline:
    ///
    /// ```
    /// vaultsync-notify 0.1.0 doctor
    ///
    /// PASS config.file
    ///      /var/syncthing/config/config.xml (SYNCTHING_CONFIG), owner uid:gid 1000:1000, readable
    /// FAIL syncthing.api-key
    ///      Syncthing rejected the API key …
    ///      fix: …
    ///
    /// 1 failed, 0 warnings, 11 passed, 1 skipped
    /// ```
    ///
    /// - Parameter color: wrap the status label in ANSI colours (green, yellow, red, dim). The caller decides:
    ///   only when standard output is a terminal and `NO_COLOR` is unset or empty.
    package func text(color: Bool) -> String {
        var out = "vaultsync-notify \(version) doctor\n\n"
        let indent = "     "
        for check in checks {
            out += "\(Self.label(check.status, color: color)) \(check.name.rawValue)\n"
            out += indent + Self.oneLine(check.reason) + "\n"
            if let fix = check.fix { out += indent + "fix: " + Self.oneLine(fix) + "\n" }
        }
        out += "\n\(count(.fail)) failed, \(count(.warn)) warning\(count(.warn) == 1 ? "" : "s"), "
        out += "\(count(.pass)) passed, \(count(.skip)) skipped\n"
        return out
    }

    /// One JSON document, ending with a newline, with stable keys (sorted):
    ///
    /// `{"checks":[{"fix":…,"name":"config.file","reason":…,"status":"pass"}, …],"exit_status":0,"ok":true,
    /// "summary":{"fail":0,"pass":12,"skip":1,"warn":0},"version":"0.1.0"}` (pretty-printed; `fix` is absent when
    /// there is none; `status` is `pass`, `warn`, `fail` or `skip`).
    package func json() -> String {
        let checks = checks.map { check in
            var members: [(key: String, value: PrettyJSON)] = [
                ("name", .string(check.name.rawValue)), ("status", .string(check.status.rawValue)),
                ("reason", .string(check.reason)),
            ]
            if let fix = check.fix { members.append(("fix", .string(fix))) }
            return PrettyJSON.object(members)
        }
        let summary = PrettyJSON.object([
            ("pass", .int(count(.pass))), ("warn", .int(count(.warn))), ("fail", .int(count(.fail))),
            ("skip", .int(count(.skip))),
        ])
        let document = PrettyJSON.object([
            ("version", .string(version)), ("ok", .bool(!failed)), ("exit_status", .int(Int(exitStatus.rawValue))),
            ("summary", summary), ("checks", .array(checks)),
        ])
        return document.rendered() + "\n"
    }

    private static func label(_ status: DoctorCheck.Status, color: Bool) -> String {
        guard color else { return status.label }
        let code =
            switch status {
            case .pass: "32"
            case .warn: "33"
            case .fail: "31;1"
            case .skip: "2"
            }
        return "\u{1B}[\(code)m\(status.label)\u{1B}[0m"
    }

    /// Replaces control characters (newlines, escapes) so that a reason is always exactly one line.
    static func oneLine(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }
}
