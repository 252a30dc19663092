/// Defects planted on purpose, to prove that the simulator's checker catches what it claims to (docs/architecture.md,
/// "The simulator"). They exist only in a build compiled with `-DVAULTSYNC_PLANTED_DEFECTS` (debug builds, and the
/// simulator's own build); in any other build `PlantedDefects.has` is always false and no defect can be switched on.
package enum PlantedDefect: String, Sendable, CaseIterable {
    /// The wake-up that a gap in the event ids owes (the lost events may have held a change) is not sent.
    case forgetGapWake = "forget-gap-wake"
    /// A 429's Retry-After given as an HTTP-date is read as missing (30 s) instead of waited for.
    case ignoreRetryAfterDate = "ignore-retry-after-date"
    /// The relay's push window is not waited for: a wake-up goes out as soon as it is due.
    case sendInsideWindow = "send-inside-window"
    /// A wake-up answered with a 5xx is dropped instead of kept for the retry.
    case dropNewsOn5xx = "drop-news-on-5xx"
    /// A re-read of config.xml that finds a new API key or address reports it, but the client keeps the old one.
    case keepOldKey = "keep-old-key"
    /// A due wake-up is sent even while another trigger is still in flight.
    case secondPostInFlight = "second-post-in-flight"
}

/// The planted defects switched on for one run; empty (and unchangeable) in a build without planted defects.
package struct PlantedDefects: Sendable, Equatable {
    #if VAULTSYNC_PLANTED_DEFECTS
        package var active: Set<PlantedDefect>
        package init(_ active: Set<PlantedDefect> = []) { self.active = active }
        package func has(_ defect: PlantedDefect) -> Bool { active.contains(defect) }
    #else
        package init() {}
        @inline(__always) package func has(_ defect: PlantedDefect) -> Bool { false }
    #endif

    /// None: the shipped behaviour.
    package static let none = PlantedDefects()

    /// Whether this build can switch a planted defect on.
    package static var available: Bool {
        #if VAULTSYNC_PLANTED_DEFECTS
            true
        #else
            false
        #endif
    }
}
