import VendYAML

/// vendstore's file (docs/fleet-store.md): the broker it reads the fleet from, the database it
/// keeps it in, and how it batches.
public struct StoreSettings: Sendable, Equatable {
    public enum Database: Sendable, Equatable {
        /// One file: one operator, one box.
        case sqlite(path: String)
        /// A libpq connection string: a fleet, possibly several vendstores.
        case postgresql(conninfo: String)
    }

    public let broker: MQTTSettings.Broker
    public let credentialsFile: String?
    public let caFile: String?
    /// The broker keeps this client's session while vendstore is away: unique per vendstore.
    public let clientID: String
    public let topicPrefix: String
    /// MQTT 5 shared subscription group (`$share/<group>/…`): vendstores in one group split the fleet's messages.
    public let sharedGroup: String?
    public let sessionExpirySeconds: Int
    public let database: Database
    public let batchEvents: Int
    public let batchMilliseconds: Int
    public let ackMilliseconds: Int
    public let maxSequenceAhead: Int
    public let bufferEvents: Int
    /// The back office (`office:`); nil: vendstore serves none.
    public let office: OfficeSettings?
}

/// For logs and messages: the engine and the file, never the connection string (it may hold a password).
extension StoreSettings.Database: CustomStringConvertible {
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite \(path)"
        case .postgresql: "postgresql"
        }
    }
}

/// Reads vendstore's file with the same rules and messages as vendd's (file:line:col, unknown
/// keys with suggestions).
public enum StoreConfigLoader {
    public static let defaultDatabase = "/var/lib/vendstore/fleet.db"

    /// Every key of the file with its default and meaning: what vendstore(8) prints, and what
    /// docs/fleet-store.md's table must list (StoreConfigTests holds the three together).
    public static let keys: [(key: String, default: String, meaning: String)] = [
        ("mqtt.broker", "required", "mqtts://host:8883, or mqtt://host:1883 with allow_plaintext: true"),
        ("mqtt.allow_plaintext", "false", "allow mqtt://"),
        ("mqtt.ca_file", "required with mqtts", "the CA that signed the broker's certificate"),
        ("mqtt.credentials_file", "none", "one line username:password, mode 0600"),
        ("mqtt.client_id", "vendstore", "the broker keeps this client's session: unique per vendstore"),
        ("mqtt.session_expiry_hours", "168", "how long the broker keeps the session (and queues events) while vendstore is away"),
        ("mqtt.topic_prefix", "vendd", "vendd's topic_prefix"),
        ("mqtt.shared_group", "none", "subscribe as $share/<group>/... (MQTT 5 shared subscriptions): vendstores in one group split the messages"),
        ("database.sqlite", defaultDatabase, "an SQLite file (absolute path)"),
        ("database.postgresql", "none", "a libpq connection string, e.g. \"host=/run/postgresql dbname=fleet\" (instead of sqlite)"),
        ("ingest.batch_events", "500", "events per transaction at most"),
        ("ingest.batch_milliseconds", "20", "how long the first event of a batch waits for others"),
        ("ingest.ack_milliseconds", "100", "acks are coalesced: each machine's latest, at most this often"),
        ("ingest.max_sequence_ahead", "1000000", "a sequence further than this past the stored one is refused"),
        (
            "ingest.buffer_events", "100000",
            "events waiting for the database at most; past it new ones are dropped (logged) and machines send them again"
        ),
        ("office.listen", "127.0.0.1:8090", "the back office's address and port (with an office: section; docs/office.md)"),
        (
            "office.tls_proxy", "false",
            "a TLS reverse proxy on this host forwards to the office: cookies are Secure, X-Forwarded-For names the client"
        ),
        (
            "office.plain_http_beyond_loopback", "false",
            "allow listening beyond loopback on plain HTTP (passwords and cookies in clear on that network; logged at start)"
        ),
        ("office.session_hours", "12", "how long a login lasts"),
        ("office.outbox_alert_events", "100", "a machine with this many events waiting in its outbox has an alert"),
        ("office.dex_alert_days", "14", "a machine whose DEX audit no handheld read for this many days has an alert"),
        ("office.currencies[].code", "none", "a currency the machines send (ISO 4217), shown with the format below"),
        ("office.currencies[].format", "none", "how its amounts are shown: {amount} once, e.g. \"{amount}원\" (else \"1,200 KRW\")"),
        ("office.currencies[].grouping_separator", ",", "between groups of three digits"),
        ("office.currencies[].decimal_separator", ".", "before the minor digits"),
    ]

