import ArgumentParser
import Dispatch
import Logging
import VendConfig
import VendDaemon
import VendFleetIngest
import VendFleetStore
import VendMQTT
import VendPOSIX
import VendText

#if canImport(Glibc)
    import Glibc
#endif

/// `vendstore`: the fleet store: keeps every machine's events, exactly once.
@main
struct VendStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendstore",
        abstract: "The fleet store: keeps every machine's events, exactly once (SQLite or PostgreSQL).",
        subcommands: [Serve.self, Status.self], defaultSubcommand: Serve.self)
}

struct ConfigOption: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config = "/etc/vendstore/vendstore.yaml"

    func load() throws -> StoreSettings {
        do {
            return try StoreConfigLoader.load(file: config)
        } catch {
            throw ValidationError(error.description)
        }
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

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Subscribe to the fleet's events and retained state and keep them (the service).")

    @OptionGroup var options: ConfigOption

    func run() throws {
        let settings = try options.load()
        let logWriter = VenddLogHandler.bootstrap(level: .info)
        defer { logWriter.flush() }
        let logger = Logger(label: "vendstore")
        let store: FleetStore
        do {
            store = try openStore(settings)
        } catch {
            logger.critical("cannot open the database: \(error)")
            throw ExitCode(2)
        }
        let credentials = try settings.credentialsFile.map { try MQTTCredentials.read($0) }
        let ingester = try Ingester(
            settings: IngestSettings(
                endpoint: MQTTEndpoint(host: settings.broker.host, port: settings.broker.port, tls: settings.broker.tls), caFile: settings.caFile,
                credentials: credentials, clientID: settings.clientID, topicPrefix: settings.topicPrefix, sharedGroup: settings.sharedGroup,
                sessionExpirySeconds: UInt32(settings.sessionExpirySeconds), batchSize: settings.batchEvents,
                batchWindow: .milliseconds(settings.batchMilliseconds), ackInterval: .milliseconds(settings.ackMilliseconds),
                bufferCapacity: settings.bufferEvents),
            store: store, logger: logger, beforeCommit: Self.killHook())
        let signals = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { ingester.stop() }
            source.resume()
            return source
        }
        logger.info("vendstore started", metadata: ["database": "\(Self.describe(settings.database))", "broker": "\(settings.broker.url)"])
        try ingester.run()
        logger.info("vendstore stopped")
        _ = signals
    }

    static func describe(_ database: StoreSettings.Database) -> String {
        switch database {
        case .sqlite(let path): "sqlite \(path)"
        case .postgresql: "postgresql"
        }
    }

    /// The kill test's hook (Tests/VendFleetStoreTests/ChaosTests.swift): with
    /// VENDSTORE_TEST_KILL_BEFORE_COMMIT=N, vendstore SIGKILLs itself before committing its Nth
    /// batch, after receiving it: the instant libmosquitto has already acknowledged it to the broker.
    static func killHook() -> (@Sendable (Int) -> Void)? {
        guard let text = getenv("VENDSTORE_TEST_KILL_BEFORE_COMMIT"), let target = Int(String(cString: text)) else { return nil }
        return { batch in if batch == target { kill(getpid(), SIGKILL) } }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print each machine's stored sequence and its gaps, from the database.")

    @OptionGroup var options: ConfigOption

    func run() throws {
        let store = try openStore(try options.load())
        let gaps = Dictionary(grouping: try store.gaps(), by: \.machine)
        var table = TextTable([.left, .right, .right, .left, .left])
        table.add(["machine", "stored", "highest", "gaps", "last commit"])
        for progress in try store.progress() {
            let open = gaps[progress.machine] ?? []
            table.add([
                progress.machine, "\(progress.contiguous)", "\(progress.highest)",
                open.isEmpty ? "-" : open.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" }.joined(separator: ", "),
                progress.updatedAt == 0 ? "-" : Self.utc(progress.updatedAt),
            ])
        }
        print(table.render().joined(separator: "\n"))
        let missing = gaps.values.joined().reduce(Int64(0)) { $0 + $1.last - $1.first + 1 }
        print("\(gaps.count) machines with gaps, \(missing) events missing")
    }

    static func utc(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [CChar](repeating: 0, count: 32)
        strftime(&text, text.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
