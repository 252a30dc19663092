import NotifyCore
import NotifyRuntime

/// config.xml bytes through `SyncthingConfigFile.parse(_:)`.
///
/// Invariants: a document with a NUL byte is `.malformed(.encoding)`; an accepted document has no DOCTYPE or entity
/// declaration and names `configuration` and `gui`; `.malformed(.doctype)` only for a document that has one; the
/// address and key come back trimmed, the key never empty; the description does not depend on the key (it is
/// redacted); and the result rendered as a fresh config.xml parses to the same result.
func fuzzConfigXML(_ input: [UInt8], _ check: inout InvariantCheck) {
    let declares = contains(input, "<!DOCTYPE") || contains(input, "<!ENTITY")
    let hasNUL = input.contains(0)
    let gui: SyncthingGUIConfig
    do {
        gui = try SyncthingConfigFile.parse(input)
    } catch {
        switch error {
        case .malformed(.doctype): check.expect(declares, "refused as a DOCTYPE without one in the input")
        case .malformed(.encoding), .tooLarge: break
        case .malformed, .noGUIElement: check.expect(!hasNUL, "a NUL byte did not give .malformed(.encoding)")
        default: check.fail("parse(_:) threw a file error: \(error)")  // `default`: new file errors need no change
        }
        return
    }
    check.expect(!hasNUL, "accepted a document with a NUL byte")
    check.expect(!declares, "accepted a document with a DOCTYPE or entity declaration")
    check.expect(
        contains(input, "configuration") && contains(input, "gui"), "accepted a document without <configuration><gui>")
    if let key = gui.apiKey {
        check.expect(!key.isEmpty && isUnicodeTrimmed(key), "API key empty or not trimmed: \(gui.apiKey ?? "")")
    }
    if let address = gui.address {
        check.expect(isUnicodeTrimmed(address), "address not trimmed: \(address)")
    }
    var otherKey = gui
    if otherKey.apiKey != nil { otherKey.apiKey = "k" }
    check.expect(
        gui.description == otherKey.description && String(reflecting: gui) == String(reflecting: otherKey),
        "the description shows the API key")

    let rendered = renderConfigXML(gui)
    do {
        let again = try SyncthingConfigFile.parse(Array(rendered.utf8))
        check.expect(again == gui, "round trip changed \(gui) into \(again)")
    } catch {
        check.fail("the rendered config.xml does not parse (\(error)): \(rendered)")
    }
}

/// A minimal config.xml as Syncthing writes it, holding `gui`'s settings.
func renderConfigXML(_ gui: SyncthingGUIConfig) -> String {
    var xml = "<configuration version=\"37\">\n"
    xml += "    <gui enabled=\"\(gui.enabled)\" tls=\"\(gui.tls)\" debugging=\"false\">\n"
    if let address = gui.address { xml += "        <address>\(xmlEscaped(address))</address>\n" }
    if let key = gui.apiKey { xml += "        <apikey>\(xmlEscaped(key))</apikey>\n" }
    xml += "        <theme>default</theme>\n    </gui>\n</configuration>\n"
    return xml
}
