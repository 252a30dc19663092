import NotifyCore

/// A readable config.xml.
package struct ConfigFileLocation: Sendable, Equatable {
    /// Path of config.xml.
    package var path: String

    package init(path: String) { self.path = path }

    /// Syncthing's config directory: the directory holding config.xml, `cert.pem` and `https-cert.pem`.
    package var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `https-cert.pem` beside config.xml: the GUI's TLS certificate, to pin when TLS is on
    /// (docs/syncthing-api.md, TLS). It exists even when TLS is off.
    package var httpsCertificatePath: String { ConfigLocator.join(directory, "https-cert.pem") }
}

/// A config.xml (or the config directory holding it) that exists but this process cannot read.
package struct BlockedConfig: Sendable, Equatable {
    /// The config.xml path, or the config directory when that cannot be searched.
    package var path: String
    /// True when `path` is the config directory (its contents cannot be listed, so config.xml is only presumed).
    package var isDirectory: Bool
    package var info: FileInfo
    /// The owner's login name from `/etc/passwd`, when there is one.
    package var ownerName: String?

    package init(path: String, isDirectory: Bool, info: FileInfo, ownerName: String? = nil) {
        self.path = path
        self.isDirectory = isDirectory
        self.info = info
        self.ownerName = ownerName
    }

    /// The same fact as a `ConfigFileError`.
    package var error: ConfigFileError {
        .unreadable(
            permissions: info.permissions, ownerUID: info.ownerUID, ownerGID: info.ownerGID, directory: isDirectory)
    }

    /// One line, without the path: what exists and who owns it.
    package var message: String {
        let what =
            isDirectory
            ? "Syncthing's config directory exists but cannot be searched by this process"
            : "Syncthing's config.xml exists but cannot be read by this process"
        let mode = octal(info.permissions)
        let user = ownerName.map { " (user \($0))" } ?? ""
        return "\(what); it is owned by uid:gid \(info.ownerUID):\(info.ownerGID)\(user) with mode \(mode)"
    }

    /// How to run as that owner (`docker run --user`, systemd `User=`, `runuser` or `setpriv` as root).
    package var fix: String {
        ConfigFileError.runAsOwnerFix(uid: info.ownerUID, gid: info.ownerGID, userName: ownerName)
    }
}

/// The outcome of a search for config.xml.
package enum ConfigLocation: Sendable, Equatable {
    case found(ConfigFileLocation)
    /// Nothing readable, but something exists that this process may not read: the first such file (or, when there is
    /// none, the first unsearchable config directory).
    case unreadable(BlockedConfig)
    /// Nothing at any of the searched paths.
    case notFound(searched: [String])
}
