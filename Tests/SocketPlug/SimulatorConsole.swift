import Foundation

/// The command line and output of the simulators' executables (cctalk-sim, mdb-sim,
/// dex-handheld), which the HIL harness drives from stdin and reads line by line.
public enum SimulatorConsole {
    /// The argument after `flag` on the command line, if given.
    public static func value(after flag: String) -> String? {
        guard let index = CommandLine.arguments.firstIndex(of: flag), index + 1 < CommandLine.arguments.count else { return nil }
        return CommandLine.arguments[index + 1]
    }

    /// One line on stdout, unbuffered: the HIL harness reads each line as it happens.
    @Sendable public static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
