import ArgumentParser

/// What the package's postinst and the unit's ExecStartPre= ask before starting the service.
struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate the configuration file without connecting to anything.",
        discussion: "Prints the broker and the database and exits 0 when the file is valid; otherwise prints every error and exits 78.")

    @OptionGroup var options: ConfigOption

    func run() throws {
        let settings = try options.load()
        print("\(options.config): valid: broker \(settings.broker.url), database \(settings.database.description)")
    }
}
