import Foundation
import Testing

/// Reads a recorded Syncthing response: 1.19.2 (copied from shared/fixtures/syncthing-1.19.2), or another `version`
/// (1.29.5 and 2.1.3: recorded by Tests/Lab/stversions.py, see docs/syncthing-versions.md).
func fixture(_ name: String, version: String = "1.19.2") throws -> [UInt8] {
    let url = try #require(
        Bundle.module.url(forResource: "Fixtures/syncthing-\(version)/\(name)", withExtension: nil))
    return try [UInt8](Data(contentsOf: url))
}
