import Logging
import Synchronization
import VendMQTT
import VendTelemetry

/// A machine's answer to a command sent with `MachineCommands.send`.
public struct MachineReply: Sendable, Equatable {
    /// The topic's machine level: the broker's ACL lets only that machine write there.
    public let machine: String
    public let command: String
    /// The token `send` returned for the request this answers.
    public let request: String
    public let payload: [UInt8]
}

/// Commands to machines (docs/mqtt.md, Commands) from the store, on a broker connection of its
/// own so that neither waits for the other's traffic: each is an MQTT 5 request whose response
/// topic is `<prefix>/<machine>/reply/<command>/<client_id>` (under the machine's own `reply/#`,
/// which the ACL lets it write) with a random correlation token, which `send` returns and the
/// reply carries back. No session is kept: a reply that comes while vendstore is away is lost,
/// and the requester sees no answer.
public final class MachineCommands: Sendable {
    private let client: MQTTClient
    private let settings: IngestSettings
    private let topics: FleetTopics
    private let link: Link

    /// What the network thread shares: the client (to subscribe from the CONNACK) and where
    /// replies go.
    private final class Link: Sendable {
        let client = Mutex<MQTTClient?>(nil)
        let replies = Mutex<(@Sendable (MachineReply) -> Void)?>(nil)
    }

    /// The connection's client id: the ingester's with `-commands`.
    public static func clientID(_ settings: IngestSettings) -> String { settings.clientID + "-commands" }

    public init(settings: IngestSettings, logger: Logger) throws {
        self.settings = settings
        let topics = FleetTopics(prefix: settings.topicPrefix)
        self.topics = topics
        let pattern = "\(settings.topicPrefix)/+/reply/+/\(settings.clientID)"
        let link = Link()
        self.link = link
        client = try MQTTClient(clientID: Self.clientID(settings), cleanStart: true) { event in
            switch event {
            case .connected(nil):
                do { try link.client.withLock { $0 }?.subscribe(pattern) } catch { logger.error("commands: \(error)") }
            case .connected(let refusal?):
                logger.error("commands: the broker refused the connection: \(refusal)", metadata: ["broker": "\(settings.endpoint.url)"])
            case .message(let message):
                guard let reply = Self.reply(message, prefix: settings.topicPrefix, clientID: settings.clientID) else {
                    logger.warning("commands: ignored a message on \(message.topic): no request token")
                    return
                }
                link.replies.withLock { $0 }?(reply)
            case .acknowledged(_, accepted: false):
                logger.error(
                    "commands: the broker refused a command: its ACL must let this user write \(settings.topicPrefix)/+/cmd/<command> (docs/office.md)"
                )
            case .log(let text, true):
                logger.error("commands: MQTT: \(text)")
            case .disconnected, .log, .acknowledged:
                break
            }
        }
        if let credentials = settings.credentials { try client.setCredentials(username: credentials.username, password: credentials.password) }
        if let caFile = settings.caFile { try client.setTLS(caFile: caFile) }
        link.client.withLock { $0 = client }
    }

    /// Where replies go: called on the connection's own network thread, which carries nothing
    /// else, so a short database write there holds up only other replies.
    public func onReply(_ handler: @escaping @Sendable (MachineReply) -> Void) {
        link.replies.withLock { $0 = handler }
    }

    /// Connects in the background (and reconnects after every loss).
    public func start() throws { try client.start(settings.endpoint) }

    public func stop() { client.stop() }

    /// Publishes command `name` with its JSON `payload` to `machine` and returns the request's
    /// token (the reply carries it). Throws when the broker is not connected, or for a machine
    /// or command that is not one topic level.
    public func send(_ name: String, to machine: String, payload: [UInt8]) throws -> String {
        for level in [machine, name] where level.isEmpty || level.contains(where: { "/+#".contains($0) }) {
            throw MQTTError(description: "'\(level)' cannot be a topic level")
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }.map {
            $0.count == 1 ? "0" + $0 : $0
        }.joined()
        try client.request(
            "\(topics.machine(machine))/cmd/\(name)", payload, responseTopic: "\(topics.reply(machine))/\(name)/\(settings.clientID)",
            correlation: Array(token.utf8))
        return token
    }

    /// A reply on `<prefix>/<machine>/reply/<command>/<client_id>` with a correlation token.
    static func reply(_ message: MQTTMessage, prefix: String, clientID: String) -> MachineReply? {
        let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let prefixLevels = prefix.split(separator: "/", omittingEmptySubsequences: false).count
        guard levels.count == prefixLevels + 4, levels[prefixLevels + 1] == "reply", levels[prefixLevels + 3] == clientID,
            let correlation = message.correlation, let request = String(validating: correlation, as: UTF8.self), !request.isEmpty
        else { return nil }
        return MachineReply(machine: levels[prefixLevels], command: levels[prefixLevels + 2], request: request, payload: message.payload)
    }
}
