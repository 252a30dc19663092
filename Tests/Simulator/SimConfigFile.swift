import NotifyCore
import NotifyRuntime

/// Syncthing's config.xml on the simulated disk: its text as Syncthing writes it (the GUI address and API key, and
/// the folders' paths, the device names: identifiers the checker looks for in every log line), and whether it is
/// there at all (a NAS volume that went away for a while). The service's re-reads go through the real locator and
/// the real libxml2 parser (`SyncthingConfigFile.parse`), by way of `fileSystem` and `load`.
final class SimConfigFile: @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.
    let directory: String
    var path: String { directory + "/config.xml" }
    var present = true
    private(set) var text = ""
    private(set) var port = 0
    private(set) var key = ""
    /// How many times the service read it.
    private(set) var reads = 0

    init(directory: String) { self.directory = directory }

    /// Syncthing writes its config (temporary file, then rename: never half-written).
    func write(port: Int, key: String, devices: [SimSyncthing.Device], folders: [SimSyncthing.Folder], myID: String) {
        self.port = port
        self.key = key
        present = true
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>\#n<configuration version="37">\#n"#
        for folder in folders {
            xml += #"    <folder id="\#(folder.id)" label="\#(folder.label)" path="\#(folder.path)" type="sendreceive""#
            xml += #" paused="\#(folder.paused)">\#n"#
            for device in folder.devices { xml += #"        <device id="\#(device)"></device>\#n"# }
            xml += "    </folder>\n"
        }
        xml += #"    <device id="\#(myID)" name="home-server"></device>\#n"#
        for device in devices {
            xml += #"    <device id="\#(device.id)" name="\#(device.name)" paused="\#(device.paused)">\#n"#
            xml += "        <address>dynamic</address>\n    </device>\n"
        }
        xml += #"    <gui enabled="true" tls="false" debugging="false">\#n"#
        xml += "        <address>127.0.0.1:\(port)</address>\n        <apikey>\(key)</apikey>\n"
        xml += "        <theme>default</theme>\n    </gui>\n</configuration>\n"
        text = xml
    }

    /// A person edits the file by hand (while Syncthing is stopped): only the GUI address and key change.
    func handEdit(port: Int? = nil, key: String? = nil) {
        if let port {
            text = text.replacingFirst(
                "<address>127.0.0.1:\(self.port)</address>", "<address>127.0.0.1:\(port)</address>")
            self.port = port
        }
        if let key {
            text = text.replacingFirst("<apikey>\(self.key)</apikey>", "<apikey>\(key)</apikey>")
            self.key = key
        }
    }

    /// The file system the locator asks: the config directory always exists; the file is there or not.
    var fileSystem: SimFileSystem { SimFileSystem(file: self) }

    /// Reads the file as `SyncthingConfigFile.load` would, through the real parser.
    func load(_ path: String) throws(ConfigFileError) -> SyncthingGUIConfig {
        reads += 1
        guard present, path == self.path else { throw .notFound }
        return try SyncthingConfigFile.parse(Array(text.utf8))
    }
}

/// `ConfigFileSystem` over `SimConfigFile`.
struct SimFileSystem: ConfigFileSystem {
    let file: SimConfigFile
    private static let info = FileInfo(ownerUID: 0, ownerGID: 0, permissions: 0o600)

    func status(of path: String) -> PathStatus {
        if path == file.path { return file.present ? .file(Self.info) : .missing }
        if file.directory.hasPrefix(path) { return .directory(FileInfo(ownerUID: 0, ownerGID: 0, permissions: 0o700)) }
        return .missing
    }

    func isReadable(_ path: String) -> Bool { path == file.path && file.present }
    func isEmptyDirectory(_ path: String) -> Bool { path == file.directory && !file.present }
}

extension String {
    /// The string with the first occurrence of `target` replaced.
    func replacingFirst(_ target: String, _ replacement: String) -> String {
        guard let range = utf8Range(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}
