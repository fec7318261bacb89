import Dispatch
import Logging
import Synchronization
import VendMQTT
import VendTelemetry

/// A command for one machine: vendd's `<prefix>/<machine>/cmd/<name>` with its JSON payload
/// (docs/mqtt.md, Commands).
public struct MachineCommand: Sendable, Equatable {
    public let machine: String
    public let name: String
    public let payload: [UInt8]

    public init(machine: String, name: String, payload: [UInt8]) {
        self.machine = machine
        self.name = name
        self.payload = payload
    }
}

/// A machine's answer to a command sent with `post`, whenever it comes.
public struct MachineAnswer: Sendable, Equatable {
    /// The response topic's machine level: the broker's ACL lets only that machine write there.
    public let machine: String
    /// The token `post` returned for the request this answers.
    public let request: String
    public let payload: [UInt8]
}

/// What became of one command.
public enum MachineReply: Sendable, Equatable {
    /// The machine's answer as it sent it: vendctl's JSON response (docs/vendctl.md), or for
    /// `dex` the DEX file.
    case answered([UInt8])
    /// Nothing came back in the time allowed: the machine is offline, or slow. The broker drops
    /// an undelivered command once that time has passed, so a machine does not act on it later.
    case noAnswer
    /// Not sent, and why: no broker connection, the broker refused it (its ACL), a bad name.
    case notSent(String)
}

/// The store's one broker connection for commands to machines (the back office's prices and
/// DEX audits; any command of docs/mqtt.md): MQTT 5 requests, each with random correlation data
/// and the response topic `<prefix>/<machine>/reply/<client id>` (a machine may write only under
/// its own `reply/#`). `send` waits for the answers within a bounded time; `post` returns at once
/// and its answer goes to `onAnswer` whenever it comes. Its own client id, `<client_id>-commands`,
/// with a clean start: a request lost with the connection is a request not answered, never one
/// sent twice.
public final class MachineCommands: Sendable {
    private let client: MQTTClient
    private let shared: Shared
    private let topics: FleetTopics
    /// The response topics' last level: this connection's client id.
    private let responseLevel: String
    private let endpoint: MQTTEndpoint

    /// The requests of one `send`, answered in place; `done` is signalled once per answer.
    private final class Batch: Sendable {
        let replies: Mutex<[MachineReply?]>
        let done = DispatchSemaphore(value: 0)
        init(count: Int) { replies = Mutex(Array(repeating: nil, count: count)) }
    }

    private struct Waiting {
        let batch: Batch
        let index: Int
        let commandTopic: String
        let responseTopic: String
    }

    private struct State {
        var connected = false
        /// By correlation data.
        var waiting: [[UInt8]: Waiting] = [:]
        /// A request's correlation and command topic by its message id, until the broker's PUBACK.
        var published: [Int32: (correlation: [UInt8], commandTopic: String)] = [:]
        /// PUBACKs that came before `publish` returned their message id (a broker on loopback
        /// is that quick): accepted or not.
        var earlyAcks: [Int32: Bool] = [:]
    }

    /// What libmosquitto's thread shares with the callers.
    private final class Shared: Sendable {
        let state = Mutex(State())
        let client = Mutex<MQTTClient?>(nil)
        /// Answers to no request `send` waits for: `post`'s, and late ones.
        let answers = Mutex<(@Sendable (MachineAnswer) -> Void)?>(nil)
        let prefix: String
        let responseLevel: String
        let logger: Logger

        init(prefix: String, responseLevel: String, logger: Logger) {
            self.prefix = prefix
            self.responseLevel = responseLevel
            self.logger = logger
        }
    }