    public static func load(file: String) throws(ConfigError) -> StoreSettings {
        try parse(ConfigLoader.readText(file, example: "/etc/vendstore/vendstore.yaml", reader: "vendstore"), file: file)
    }

    public static func parse(_ text: String, file: String) throws(ConfigError) -> StoreSettings {
        try ConfigLoader.parseDocument(text, file: file, template: "config/vendstore.yaml") { root, sink in
            ConfigParser(sink: sink).parseStore(root)
        }
    }
}

extension ConfigParser {
    func parseStore(_ root: Node) -> StoreSettings? {
        guard let top = MappingReader(root, path: .root, sink: sink) else { return nil }
        let mqtt = top.nested("mqtt")
        let database = top.nested("database", required: false).map(parseDatabase) ?? .some(.sqlite(path: StoreConfigLoader.defaultDatabase))
        let ingest = top.nested("ingest", required: false)
        let office = top.nested("office", required: false).map(parseOffice)
        top.finish()
        guard let mqtt else { return nil }

        let connection = parseBrokerConnection(mqtt)
        let clientID = mqtt.string("client_id", required: false) ?? "vendstore"
        let sharedGroup = mqtt.string("shared_group", required: false)
        let expiryHours = mqtt.int("session_expiry_hours", in: 1...8760, default: 168)
        mqtt.finish()

        let batchEvents = ingest?.int("batch_events", in: 1...10_000, default: 500) ?? 500
        let batchMilliseconds = ingest?.int("batch_milliseconds", in: 1...10_000, default: 20) ?? 20
        let ackMilliseconds = ingest?.int("ack_milliseconds", in: 1...60_000, default: 100) ?? 100
        let ahead = ingest?.int("max_sequence_ahead", in: 1...1_000_000_000, default: 1_000_000) ?? 1_000_000
        let bufferEvents = ingest?.int("buffer_events", in: 1_000...10_000_000, default: 100_000) ?? 100_000
        ingest?.finish()

        for (key, value) in [("client_id", clientID), ("shared_group", sharedGroup ?? "group")] where !Self.isTopicLevel(value) {
            sink.report(
                "'\(value)' must be one topic level (letters, digits, '-', '_' and '.')", at: mqtt.value(key), path: mqtt.path.key(key))
        }
        guard sink.diagnostics.isEmpty, let connection, let database, let expiryHours else { return nil }
        return StoreSettings(
            broker: connection.broker, credentialsFile: connection.credentialsFile, caFile: connection.caFile, clientID: clientID,
            topicPrefix: connection.topicPrefix, sharedGroup: sharedGroup,
            sessionExpirySeconds: expiryHours * 3600, database: database, batchEvents: batchEvents, batchMilliseconds: batchMilliseconds,
            ackMilliseconds: ackMilliseconds, maxSequenceAhead: ahead, bufferEvents: bufferEvents, office: office ?? nil)
    }

    /// `database:` names exactly one engine.
    private func parseDatabase(_ section: MappingReader) -> StoreSettings.Database? {
        let sqlite = section.string("sqlite", required: false)
        let postgresql = section.string("postgresql", required: false)
        section.finish()
        switch (sqlite, postgresql) {
        case (let path?, nil): return absolutePath(path, key: "sqlite", in: section).map { .sqlite(path: $0) }
        case (nil, let conninfo?): return .postgresql(conninfo: conninfo)
        default:
            sink.report(
                "name one database: 'sqlite: /var/lib/vendstore/fleet.db' or 'postgresql: \"host=… dbname=…\"'", at: section.node,
                path: section.path)
            return nil
        }
    }
}
