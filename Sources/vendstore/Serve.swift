import ArgumentParser
import Logging
import VendConfig
import VendFleetIngest
import VendFleetStore
import VendMQTT
import VendOffice
import VendPOSIX
import VendSystemd

#if canImport(Glibc)
    import Glibc
#endif

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Subscribe to the fleet's events and retained state and keep them (the service).",
        discussion: """
            Tells systemd READY=1 once the database is open (migrations applied) and the broker \
            client started; the broker may still be connecting, and reconnects by itself. SIGTERM \
            or SIGINT commits what was received, publishes the acknowledgements and exits 0.
            """)

    @OptionGroup var options: ConfigOption

    func run() throws {
        let signals = ProcessSignals.block([SIGTERM, SIGINT])
        let settings = try options.load()
        let logWriter = JournaldLogHandler.bootstrap(level: .info)
        defer { logWriter.flush() }
        let logger = Logger(label: "vendstore")
        let notifier = SystemdNotifier()
        let store: FleetStore
        do {
            store = try openStore(settings)
        } catch {
            logger.critical("cannot open the database (\(settings.database)): \(error)")
            throw ExitCode(StoreExit.unavailable)
        }
        let credentials = try settings.credentialsFile.map { try MQTTCredentials.read($0) }
        let ingestSettings = IngestSettings(
            endpoint: MQTTEndpoint(host: settings.broker.host, port: settings.broker.port, tls: settings.broker.tls), caFile: settings.caFile,
            credentials: credentials, clientID: settings.clientID, topicPrefix: settings.topicPrefix, sharedGroup: settings.sharedGroup,
            sessionExpirySeconds: UInt32(settings.sessionExpirySeconds), batchSize: settings.batchEvents,
            batchWindow: .milliseconds(settings.batchMilliseconds), ackInterval: .milliseconds(settings.ackMilliseconds),
            bufferCapacity: settings.bufferEvents)
        let office: OfficeService?
        // The back office's commands to machines (prices, DEX audits) go on a connection of their own.
        let commands = try settings.office.map { _ in try MachineCommands(settings: ingestSettings, logger: logger) }
        try commands?.start()
        defer { commands?.stop() }
        do {
            office = try settings.office.map { officeSettings in
                try OfficeService(settings: officeSettings, logger: logger, commands: commands, clock: { WallClock.milliseconds }) {
                    try openSQL(settings.database)
                }
            }
        } catch {
            logger.critical("cannot start the back office (office: in \(options.config)): \(error)")
            throw ExitCode(StoreExit.unavailable)
        }
        defer { office?.stop() }
        // Each commit tells the office's live pages which machines changed.
        var afterCommit: (@Sendable (Set<String>) -> Void)?
        if let office { afterCommit = { office.changed($0) } }
        let ingester = try Ingester(settings: ingestSettings, store: store, logger: logger, beforeCommit: Self.killHook(), afterCommit: afterCommit)
        signals.deliver { _ in
            notifier.stopping()
            ingester.stop()
        }
        let status = "storing into \(store.name), broker \(settings.broker.url)"
        try ingester.run {
            notifier.ready(status: status)
            logger.info("vendstore started", metadata: ["database": "\(store.name)", "broker": "\(settings.broker.url)"])
        }
        logger.info("vendstore stopped")
    }

    /// The kill test's hook (Tests/VendFleetStoreTests/ChaosTests.swift): with
    /// VENDSTORE_TEST_KILL_BEFORE_COMMIT=N, vendstore SIGKILLs itself before committing its Nth
    /// batch, after receiving it: the instant libmosquitto has already acknowledged it to the broker.
    static func killHook() -> (@Sendable (Int) -> Void)? {
        guard let text = getenv("VENDSTORE_TEST_KILL_BEFORE_COMMIT"), let target = Int(String(cString: text)) else { return nil }
        return { batch in if batch == target { kill(getpid(), SIGKILL) } }
    }
}

/// Opens the configured database (applying its migrations).
func openStore(_ settings: StoreSettings) throws -> FleetStore {
    switch settings.database {
    case .sqlite(let path):
        return try SQLiteFleetStore(path: path, maxAhead: Int64(settings.maxSequenceAhead), now: WallClock.milliseconds)
    case .postgresql(let conninfo):
        return try PostgresFleetStore(conninfo: conninfo, maxAhead: Int64(settings.maxSequenceAhead), now: WallClock.milliseconds)
    }
}

/// A connection of its own to the configured database (its migrations applied), for the back
/// office and the `user` commands.
func openSQL(_ database: StoreSettings.Database) throws -> FleetSQL {
    switch database {
    case .sqlite(let path): try openFleetSQL(sqlitePath: path, now: WallClock.milliseconds)
    case .postgresql(let conninfo): try openFleetSQL(conninfo: conninfo, now: WallClock.milliseconds)
    }
}
