import ArgumentParser
import VendConfig
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file without touching any hardware.",
        discussion: """
            Prints a one-screen summary and exits 0 when the file is valid. Otherwise prints every \
            error as FILE:LINE:COLUMN: KEY: PROBLEM and exits 78 (EX_CONFIG). The control groups are \
            checked on this system: one that does not exist is an error (the package's own groups, \
            before the package is installed, only a note).
            """)

    @Argument(help: "The configuration file.")
    var file: String = defaultConfigPath

    @Flag(help: "Print the configuration with every default filled in, instead of the summary.")
    var print = false

    func run() throws {
        do throws(ConfigError) {
            let config = try ConfigLoader.load(file: file)
            // The groups are checked against this system, where the file is about to be used.
            let groups = config.controlGroupProblems { getgrnam($0) != nil }
            if let error = config.controlGroupError(groups) { throw error }
            Swift.print(print ? config.resolvedYAML : config.summary)
            for note in groups.notes { Swift.print("note: \(note)") }
            for warning in config.warnings { Swift.print(warning.description) }
        } catch {
            StandardError.write(error.description + "\n")
            throw ExitCode(exitConfigError)
        }
    }
}
