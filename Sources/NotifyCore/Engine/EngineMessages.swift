/// What goes into the `Engine` and what comes out of it.
extension Engine {
    /// The engine's own tunables, besides the policy's.
    package struct Settings: Sendable, Equatable {
        package var policy: WakePolicy.Settings
        /// WATCHED_FOLDERS; empty means all.
        package var watchedFolders: Set<String>
        /// The relay POST's whole-request limit while running (default `RelayTimeouts.request`).
        package var relayTimeout: Duration
        /// Re-read config.xml and the environment once Syncthing has been unreachable at the access in use
        /// (`Engine.accessMayBeStale`) this long: its GUI may have moved. A restart or a dropped connection is over
        /// sooner, and re-reading then would find nothing new; a moved GUI is followed within one backoff cap of this.
        package var rereadWhenUnreachableFor: Duration
        /// While Syncthing stays unreachable, re-read again at most this often. Short enough that an address
        /// edited in config.xml while Syncthing was stopped is taken within seconds of its start; long enough that
        /// an hour-long outage costs four small file reads a minute, not one at every backoff step.
        package var rereadWhileUnreachableEvery: Duration

        package init(
            policy: WakePolicy.Settings, watchedFolders: Set<String> = [],
            relayTimeout: Duration = RelayTimeouts.request,
            rereadWhenUnreachableFor: Duration = .seconds(5), rereadWhileUnreachableEvery: Duration = .seconds(15)
        ) {
            self.policy = policy
            self.watchedFolders = watchedFolders
            self.relayTimeout = relayTimeout
            self.rereadWhenUnreachableFor = rereadWhenUnreachableFor
            self.rereadWhileUnreachableEvery = rereadWhileUnreachableEvery
        }

        /// The relay POST's limit during shutdown: what is left of the grace period after a margin for the exit.
        package var relayTimeoutWhileStopping: Duration {
            max(.milliseconds(100), policy.shutdownGrace - Engine.exitMargin)
        }
    }

    /// A blocking Syncthing or relay request of the poll loop, performed off the engine queue, one at a time.
    package enum Request: Sendable, Equatable {
        /// `GET /api/v1/health` on the relay → `.relayHealth`.
        case relayHealth
        /// `GET /rest/system/status` → `.status`.
        case status
        /// The event head (`since=0&limit=1&timeout=0`) → `.head`.
        case head
        /// The event long-poll since this id → `.polled`, with the time it took. With `onConnection`, only over
        /// that kept-alive connection (the one the last status read vouched for: `PollLoop.statusRecheck`): when it
        /// is gone, the poll fails at once with `TransportError.connectionGone` and nothing is sent.
        case poll(since: Int, onConnection: Int? = nil)
        /// A stop's last read during a steady stream's pause (`PollLoop.lastRead`): the events after `since` with no
        /// wait (`timeout=0`) → `.polled`.
        case lastRead(since: Int, onConnection: Int?)
    }

    /// The relay's start-up health check, as the engine reads it.
    package enum RelayHealth: Sendable, Equatable {
        case ok
        /// 404: no relay API at RELAY_URL.
        case endpointMissing
        case unhealthy(status: Int?, error: ErrorCode?)
    }

    /// Why config.xml and the environment are re-read. Each reason logs its own way.
    package enum RereadReason: Sendable, Equatable {
        /// SIGHUP.
        case hangup
        /// Syncthing answered 401, or 403 `CSRF Error`: the API key may have changed.
        case unauthorized
        /// Syncthing stayed unreachable past `Settings.rereadWhenUnreachableFor`: its GUI may have moved.
        case unreachable
        /// A ConfigSaved event: the GUI address, key or TLS may have changed.
        case configSaved
    }

    /// What a re-read of config.xml and the environment came to.
    package enum Reread: Sendable, Equatable {
        /// A different address, key or pin was swapped in.
        case changed
        case unchanged
        /// Nothing usable could be read; the current access stays.
        case failed(ErrorCode)
    }

    /// Why the config (and perhaps each pair's state) is read.
    package enum PeerRead: Sendable, Equatable {
        /// The config only (after a ConfigSaved event).
        case configOnly
        /// The config and every shared pair's state, to seed the tracker (at start, after a re-sync); wakes nobody.
        case snapshot
        /// The stale-peer sweep: like a snapshot, and its answer goes to the policy.
        case sweep
    }

    /// The timers the engine arms; at most one of each.
    package enum Timer: Sendable, Hashable {
        case policy(WakePolicy.Timer)
        /// The end of a poll-loop backoff.
        case backoff

        /// Hours long, so it also keeps the wall clock: it fires at the earlier of its monotonic deadline and the
        /// wall-clock time that deadline had when it was armed. A host suspend (the monotonic clock stands still)
        /// does not stretch it, the wall deadline bringing it at the resume; an NTP step back does not delay it, the
        /// monotonic one holding (docs/architecture.md, "Time"). Others are monotonic only, with no leeway (the
        /// debounce end is on the wake-up's critical path).
        package var alsoOnWallClock: Bool { self == .policy(.sweep) }
    }

