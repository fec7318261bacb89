import ArgumentParser
import VendConfig
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

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

    /// Exit 69 when the SQLite file does not exist yet: a command run as root would create it
    /// root's, and the service could not write it. `vendstore serve` creates it, as its user.
    func requireDatabase(_ settings: StoreSettings) throws {
        if case .sqlite(let path) = settings.database, access(path, F_OK) != 0 {
            StandardError.write(
                "vendstore: no database at \(path) (database.sqlite in \(config)): it is created when the service first starts (systemctl start vendstore)\n"
            )
            throw ExitCode(StoreExit.unavailable)
        }
    }
}
