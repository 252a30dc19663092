import Foundation

/// Where the transport fixtures live: the test bundle's copy of `Fixtures/transport`, or the source tree. Not in
/// the test host: `Bundle.module` is this target's resource bundle.
enum TransportFixtures {
    static var directory: URL {
        if let url = Bundle.module.url(forResource: "transport", withExtension: nil, subdirectory: "Fixtures") {
            return url
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/transport")
    }
}