    package enum Input: Sendable, Equatable {
        /// The service starts.
        case start
        case relayHealth(RelayHealth)
        /// `connection`: the transport's identity of the connection the answer came on, nil when unknown
        /// (`PollLoop.StepResult`).
        case status(Result<SystemStatus, PollLoop.Failure>, connection: Int? = nil)
        case head(Result<Int, PollLoop.Failure>)
        /// - Parameter elapsed: from sending the long-poll to its answer, on the monotonic clock.
        case polled(Result<[SyncthingEvent], PollLoop.Failure>, elapsed: Duration, connection: Int? = nil)
        case reread(RereadReason, Reread)
        /// `/rest/config/devices` and `/rest/config/folders`, read for `kind` at config `generation`; nil when
        /// Syncthing did not answer. `malformed`: the answers among them that could not be read (whole, or a folder's
        /// `devices` list).
        case configRead(PeerRead, generation: Int, ConfigSnapshot?, malformed: Set<PeerAnswer> = [])
        /// Each pair's connection and completion; nil when Syncthing did not answer. `malformed`: the answers among
        /// them that could not be read.
        case observed(PeerRead, [SweepObservation]?, malformed: Set<PeerAnswer> = [])
        case timerFired(Timer)
        /// The trigger in flight ended. `jitter` is uniform in 0..<1, for the backoff.
        case relayOutcome(RelayOutcome, jitter: Double)
        /// SIGTERM or SIGINT.
        case stop
        /// SIGHUP.
        case hangup
    }

    /// The configured devices and folders.
    package struct ConfigSnapshot: Sendable, Equatable {
        package var devices: [ConfiguredDevice]
        package var folders: [ConfiguredFolder]

        package init(devices: [ConfiguredDevice], folders: [ConfiguredFolder]) {
            self.devices = devices
            self.folders = folders
        }
    }

    /// What the service tells the monitor (systemd, the state file).
    package enum MonitorUpdate: Sendable, Equatable {
        case connecting
        /// An event poll (and its status read) succeeded.
        case pollSucceeded
        case syncthingUnavailable
        case relayOutcome(RelayOutcome)
        case stopping
    }

    /// Why the process exits with a configuration error; the service prints the matching two fatal lines.
    package enum Fatal: Sendable, Equatable {
        /// The relay answered 404 before it had answered at RELAY_URL.
        case relayNotFound
        /// Syncthing still rejects the API key after config.xml was re-read.
        case apiKeyRejected
    }

    /// How the run ends, named by its cause: the exit status, the fatal lines (if any) printed before it, and what
    /// the service tells the outside world on its way out (`Farewell`), carried out in that order.
    ///
    /// Every exit removes the state file and writes the metrics' `up 0`: the file describes a running process, and
    /// `--healthcheck` must not trust a dead one's last poll for up to 120 s, nor `--status` call it running. Only the
    /// stop that was asked for (SIGTERM, SIGINT) tells systemd `STOPPING=1` and `STATUS=stopping`; a failure (75, 78)
    /// does not, so that `systemctl status` shows the failed exit, not an orderly stop.
    package struct Exit: Sendable, Equatable {
        package var status: ExitStatus
        /// The two stderr lines to print first; nil prints none.
        package var fatal: Fatal?
        package var farewell: Set<Farewell>

        package init(status: ExitStatus, fatal: Fatal?, farewell: Set<Farewell>) {
            self.status = status
            self.fatal = fatal
            self.farewell = farewell
        }

        /// What the service does on its way out, besides printing the fatal lines.
        package enum Farewell: Sendable, Hashable, CaseIterable {
            /// `STOPPING=1` and `STATUS=stopping` to systemd (sent once: the stop sends them when it begins).
            case notifyStopping
            /// Remove the state file: `--healthcheck` answers unhealthy, and `--status` finds no instance, at once.
            case removeStateFile
            /// The metrics file's last write, with `vaultsync_notify_up 0`.
            case metricsDown
        }

        /// SIGTERM or SIGINT, once the shutdown flush is over: 0, and an orderly stop to systemd.
        package static let stopped = Exit(status: .ok, fatal: nil, farewell: Set(Farewell.allCases))
        /// A relay 404 before the relay had answered at RELAY_URL (the start-up health check, or a trigger): 78.
        package static let relayNotFound = failure(.configuration, fatal: .relayNotFound)
        /// Syncthing still rejects the API key after config.xml was re-read at start: 78.
        package static let apiKeyRejected = failure(.configuration, fatal: .apiKeyRejected)
        /// Syncthing's Device ID is malformed: 75 (a restart may meet a sane Syncthing), no fatal lines.
        package static let deviceIDMalformed = failure(.temporary, fatal: nil)
        /// Syncthing's access could not be read at start, before any engine exists: 75 while config.xml may still
        /// appear, else 78 (`SyncthingAccessError.status`). The start-up prints its own lines for it.
        package static func accessUnavailable(_ status: ExitStatus) -> Exit { failure(status, fatal: nil) }

        /// An exit nobody asked for: no `STOPPING=1`; the state file and the metrics say the service is down.
        private static func failure(_ status: ExitStatus, fatal: Fatal?) -> Exit {
            Exit(status: status, fatal: fatal, farewell: [.removeStateFile, .metricsDown])
        }
    }

    package enum Action: Sendable, Equatable {
        /// Perform this request off the engine queue and answer with its result.
        case request(Request)
        /// Re-read config.xml and the environment, swap a changed access into the Syncthing client before the next
        /// request, and answer `.reread`.
        case reread(RereadReason)
        /// Read the config (`.configRead`).
        case readConfig(PeerRead, generation: Int)
        /// Ask for each pair's connection and completion (`.observed`).
        case observe(PeerRead, [SweepPair])
        case armTimer(Timer, at: Instant)
        case cancelTimer(Timer)
        /// POST one trigger for `deviceID` within `timeout`; answer `.relayOutcome`.
        case sendTrigger(deviceID: String, timeout: Duration)
        case monitor(MonitorUpdate)
        case log(LogRecord)
        /// A decision was noted in `Engine.decisions` (`--status`'s `recent`); counted in METRICS_FILE, nothing to
        /// carry out.
        case decided(DecisionCause)
        /// Cut the Syncthing request in flight short (shutdown).
        case cancelSyncthing
        /// Print the exit's fatal lines (if any), then end the process with its status.
        case exit(Exit)
    }
}
