import Foundation

/// Reads a recorded Syncthing 1.19.2 response (copied from shared/fixtures/syncthing-1.19.2).
func fixture(_ name: String) throws -> [UInt8] {
    let url = try #require(Bundle.module.url(forResource: "Fixtures/syncthing-1.19.2/\(name)", withExtension: nil))
    return try [UInt8](Data(contentsOf: url))
}

import Testing
