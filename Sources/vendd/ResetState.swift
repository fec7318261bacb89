import ArgumentParser
import VendDaemon

struct ResetState: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-state",
        abstract: "Move the saved state aside so that vendd starts an empty machine (after corruption).",
        discussion: """
            Run it with vendd stopped, as the user vendd runs as (sudo -u vendd vendd reset-state). \
            The old files are kept in a reset-<time> directory beside them. Credit, stock and sales \
            start from zero: count the cash box and restock.
            """)

    @Option(help: "The configuration file (for state.directory).")
    var config: String = defaultConfigPath

    @Option(help: "The state directory (default: state.directory from the configuration).")
    var stateDir: String?

    func run() throws {
        let status = Daemon.resetState(configPath: config, stateDirectory: stateDir)
        if status != 0 { throw ExitCode(status) }
    }
}
