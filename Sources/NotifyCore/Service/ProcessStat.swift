/// Reads Linux's `/proc/<pid>/stat` line. Pure: the bytes go in.
package enum ProcessStat {
    /// Field 22, `starttime`: when the process started, in clock ticks since boot. The second field (the command
    /// name, in parentheses) may itself hold spaces and parentheses, so fields are counted after the last `)`.
    /// - Returns: nil when the line does not have that field as a decimal number.
    package static func startTicks(_ bytes: some BidirectionalCollection<UInt8>) -> Int64? {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After ")": field 3 (state) onwards; field 22 is the 20th of them.
        let fields = bytes[bytes.index(after: close)...].split(separator: UInt8(ascii: " "))
        guard fields.count >= 20 else { return nil }
        let field = fields[fields.index(fields.startIndex, offsetBy: 19)]
        guard !field.isEmpty, field.count <= 19, field.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(String(decoding: field, as: UTF8.self))
    }

    /// `startTicks` of a process that has not ended: nil also for a zombie (state `Z`, field 3: killed, not yet
    /// reaped by its parent, it keeps its entry and its start) or a dead one (`X`, `x`).
    package static func runningStartTicks(_ bytes: some BidirectionalCollection<UInt8>) -> Int64? {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let state = bytes[bytes.index(after: close)...].first { $0 != UInt8(ascii: " ") }
        guard let state, ![UInt8(ascii: "Z"), UInt8(ascii: "X"), UInt8(ascii: "x")].contains(state) else { return nil }
        return startTicks(bytes)
    }
}
