import Foundation

#if FUZZING
    import CLibFuzzer
#endif

/// What each harness's `@main` calls with its `LLVMFuzzerTestOneInput`.
///
/// SwiftPM links an executable target's `@main` as the program's `main` (it renames it and points
/// `main` at it), so libFuzzer's own `main` cannot be used. With `-DFUZZING` (scripts/fuzz) the
/// harness hands the command line to libFuzzer's driver instead; in a normal build it replays the
/// files and directories it is given, so a corpus or a crash reproduces without the sanitizers.
public enum FuzzDriver {
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    public static func main(_ testOneInput: TestOneInput) -> Never {
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
        #else
            exit(replay(Array(CommandLine.arguments.dropFirst()), through: testOneInput))
        #endif
    }

    /// Runs every file named, and every file in every directory named, through `testOneInput`.
    /// Arguments starting with `-` are libFuzzer flags and are ignored, so the same command line
    /// works in both builds.
    static func replay(_ arguments: [String], through testOneInput: TestOneInput) -> Int32 {
        let name = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "fuzz"
        let paths = arguments.filter { !$0.hasPrefix("-") }
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: \(name) FILE|DIRECTORY... (replays inputs; build with scripts/fuzz to fuzz)\n".utf8))
            return 2
        }
        var count = 0
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("\(name): \(path) does not exist\n".utf8))
                return 2
            }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                    .filter { !$0.hasPrefix(".") }.sorted().map { "\(path)/\($0)" }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("\(name): cannot read \(file)\n".utf8))
                    return 2
                }
                _ = data.withUnsafeBytes { raw in
                    testOneInput(raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
                }
                count += 1
            }
        }
        print("\(name): replayed \(count) input\(count == 1 ? "" : "s") without a crash")
        return 0
    }
}
