// vaultsync-fuzz: the libFuzzer driver for FuzzTargets (fuzz/README.md; scripts/fuzz runs it).
//
// Built with `-DFUZZING` and `-sanitize=fuzzer,address` it is a libFuzzer binary: `vaultsync-fuzz TARGET [libFuzzer
// flags] [corpus dirs or files]` (or VAULTSYNC_FUZZ_TARGET=TARGET). Any invariant a target reports aborts the run, so
// libFuzzer keeps the input as a crash artifact. Built normally (`swift build`) it replays files instead:
// `vaultsync-fuzz TARGET FILE...` runs each file once and prints the invariants it broke, to reproduce an artifact
// without sanitizers.
//
// `LLVMFuzzerRunDriver` is called from this main (SwiftPM cannot link `-parse-as-library` with libFuzzer's own main),
// and everything that needs libFuzzer is compiled only under FUZZING, so that the normal build links.
import FuzzTargets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private let targetVariable = "VAULTSYNC_FUZZ_TARGET"

private func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

private func usage() -> String {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
    #if FUZZING
        return "usage: vaultsync-fuzz {\(names)} [libFuzzer flags] [corpus...]   (or --list)"
    #else
        return "usage: vaultsync-fuzz {\(names)} FILE...   (replays inputs; or --list)\n"
            + "a fuzzing build needs -DFUZZING: see fuzz/README.md or run scripts/fuzz"
    #endif
}

/// Takes the target from the first argument (removing it, so libFuzzer never sees it) or from the environment, and
/// puts it into the environment for the processes libFuzzer may start (-fork, -jobs, -minimize_crash).
private func selectTarget(_ arguments: inout [String]) -> FuzzTarget? {
    if arguments.count > 1, let target = FuzzTarget(rawValue: arguments[1]) {
        arguments.remove(at: 1)
        setenv(targetVariable, target.rawValue, 1)
        return target
    }
    return getenv(targetVariable).flatMap { FuzzTarget(rawValue: String(cString: $0)) }
}

var arguments = CommandLine.arguments
if arguments.count == 2 && arguments[1] == "--list" {
    for target in FuzzTarget.productTargets { print(target.rawValue) }
    exit(0)
}
guard let target = selectTarget(&arguments) else {
    printError(usage())
    exit(64)
}

#if FUZZING
    nonisolated(unsafe) private var selected = target

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        let failures = selected.run(input)
        if !failures.isEmpty {
            printError(
                "vaultsync-fuzz \(selected.rawValue): invariant broken:\n  " + failures.joined(separator: "\n  "))
            abort()
        }
        return 0
    }

    @_silgen_name("LLVMFuzzerRunDriver")
    private func runDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    var argc = Int32(arguments.count)
    let status = cArguments.withUnsafeMutableBufferPointer { buffer in
        var argv = buffer.baseAddress
        return runDriver(&argc, &argv, fuzzOneInput)
    }
    exit(status)
#else
    guard arguments.count > 1 else {
        printError(usage())
        exit(64)
    }
    var broken = 0
    for path in arguments.dropFirst() {
        guard let file = fopen(path, "rb") else {
            printError("vaultsync-fuzz: cannot open \(path)")
            exit(66)
        }
        var input: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            input += buffer[..<count]
        }
        fclose(file)
        let failures = target.run(input)
        if failures.isEmpty {
            print("ok      \(path)")
        } else {
            broken += 1
            print("BROKEN  \(path)\n  " + failures.joined(separator: "\n  "))
        }
    }
    exit(broken == 0 ? 0 : 1)
#endif
