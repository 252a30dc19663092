import Foundation

/// The Python scripts the tests run, in the checkout: `Tests/Doubles` (servers that stand in for Syncthing and
/// others) and `Tests/Lab` (checkers). Found from this file's path, as they are programs, not bundle resources.
package enum TestScripts {
    package static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    package static func double(_ name: String) -> URL { tests.appendingPathComponent("Doubles/\(name)") }

    package static func lab(_ name: String) -> URL { tests.appendingPathComponent("Lab/\(name)") }
}
