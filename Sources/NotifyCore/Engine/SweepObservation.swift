/// What the sweep learned of one pair: its completion answer and whether its device is connected
/// (`/rest/system/connections`).
package struct SweepObservation: Sendable, Equatable {
    package var pair: SweepPair
    package var connected: Bool
    package var completion: Completion

    package init(pair: SweepPair, connected: Bool, completion: Completion) {
        self.pair = pair
        self.connected = connected
        self.completion = completion
    }
}

extension SweepObservation {
    /// A pair's `/rest/db/completion` answer, as the sweep reads it.
    package enum CompletionAnswer: Sendable, Equatable {
        case answered(Completion)
        /// 404: the folder was paused or removed since the config was read (docs/syncthing-api.md, Config
        /// endpoints, paused folders and 404).
        case folderGone
        /// Any other failure: Syncthing did not answer.
        case failed

        /// Reads a `/rest/db/completion` result: 404 is `.folderGone`, any other failure `.failed`.
        package init(_ answer: Result<Completion, SyncthingError>) {
            switch answer {
            case .success(let completion): self = .answered(completion)
            case .failure(.notFound): self = .folderGone
            case .failure: self = .failed
            }
        }
    }

    /// What the sweep learns of `pairs` from Syncthing's raw answers, and which answers were malformed.
    ///
    /// - Parameters:
    ///   - connections: reads `/rest/system/connections`; not called when there is no pair.
    ///   - completion: reads one pair's `/rest/db/completion`; called in order, and no more once one has failed.
    /// - Returns: the observations as `collect` gives them (nil when any read failed; a 404 completion skips its
    ///   pair), and `malformed`: `.connections` and `.completion` for those answers that were not the expected JSON.
    package static func read(
        _ pairs: [SweepPair], connections: () -> Result<[String: DeviceConnection], SyncthingError>,
        completion: (SweepPair) -> Result<Completion, SyncthingError>
    ) -> (observations: [SweepObservation]?, malformed: Set<PeerAnswer>) {
        var malformed: Set<PeerAnswer> = []
        let observations = collect(
            pairs,
            connections: {
                let answer = connections()
                if answer.isMalformed { malformed.insert(.connections) }
                return try? answer.get()
            }
        ) { pair in
            let answer = completion(pair)
            if answer.isMalformed { malformed.insert(.completion) }
            return CompletionAnswer(answer)
        }
        return (observations, malformed)
    }

    /// What the sweep learns of `pairs`: each pair's completion with whether its device is connected.
    ///
    /// - Parameters:
    ///   - connections: reads `/rest/system/connections` (keyed by Device ID); nil when Syncthing did not answer.
    ///     Not called when there is no pair.
    ///   - completion: reads one pair's completion; called in order, and no more once one has failed.
    /// - Returns: the observations, without the pairs whose folder is gone; nil when any read failed, so that a
    ///   sweep never acts on half an answer.
    package static func collect(
        _ pairs: [SweepPair], connections: () -> [String: DeviceConnection]?,
        completion: (SweepPair) -> CompletionAnswer
    ) -> [SweepObservation]? {
        if pairs.isEmpty { return [] }
        guard let connections = connections() else { return nil }
        var observations: [SweepObservation] = []
        for pair in pairs {
            switch completion(pair) {
            case .answered(let answer):
                let connected = connections[pair.device]?.connected ?? false
                observations.append(SweepObservation(pair: pair, connected: connected, completion: answer))
            case .folderGone: continue
            case .failed: return nil
            }
        }
        return observations
    }
}
