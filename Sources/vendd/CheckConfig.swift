import ArgumentParser
import VendConfig
import VendPOSIX

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file without touching any hardware.",
        discussion: """
            Prints a one-screen summary and exits 0 when the file is valid. Otherwise prints every \
            error as FILE:LINE:COLUMN: KEY: PROBLEM and exits 78 (EX_CONFIG).
            """)

    @Argument(help: "The configuration file.")
    var file: String = defaultConfigPath

    @Flag(help: "Print the configuration with every default filled in, instead of the summary.")
    var print = false

    func run() throws {
        do {
            let config = try ConfigLoader.load(file: file)
            Swift.print(print ? config.resolvedYAML : config.summary)
        } catch {
            StandardError.write(error.description + "\n")
            throw ExitCode(exitConfigError)
        }
    }
}
