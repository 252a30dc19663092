import Testing

@testable import NotifyCore

/// The rule behind exit 75 or 78 when SYNCTHING_CONFIG's path gave no config.xml: what may still appear is
/// temporary, what cannot be a config.xml is a configuration error.
@Suite("Missing config.xml")
struct MissingConfigTests {
    typealias Entry = MissingConfig.Entry
    typealias Ancestor = (entry: Entry, emptyDirectory: () -> Bool)

    /// Explains with the given facts; a fact left nil is one the branch must not ask for.
    static func explain(
        _ path: Entry, inner: Entry? = nil, isEmpty: Bool? = nil, parent: Entry? = nil, above: [(Entry, Bool)] = []
    ) -> (problem: MissingConfig.Problem, atInner: Bool) {
        func unneeded(_ name: String) { Issue.record("asked for \(name), which this branch does not need") }
        let ancestors: [Ancestor] = above.map { (entry, empty) in (entry: entry, emptyDirectory: { empty }) }
        return MissingConfig.explain(
            path: path,
            inner: {
                if inner == nil { unneeded("config.xml") }
                return inner ?? .missing
            },
            isEmpty: {
                if isEmpty == nil { unneeded("emptiness") }
                return isEmpty ?? false
            },
            parent: {
                if parent == nil { unneeded("the parent") }
                return parent ?? .missing
            }, above: ancestors)
    }

    @Test("a directory: its config.xml not a file, missing in an empty or a filled directory, or a file")
    func directory() {
        #expect(Self.explain(.directory, inner: .directory) == (.notAFile, true))
        #expect(Self.explain(.directory, inner: .other) == (.notAFile, true))
        #expect(Self.explain(.directory, inner: .missing, isEmpty: true) == (.notThereYet, true))
        #expect(Self.explain(.directory, inner: .missing, isEmpty: false) == (.directoryWithoutConfig, false))
        #expect(Self.explain(.directory, inner: .file) == (.notThereYet, true))
    }

    @Test("a FIFO, socket or device is no config.xml; a file that appeared since is read next time")
    func otherAndFile() {
        #expect(Self.explain(.other) == (.notAFile, false))
        #expect(Self.explain(.file) == (.notThereYet, false))
    }

    @Test("nothing at the path: an existing parent, or an empty directory as the nearest existing ancestor above")
    func missing() {
        #expect(Self.explain(.missing, parent: .directory) == (.notThereYet, false))
        #expect(Self.explain(.missing, parent: .missing) == (.noParentDirectory, false))
        #expect(
            Self.explain(.missing, parent: .missing, above: [(.missing, false), (.directory, true)]) == (
                .notThereYet, false
            ))
        #expect(Self.explain(.missing, parent: .missing, above: [(.directory, false)]) == (.noParentDirectory, false))
        #expect(Self.explain(.missing, parent: .missing, above: [(.file, true)]) == (.noParentDirectory, false))
        // The nearest existing ancestor decides, not one further up.
        #expect(
            Self.explain(.missing, parent: .missing, above: [(.directory, false), (.directory, true)])
                == (.noParentDirectory, false))
        #expect(Self.explain(.missing, parent: .file, above: [(.directory, true)]) == (.notThereYet, false))
    }

    @Test("only a problem that may still go away is temporary (75); the others are configuration errors (78)")
    func exitStatus() {
        for problem in MissingConfig.Problem.allCases {
            #expect(problem.mayStillAppear == (problem == .notThereYet))
            let status = ConfigWait.exitStatus(mayStillAppear: problem.mayStillAppear)
            #expect(status == (problem == .notThereYet ? .temporary : .configuration))
        }
    }
}
