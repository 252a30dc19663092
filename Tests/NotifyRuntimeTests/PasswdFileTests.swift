import Foundation
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

/// /etc/passwd read without NSS (`PasswdFile`).
@Suite struct PasswdFileTests {
    func entry(_ text: String, uid: UInt32) -> PasswdFile.Entry? {
        PasswdFile.entry(uid: uid, in: Array(text.utf8))
    }

    @Test func theFirstWellFormedLineOfTheUIDWins() {
        let text = """
            root:x:0:0:root:/root:/bin/bash
            # a comment:x:1000:1000::/nope:/bin/sh
            +nis:x:1000:1000::/nis:/bin/sh
            syncthing:x:1000:1000:Syncthing,,,:/var/lib/syncthing:/usr/sbin/nologin
            dup:x:1000:1000::/home/dup:/bin/sh

            """
        #expect(entry(text, uid: 1000) == PasswdFile.Entry(name: "syncthing", uid: 1000, home: "/var/lib/syncthing"))
        #expect(entry(text, uid: 0) == PasswdFile.Entry(name: "root", uid: 0, home: "/root"))
        #expect(entry(text, uid: 1001) == nil)
    }

    @Test func malformedLinesAreSkipped() {
        let text = [
            "short:x:1000:1000:/home/short",  // six fields
            "long:x:1000:1000::/home/long:/bin/sh:extra",  // eight fields
            "neg:x:-1000:1000::/home/neg:/bin/sh",
            "hex:x:0x3e8:1000::/home/hex:/bin/sh",
            "empty:x::1000::/home/empty:/bin/sh",
            "huge:x:99999999999:1000::/home/huge:/bin/sh",
            "ok:x:1000:1000::/home/ok:/bin/sh",
        ].joined(separator: "\n")
        #expect(entry(text, uid: 1000) == PasswdFile.Entry(name: "ok", uid: 1000, home: "/home/ok"))
    }

    @Test func overlongLinesAreSkipped() {
        let gecos = String(repeating: "g", count: PasswdFile.maxLineBytes)
        let text = "big:x:1000:1000:\(gecos):/home/big:/bin/sh\nok:x:1000:1000::/home/ok:/bin/sh\n"
        #expect(entry(text, uid: 1000)?.name == "ok")
    }

    @Test func crlfAndUnsafeNamesOrHomes() {
        #expect(entry("w:x:5:5::/home/w:/bin/sh\r\n", uid: 5) == PasswdFile.Entry(name: "w", uid: 5, home: "/home/w"))
        #expect(entry("machine$:x:6:6::/:/bin/false", uid: 6)?.name == "machine$")
        #expect(
            entry("evil\u{1B}[31m:x:7:7::/home/e:/bin/sh", uid: 7)
                == PasswdFile.Entry(name: nil, uid: 7, home: "/home/e"))
        #expect(entry("a b:x:8:8::relative:/bin/sh", uid: 8) == PasswdFile.Entry(name: nil, uid: 8, home: nil))
        #expect(entry(":x:9:9::/h\u{7}:/bin/sh", uid: 9) == PasswdFile.Entry(name: nil, uid: 9, home: nil))
        let longName = String(repeating: "n", count: 33)
        #expect(entry("\(longName):x:10:10::/h:/bin/sh", uid: 10)?.name == nil)
    }

    @Test func aMissingOrOversizedFileHasNoEntry() throws {
        #expect(PasswdFile.entry(uid: 0, path: "/nonexistent/passwd") == nil)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("passwd")
        try Data("u:x:42:42::/home/u:/bin/sh\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(PasswdFile.entry(uid: 42, path: path) == PasswdFile.Entry(name: "u", uid: 42, home: "/home/u"))
        #expect(PasswdFile.entry(uid: 42, path: directory.path) == nil)
        let big = Data(repeating: 0x0A, count: PasswdFile.maxBytes) + Data("u:x:42:42::/home/u:/bin/sh\n".utf8)
        try big.write(to: URL(fileURLWithPath: path))
        #expect(PasswdFile.entry(uid: 42, path: path) == nil)
    }
}
