import ArgumentParser
import VendControl

@main
struct Vendd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendd",
        abstract: "The vending-machine controller daemon.",
        version: venddVersion,
        subcommands: [Run.self, CheckConfig.self, ResetState.self])
}

/// sysexits.h: the configuration is wrong. systemd's RestartPreventExitStatus=78 stops a
/// restart loop on a file that cannot work.
let exitConfigError: Int32 = 78

/// The path the service uses when none is given.
let defaultConfigPath = "/etc/vendd/vendd.yaml"
