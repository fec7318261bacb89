import ArgumentParser
import VendConfig
import VendControl

/// `vendstore`: the fleet store: keeps every machine's events, exactly once.
@main
struct VendStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendstore",
        abstract: "The fleet store: keeps every machine's events, exactly once (SQLite or PostgreSQL).",
        discussion: """
            vendstore subscribes to the broker a fleet of vendd machines publishes to, commits each \
            event once by (machine, seq), and publishes per machine, retained, the highest contiguous \
            sequence it holds, so that vendd forgets an event only once it is stored. The service \
            (vendstore.service) runs `vendstore serve` as the vendstore user; `sudo vendstore status` \
            shows how far each machine is stored. With an office: section it also serves the \
            back office (docs/office.md) on loopback; `vendstore user add` makes its users.

            The configuration file (default /etc/vendstore/vendstore.yaml; errors are reported as \
            FILE:LINE:COLUMN: KEY: PROBLEM):

            \(StoreConfigLoader.keys.map { "\($0.key) (default: \($0.default)): \($0.meaning)." }.joined(separator: "\n\n"))

            Files: /etc/vendstore/vendstore.yaml (the configuration), /var/lib/vendstore/fleet.db \
            (the SQLite database, with its -wal and -shm files). Logs go to the journal: \
            journalctl -u vendstore.

            Exit status: 0 after a clean stop (SIGTERM or SIGINT) or a successful command; 78 \
            (EX_CONFIG) when the configuration is invalid; 69 (EX_UNAVAILABLE) when the database \
            cannot be opened or does not exist yet (status); 1 on any other error.
            """,
        version: venddVersion,
        subcommands: [Serve.self, Status.self, CheckConfig.self, UserCommand.self], defaultSubcommand: Serve.self)
}

/// sysexits.h, as vendd's: systemd's RestartPreventExitStatus=78 stops a restart loop on a file
/// that cannot work; a database that cannot be opened (69) may come back, so it is retried.
enum StoreExit {
    static let config: Int32 = 78
    static let unavailable: Int32 = 69
}
