import NotifyCore
import Testing

@Suite("Device ID shape")
struct DeviceIDTests {
    @Test(
        "8 groups of 7 base32 characters, with or without the dashes; nothing else",
        arguments: [
            ("27CDMTM-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQA", true),
            ("27CDMTMYXY5LTB36HECI7PHRY24XM3PY26FGAVITONZ7JEEZ2X5GOIQA", true), ("27CDMTM", false),
            ("27cdmtm-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQA", false),
            ("27CDMTM-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQ\"", false), ("", false),
        ])
    func wellFormed(value: String, valid: Bool) {
        #expect(DeviceID.isWellFormed(value) == valid)
    }
}
