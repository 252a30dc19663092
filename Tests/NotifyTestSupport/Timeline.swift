import NotifyCore
import NotifyRuntime

/// What a `ServiceRig` run showed, as raw observations in one dialect for every timeline suite: each one a string
/// that starts with its time in seconds from the rig's start (`ServiceRig.t0`), to the millisecond (`3`, `9.500`),
/// so an expectation is a plain list of what happened when. Nothing here judges or summarises a run; a test says what
/// it expects in these terms.
///
/// Syncthing's side and the log are seen from a mark on (the Timeline's creation, or an exchange); the relay's side
/// is seen whole, from the rig's start, since each trigger matters to what the phone sees.
///
/// - `requests`: the poll loop's requests to Syncthing, `<seconds> poll since=<n>`, `<seconds> status`,
///   `<seconds> head`, and `<seconds> reread` (config.xml), each when it was sent; a long-poll still held ends it as
///   `<now> poll`.
/// - `reads`: the other requests to Syncthing, `<seconds> <route>` (`connections`, `folders`, `devices`, `version`,
///   `completion <folder>`), each when it was sent.
/// - `log`: each record as `<seconds> <its text line>`; `log(_:)` only those with one message. `records` and
///   `logged(_:)` give the records themselves, without times.
/// - `triggers`: `<seconds>` each trigger reached the relay.
/// - `answers`: `<seconds>` each trigger's answer came back (a request the relay does not answer in time fails at
///   its time limit); known as soon as the trigger reached the relay.
/// - `pushes`, `swallowed`: `<seconds>` the relay pushed to the phone, or swallowed a trigger inside its push window
///   (`ServiceRig.relayPushWindow`).
/// - `now`: the virtual clock's reading.
struct Timeline {
    let rig: ServiceRig
    let exchangeMark: Int
    let recordMark: Int

    /// From now on, or from the `exchanges`-th exchange (and the records that came after it).
    init(_ rig: ServiceRig, exchanges: Int? = nil) {
        self.rig = rig
        exchangeMark = exchanges ?? rig.exchanges.count
        recordMark = rig.timedRecords.withLock { records in
            exchanges.map { mark in records.firstIndex { $0.exchanges > mark } ?? records.count } ?? records.count
        }
    }

    var requests: [String] {
        var out: [String] = rig.exchanges.dropFirst(exchangeMark).compactMap { exchange in
            let name: String
            switch exchange.route {
            case .poll: name = "poll since=\(exchange.since.map(String.init) ?? "-")"
            case .status: name = "status"
            case .head: name = "head"
            case .configFile: name = "reread"
            default: return nil
            }
            return "\(Self.seconds(exchange.at)) \(name)"
        }
        if rig.runtime.holdsLongPoll { out.append("\(Self.seconds(rig.runtime.now())) poll") }
        return out
    }

    var reads: [String] {
        rig.exchanges.dropFirst(exchangeMark).compactMap { exchange in
            let name: String
            switch exchange.route {
            case .connections: name = "connections"
            case .folders: name = "folders"
            case .devices: name = "devices"
            case .version: name = "version"
            case .completion(let folder): name = "completion \(folder)"
            case .other: name = "other"
            case .poll, .status, .head, .configFile: return nil
            }
            return "\(Self.seconds(exchange.at)) \(name)"
        }
    }

    var log: [String] {
        rig.timedRecords.withLock { Array($0.dropFirst(recordMark)) }.map {
            "\(Self.seconds($0.at)) \($0.record.textLine())"
        }
    }
    func log(_ message: LogMessage) -> [String] {
        let tag = #"msg="\#(message.rawValue)""#
        return log.filter { $0.contains(tag) }
    }

    var records: [LogRecord] { rig.timedRecords.withLock { Array($0.dropFirst(recordMark)) }.map(\.record) }
    func logged(_ message: LogMessage) -> [LogRecord] { records.filter { $0.message == message } }

    var triggers: [String] { rig.relay.state.withLock { $0.triggerTimes }.map(Self.seconds) }
    var answers: [String] { rig.relay.state.withLock { $0.answerTimes }.map(Self.seconds) }
    var pushes: [String] { rig.relay.state.withLock { $0.pushes }.map(Self.seconds) }
    var swallowed: [String] { rig.relay.state.withLock { $0.swallowed }.map(Self.seconds) }

    var now: String { Self.seconds(rig.runtime.now()) }

    /// `instant` in seconds from the rig's start, to the millisecond: `3`, `0.500`.
    static func seconds(_ instant: Instant) -> String { ServiceRig.decimalSeconds(instant - ServiceRig.t0) }
    /// `seconds` from the rig's start as the views write it (rounded to the millisecond): `9.500`, `3`.
    static func seconds(_ seconds: Double) -> String {
        ServiceRig.decimalSeconds(.milliseconds(Int64((seconds * 1000).rounded())))
    }
}