    /// The same broker, CA, credentials and topic prefix as the ingester's `settings`.
    public init(settings: IngestSettings, logger: Logger) throws {
        let topics = FleetTopics(prefix: settings.topicPrefix)
        self.topics = topics
        endpoint = settings.endpoint
        let clientID = "\(settings.clientID)-commands"
        responseLevel = clientID
        let shared = Shared(prefix: settings.topicPrefix, responseLevel: clientID, logger: logger)
        self.shared = shared
        let subscription = "\(settings.topicPrefix)/+/reply/\(clientID)"
        let endpoint = settings.endpoint
        client = try MQTTClient(clientID: clientID, cleanStart: true) { event in
            switch event {
            case .connected(nil):
                do {
                    // Subscribed before any request of this connection: the broker takes a
                    // client's packets in order.
                    try shared.client.withLock { $0 }?.subscribe(subscription)
                    shared.state.withLock { $0.connected = true }
                    logger.info(
                        "commands: the broker accepted the connection", metadata: ["broker": "\(endpoint.url)", "replies": "\(subscription)"])
                } catch {
                    logger.error("commands: \(error); no command can be answered")
                }
            case .connected(let refusal?):
                logger.error("commands: the broker refused the connection: \(refusal)", metadata: ["broker": "\(endpoint.url)"])
            case .disconnected(let reason):
                // Message ids are the connection's: what the broker had not acknowledged is
                // left to the deadline.
                let was = shared.state.withLock { state in
                    defer { state = State(waiting: state.waiting) }
                    return state.connected
                }
                if was { logger.warning("commands: lost the broker (\(reason)); reconnecting", metadata: ["broker": "\(endpoint.url)"]) }
            case .acknowledged(let mid, let accepted):
                Self.acknowledged(mid, accepted: accepted, shared: shared)
            case .message(let message):
                Self.answer(message, shared: shared)
            case .log(let text, let isError):
                if isError { logger.error("commands: MQTT: \(text)") }
            }
        }
        if let credentials = settings.credentials { try client.setCredentials(username: credentials.username, password: credentials.password) }
        if let caFile = settings.caFile { try client.setTLS(caFile: caFile) }
        shared.client.withLock { $0 = client }
    }

    /// Connects in the background (and again after every loss).
    public func start() throws { try client.start(endpoint) }

    public func stop() { client.stop() }

    /// Where answers to `post` go (and answers that come after `send` gave up), on the
    /// connection's own network thread, which carries nothing else.
    public func onAnswer(_ handler: @escaping @Sendable (MachineAnswer) -> Void) {
        shared.answers.withLock { $0 = handler }
    }

    /// Sends `name` with `payload` to `machine` without waiting, and returns the request's token,
    /// which its answer carries to `onAnswer`. The broker drops it undelivered after `expiry`.
    public func post(_ name: String, payload: [UInt8], to machine: String, expiry: Duration) throws(MQTTError) -> String {
        let command = MachineCommand(machine: machine, name: name, payload: payload)
        let correlation = Self.newCorrelation()
        if let refusal = publish(command, correlation: correlation, waiting: nil, expiry: Self.expirySeconds(expiry)) {
            throw MQTTError(description: refusal)
        }
        return Self.token(correlation)
    }

    /// Whether commands can be sent now (the broker accepted the connection, which is up).
    public var isConnected: Bool { shared.state.withLock { $0.connected } }

    /// Sends `name` with `payload` to `machine` and waits at most `timeout` for its answer.
    public func send(_ name: String, payload: [UInt8], to machine: String, within timeout: Duration) -> MachineReply {
        send([MachineCommand(machine: machine, name: name, payload: payload)], within: timeout)[0]
    }

    /// Sends every command at once, then waits until each is answered or `timeout` has passed
    /// (one deadline for all, never longer); the replies in the commands' order.
    public func send(_ commands: [MachineCommand], within timeout: Duration) -> [MachineReply] {
        let batch = Batch(count: commands.count)
        let (seconds, attoseconds) = timeout.components
        let deadline = DispatchTime.now() + DispatchTimeInterval.nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        let expiry = Self.expirySeconds(timeout)
        var sent = 0
        for (index, command) in commands.enumerated() {
            if let refusal = publish(command, correlation: Self.newCorrelation(), waiting: (batch, index), expiry: expiry) {
                batch.replies.withLock { $0[index] = .notSent(refusal) }
            } else {
                sent += 1
            }
        }
        var answered = 0
        while answered < sent, batch.done.wait(timeout: deadline) == .success { answered += 1 }
        // What is still waiting gets no answer now; a late one finds nothing to fill.
        shared.state.withLock { state in
            state.waiting = state.waiting.filter { $0.value.batch !== batch }
        }
        return batch.replies.withLock { replies in replies.map { $0 ?? .noAnswer } }
    }

