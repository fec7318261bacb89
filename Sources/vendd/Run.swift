import ArgumentParser
import VendDaemon

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the machine (in the foreground; systemd runs it as a service).",
        discussion: """
            Exit status: 0 after a clean stop; 78 when the configuration is invalid; 65 when the saved \
            state is corrupt (see README: Recovering state); 75 when another vendd uses the same state \
            directory or answers on the same control socket; 69 when the hardware cannot be used.
            """)

    @Option(help: "The configuration file.")
    var config: String = defaultConfigPath

    @Flag(help: "Use simulated buttons, relays, drop sensors and coin acceptor instead of the GPIO chip and serial port of the configuration.")
    var simulate = false

    @Option(help: "Where credit, stock and sales are kept (default: state.directory from the configuration).")
    var stateDir: String?

    @Option(help: "The control socket vendctl talks to (default: control.socket from the configuration).")
    var socket: String?

    @Flag(help: "Start with an empty machine after the saved state was found corrupt. The old state is moved aside; count the cash box and restock.")
    var resetState = false

    @Option(
        help: ArgumentHelp(
            "With --simulate: append every change of a simulated GPIO line to this file, stamped with CLOCK_MONOTONIC (for timing measurements).",
            discussion: "One line per change: NANOSECONDS CHIP LINE in|out 1|0 (1 = active).", valueName: "file"))
    var lineLog: String?

    func validate() throws {
        if lineLog != nil, !simulate { throw ValidationError("--line-log records the simulated chip's lines: it needs --simulate") }
    }

    func run() async throws {
        let status = await Daemon.run(
            DaemonOptions(
                configPath: config, simulate: simulate, stateDirectory: stateDir, socketPath: socket, resetState: resetState,
                lineLog: lineLog))
        if status != 0 { throw ExitCode(status) }
    }
}
