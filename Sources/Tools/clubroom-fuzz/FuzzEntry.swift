import FuzzChecks

#if canImport(Glibc)
import Glibc
#endif

/// Writes text to stderr with `write(2)`.
func printError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

#if CLUBROOM_LIBFUZZER
// Built by fuzz/build with -sanitize=fuzzer,address: libFuzzer supplies `main`, which calls the two functions
// below. The target is named by `FUZZ_TARGET` in the environment, which libFuzzer's child processes inherit.

nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    let name = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? ""
    if name == "list" {
        print(FuzzTarget.all.map(\.name).joined(separator: "\n"))
        exit(0)
    }
    guard let target = FuzzTarget.named(name) else {
        let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
        printError("clubroom-fuzz: set FUZZ_TARGET to one of: \(names) (or to list)\n")
        exit(2)
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = selected else { return 0 }
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try target.check(input)
    } catch {
        fatalError("\(target.name): \(error)")
    }
    return 0
}

#else

/// Without libFuzzer: lists the targets, replays inputs through a target's checks, or writes the seed corpus.
@main
struct FuzzTool {
    static let usage = """
        USAGE: clubroom-fuzz list
               clubroom-fuzz replay TARGET FILE...
               clubroom-fuzz seeds DIRECTORY

        The fuzz targets themselves are built and run by `make fuzz` (see docs/fuzzing.md).

        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "list":
            for target in FuzzTarget.all { print("\(target.name)\t\(target.summary)") }
        case "replay" where arguments.count >= 3:
            guard let target = FuzzTarget.named(arguments[1]) else { fail("no fuzz target \(arguments[1])") }
            var failures = 0
            for path in arguments.dropFirst(2) {
                guard let input = read(path) else { fail("cannot read \(path)") }
                do {
                    try target.check(input)
                } catch {
                    print("\(path): \(error)")
                    failures += 1
                }
            }
            print("\(target.name): \(arguments.count - 2 - failures) passed, \(failures) failed")
            exit(failures == 0 ? 0 : 1)
        case "seeds" where arguments.count == 2:
            for target in FuzzTarget.all {
                let directory = arguments[1] + "/" + target.name
                mkdir(directory, 0o755)
                for (index, seed) in target.seeds.enumerated() {
                    let path = directory + "/seed-\(index < 10 ? "0" : "")\(index)"
                    guard write(seed, to: path) else { fail("cannot write \(path)") }
                }
            }
        default:
            printError(usage)
            exit(2)
        }
    }

    static func fail(_ message: String) -> Never {
        printError("clubroom-fuzz: \(message)\n")
        exit(1)
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return ferror(file) == 0 ? bytes : nil
    }

    static func write(_ bytes: [UInt8], to path: String) -> Bool {
        guard let file = fopen(path, "wb") else { return false }
        defer { fclose(file) }
        return bytes.isEmpty || fwrite(bytes, 1, bytes.count, file) == bytes.count
    }
}

#endif
