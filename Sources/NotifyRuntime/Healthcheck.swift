import NotifyCore

// Stub so that `--healthcheck` parses and dispatches while the service-manager work (issue 3 §3) is under way in
// parallel; that work replaces this file with the real check (state file + Syncthing API, never the relay).
public enum Healthcheck { public static func run(environment: [String: String]) -> ExitStatus { .checkFailed } }
