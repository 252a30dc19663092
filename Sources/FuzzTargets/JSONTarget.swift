import JSONOracle
import NotifyCore

/// `JSONReader` through every model, against Foundation's `JSONDecoder` (`Oracle`, the Decodable models as they were).
///
/// Invariants: on a body the reader takes as JSON every model reads the same as with `JSONDecoder` (and on any other
/// body none is read: `Oracle.disagreements`); a valid array or object cut anywhere before its end is rejected.
func fuzzJSON(_ input: [UInt8], _ check: inout InvariantCheck) {
    for line in Oracle.disagreements(input) { check.fail(line) }
    guard input.count <= 4096, JSONReader.isValid(input), let end = input.lastIndex(where: { !isWhitespace($0) }),
        input[end] == UInt8(ascii: "]") || input[end] == UInt8(ascii: "}")
    else { return }
    for cut in 0..<end where JSONReader.isValid(Array(input[..<cut])) {
        check.fail("the text cut at byte \(cut) of \(end + 1) is accepted")
    }
}

private func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
