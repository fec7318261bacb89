import ArgumentParser
import VendConfig
import VendPOSIX

/// `--config FILE`, shared by the commands, and its loading.
struct ConfigOption: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config = "/etc/vendstore/vendstore.yaml"

    /// The settings, or every error of the file as FILE:LINE:COLUMN: KEY: PROBLEM on stderr and
    /// exit 78: a usage message would hide them, and systemd must not retry a file that cannot work.
    func load() throws -> StoreSettings {
        do throws(ConfigError) {
            return try StoreConfigLoader.load(file: config)
        } catch {
            StandardError.write(error.description + "\n")
            throw ExitCode(StoreExit.config)
        }
    }
}
