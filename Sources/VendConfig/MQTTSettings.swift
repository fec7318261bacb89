/// The `mqtt:` section: the fleet link. Absent: vendd keeps no outbox and opens no connection.
public struct MQTTSettings: Sendable, Equatable {
    /// `mqtts://host:8883` (TLS), or `mqtt://host:1883` only with `allow_plaintext: true`.
    public struct Broker: Sendable, Equatable {
        public let host: String
        public let port: Int
        public let tls: Bool

        public init(host: String, port: Int, tls: Bool) {
            self.host = host
            self.port = port
            self.tls = tls
        }

        /// Parses `mqtts://host[:port]` or `mqtt://host[:port]` (IPv6 in brackets); nil otherwise.
        public init?(url: String) {
            let tls: Bool
            let rest: Substring
            if url.hasPrefix("mqtts://") {
                tls = true
                rest = url.dropFirst(8)
            } else if url.hasPrefix("mqtt://") {
                tls = false
                rest = url.dropFirst(7)
            } else {
                return nil
            }
            var host = rest
            var port = tls ? 8883 : 1883
            if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]"), !(rest.hasPrefix("[") && !rest[..<colon].hasSuffix("]")) {
                guard let parsed = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(parsed) else { return nil }
                port = parsed
                host = rest[..<colon]
            }
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty, !host.contains("/"), !host.contains("@") else { return nil }
            self.init(host: String(host), port: port, tls: tls)
        }

        public var url: String { "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
    }

    /// What vendd publishes besides nothing.
    public enum Publication: String, Sendable, CaseIterable {
        /// Money and stock events, durable, QoS 1 with an id each.
        case events
        /// Retained: online/offline (last will), service mode, faults, credit.
        case state
        /// Retained: every slot's stock and price.
        case stock
        /// Retained: cash position (coins in, sales, refunds).
        case cash
        /// Retained, one per temperature zone: temperature, set point, relay, health.
        case zones
    }

    /// Remote commands; each is refused unless listed.
    public enum Command: String, Sendable, CaseIterable {
        case price
        case service
        case report
        /// The EVA-DTS DEX audit file, as `vendctl audit` writes it.
        case dex
    }

    public let broker: Broker
    public let machineID: String
    /// Absolute path of a file `username:password`, mode 0600 or stricter.
    public let credentialsFile: String?
    /// The CA that signed the broker's certificate (mqtts only).
    public let caFile: String?
    public let topicPrefix: String
    public let publish: Set<Publication>
    public let commands: Set<Command>
    /// Events older than this are dropped from the outbox (logged) instead of kept forever.
    public let outboxDays: Int
    /// An event leaves the outbox only once the fleet store's acknowledgement on
    /// `<prefix>/<machine>/stored` covers its sequence number, not on the broker's PUBACK.
    public let keepUntilStored: Bool

    public init(
        broker: Broker, machineID: String, credentialsFile: String?, caFile: String?, topicPrefix: String,
        publish: Set<Publication>, commands: Set<Command>, outboxDays: Int, keepUntilStored: Bool = false
    ) {
        self.broker = broker
        self.machineID = machineID
        self.credentialsFile = credentialsFile
        self.caFile = caFile
        self.topicPrefix = topicPrefix
        self.publish = publish
        self.commands = commands
        self.outboxDays = outboxDays
        self.keepUntilStored = keepUntilStored
    }

    /// `<prefix>/<machine>`: every topic of this machine starts here.
    public var machineTopic: String { "\(topicPrefix)/\(machineID)" }
}
