import Foundation
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

@Suite struct PublicKeyPinTests {
    @Test func pinEqualsTheOpenSSLPipeline() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let expected = try certificate.opensslPin()
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: certificate.certPath)))
        #expect(PublicKeyPin.sha256Pin(certificatePEM: pem) == expected)
        #expect(PublicKeyPin.sha256Pin(certificateFile: certificate.certPath) == expected)
        #expect(expected.hasPrefix("sha256//") && expected.count == "sha256//".count + 44)
    }

    @Test func differentKeysGiveDifferentPins() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try SelfSignedCertificate(in: directory, name: "a")
        let second = try SelfSignedCertificate(in: directory, name: "b")
        let pinA = try #require(PublicKeyPin.sha256Pin(certificateFile: first.certPath))
        let pinB = try #require(PublicKeyPin.sha256Pin(certificateFile: second.certPath))
        #expect(pinA != pinB)
    }

    @Test func otherBlocksBeforeTheCertificateAreSkipped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let key = try Data(contentsOf: URL(fileURLWithPath: certificate.keyPath))
        let cert = try Data(contentsOf: URL(fileURLWithPath: certificate.certPath))
        let combined = [UInt8](Data("comment line\n".utf8) + key + cert)
        #expect(PublicKeyPin.sha256Pin(certificatePEM: combined) == (try certificate.opensslPin()))
    }

    @Test func notACertificateGivesNil() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: certificate.certPath)))
        let key = try [UInt8](Data(contentsOf: URL(fileURLWithPath: certificate.keyPath)))
        let der = try [UInt8](run(["openssl", "x509", "-in", certificate.certPath, "-outform", "der"]))
        var corrupted = pem
        corrupted[pem.count / 2] = UInt8(ascii: "*")
        let inputs: [(String, [UInt8])] = [
            ("empty", []),
            ("text", Array("hello".utf8)),
            ("private key", key),
            ("DER instead of PEM", der),
            ("first half", Array(pem[..<(pem.count / 2)])),
            ("without END line", Array(pem[..<(pem.count - 27)])),
            ("corrupted base64", corrupted),
            ("zeros", [UInt8](repeating: 0, count: 4096)),
            ("larger than 1 MiB", pem + [UInt8](repeating: 0x0A, count: 1 << 20)),
        ]
        for (name, input) in inputs {
            #expect(PublicKeyPin.sha256Pin(certificatePEM: input) == nil, "\(name)")
        }
    }

    @Test func hostileFixturesGiveNil() throws {
        let directory = TransportFixtures.directory.appendingPathComponent("hostile-pem")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names.count >= 10)
        for name in names {
            let path = directory.appendingPathComponent(name).path
            #expect(PublicKeyPin.sha256Pin(certificateFile: path) == nil, "\(name)")
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(PublicKeyPin.sha256Pin(certificatePEM: bytes) == nil, "\(name)")
        }
    }

    @Test func unreadableOrSpecialFilesGiveNil() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let big = directory.file("big.pem")
        var padded = try Data(contentsOf: URL(fileURLWithPath: certificate.certPath))
        padded.append(Data(repeating: 0x0A, count: 1 << 20))
        try padded.write(to: URL(fileURLWithPath: big))
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [directory.file("missing.pem"), directory.path, "/dev/null", fifo, big, "", "bad\0path"] {
            #expect(PublicKeyPin.sha256Pin(certificateFile: path) == nil, "\(path)")
        }
    }

    @Test func base64MatchesRFC4648() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (input, output) in vectors {
            #expect(PublicKeyPin.base64(Array(input.utf8)) == output)
        }
        #expect(PublicKeyPin.base64([0xFB, 0xFF, 0xBF]) == "+/+/")
    }
}
