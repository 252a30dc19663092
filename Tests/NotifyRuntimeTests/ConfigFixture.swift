import Foundation

/// Fixture files under `Fixtures/config/`. Not in the test host: `Bundle.module` is this target's resource bundle.
enum ConfigFixture {
    static func url(_ name: String) -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/config") else {
            fatalError("missing fixture \(name)")
        }
        return url
    }

    static func path(_ name: String) -> String { url(name).path }

    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: url(name))) }
}