    /// Whole seconds for the broker's message expiry, rounded up.
    private static func expirySeconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        return UInt32(clamping: max(1, seconds + (attoseconds > 0 ? 1 : 0)))
    }

    private static func newCorrelation() -> [UInt8] {
        var correlation: [UInt8] = []
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2 { withUnsafeBytes(of: random.next() as UInt64) { correlation += $0 } }
        return correlation
    }

    /// A request's token: its correlation data in hex.
    private static func token(_ correlation: [UInt8]) -> String {
        correlation.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Publishes one request, `waiting` in `send`'s batch or not (`post`); nil when it went to
    /// the broker, else why not.
    private func publish(_ command: MachineCommand, correlation: [UInt8], waiting: (batch: Batch, index: Int)?, expiry: UInt32) -> String? {
        for (what, level) in [("machine", command.machine), ("command", command.name)] where !Self.isTopicLevel(level) {
            return "the \(what) '\(level)' cannot be a topic level (empty, or holding '/', '+', '#')"
        }
        let topic = "\(topics.prefix)/\(command.machine)/cmd/\(command.name)"
        let responseTopic = "\(topics.reply(command.machine))/\(responseLevel)"
        let connected = shared.state.withLock { state in
            guard state.connected else { return false }
            if let waiting {
                state.waiting[correlation] = Waiting(batch: waiting.batch, index: waiting.index, commandTopic: topic, responseTopic: responseTopic)
            }
            return true
        }
        guard connected else { return "vendstore is not connected to the broker (\(endpoint.url)): nothing was sent" }
        do {
            let mid = try client.request(topic, command.payload, responseTopic: responseTopic, correlation: correlation, expirySeconds: expiry)
            let accepted = shared.state.withLock { state in
                guard let early = state.earlyAcks.removeValue(forKey: mid) else {
                    state.published[mid] = (correlation, topic)
                    return true
                }
                return early
            }
            if !accepted { Self.refused(correlation, topic: topic, shared: shared) }
            return nil
        } catch {
            shared.state.withLock { _ = $0.waiting.removeValue(forKey: correlation) }
            return "\(error)"
        }
    }

    /// The broker's PUBACK: a refusal (MQTT 5 reason code, its ACL) ends the request at once.
    private static func acknowledged(_ mid: Int32, accepted: Bool, shared: Shared) {
        let request = shared.state.withLock { state in
            guard let request = state.published.removeValue(forKey: mid) else {
                state.earlyAcks[mid] = accepted
                return (correlation: [UInt8], commandTopic: String)?.none
            }
            return request
        }
        if let request, !accepted { refused(request.correlation, topic: request.commandTopic, shared: shared) }
    }

    /// The broker refused a request (MQTT 5 reason code, its ACL): `send` answers it so, and a
    /// `post`ed one is logged, since nobody waits for it.
    private static func refused(_ correlation: [UInt8], topic: String, shared: Shared) {
        let why = "the broker refused it (not authorised?): the store's broker user needs 'topic write \(topic)' in the broker's ACL (docs/mqtt.md)"
        if !complete(correlation, shared: shared, reply: { _ in .notSent(why) }) {
            shared.logger.error("commands: \(why)")
        }
    }

    /// A reply: `send`'s when its correlation data is a request's and it came on that request's
    /// response topic (under the machine's own `reply/#`, which the broker's ACL ties to it);
    /// else, on this connection's response topic of a machine, `onAnswer`'s.
    private static func answer(_ message: MQTTMessage, shared: Shared) {
        guard let correlation = message.correlation else { return }
        guard !complete(correlation, shared: shared, on: message.topic, reply: { _ in .answered(message.payload) }) else { return }
        guard let machine = machine(answering: message.topic, prefix: shared.prefix, responseLevel: shared.responseLevel) else {
            shared.logger.warning("commands: ignored an answer on \(message.topic): not a machine's response topic")
            return
        }
        shared.answers.withLock { $0 }?(MachineAnswer(machine: machine, request: token(correlation), payload: message.payload))
    }

    /// The machine level of `<prefix>/<machine>/reply/<responseLevel>`.
    static func machine(answering topic: String, prefix: String, responseLevel: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let prefixLevels = prefix.split(separator: "/", omittingEmptySubsequences: false).count
        guard levels.count == prefixLevels + 3, levels[prefixLevels + 1] == "reply", levels[prefixLevels + 2] == responseLevel,
            isTopicLevel(levels[prefixLevels])
        else { return nil }
        return levels[prefixLevels]
    }

    /// True when a request of `send` was waiting for this correlation (and topic).
    private static func complete(_ correlation: [UInt8], shared: Shared, on topic: String? = nil, reply: (Waiting) -> MachineReply) -> Bool {
        // Answered under the lock `send` takes to give up: an answer is kept whole or not at all.
        let batch = shared.state.withLock { state -> Batch? in
            guard let waiting = state.waiting[correlation], topic == nil || topic == waiting.responseTopic else { return nil }
            state.waiting[correlation] = nil
            let value = reply(waiting)
            waiting.batch.replies.withLock { $0[waiting.index] = value }
            return waiting.batch
        }
        batch?.done.signal()
        return batch != nil
    }

    static func isTopicLevel(_ text: String) -> Bool {
        !text.isEmpty && !text.contains(where: { "/+#\0".contains($0) })
    }
}
