import Logging
import Synchronization
import VendFleetStore
import VendMQTT
import VendPOSIX
import VendTelemetry

#if canImport(Glibc)
    import Glibc
#endif

/// How an ingester connects and batches; read from vendstore's file (docs/fleet-store.md).
public struct IngestSettings: Sendable {
    public var endpoint: MQTTEndpoint
    public var caFile: String?
    public var credentials: (username: String, password: String)?
    /// The broker keeps this client's session (subscriptions, messages queued while it was away).
    public var clientID: String
    public var topicPrefix: String
    /// MQTT 5 shared subscription group: ingesters in one group split the messages.
    public var sharedGroup: String?
    public var sessionExpirySeconds: UInt32
    public var batchSize: Int
    public var batchWindow: Duration
    public var ackInterval: Duration
    public var bufferCapacity: Int

    public init(
        endpoint: MQTTEndpoint, caFile: String?, credentials: (username: String, password: String)?, clientID: String, topicPrefix: String,
        sharedGroup: String?, sessionExpirySeconds: UInt32, batchSize: Int, batchWindow: Duration, ackInterval: Duration,
        bufferCapacity: Int
    ) {
        self.endpoint = endpoint
        self.caFile = caFile
        self.credentials = credentials
        self.clientID = clientID
        self.topicPrefix = topicPrefix
        self.sharedGroup = sharedGroup
        self.sessionExpirySeconds = sessionExpirySeconds
        self.batchSize = batchSize
        self.batchWindow = batchWindow
        self.ackInterval = ackInterval
        self.bufferCapacity = bufferCapacity
    }
}

/// Broker → checks → batch → one transaction → `stored` acks. libmosquitto's thread only checks
/// and buffers; `run()`'s thread commits and acknowledges, after the commit and never before.
public final class Ingester: @unchecked Sendable {
    // @unchecked: `store` and `acks` belong to the thread in run(); the rest is Sendable.
    private let settings: IngestSettings
    private let store: FleetStore
    private let logger: Logger
    private let topics: FleetTopics
    private let buffer: IngestBuffer
    private let client: MQTTClient
    private let link: LinkState
    private let stopping = Atomic<Bool>(false)
    private var acks = AckBoard()
    /// Called with each batch's number just before its commit (vendstore's kill test hook).
    private let beforeCommit: (@Sendable (Int) -> Void)?
    /// Called after each commit with the machines it stored something of (the office's live pages).
    private let afterCommit: (@Sendable (Set<String>) -> Void)?

    public init(
        settings: IngestSettings, store: FleetStore, logger: Logger, beforeCommit: (@Sendable (Int) -> Void)? = nil,
        afterCommit: (@Sendable (Set<String>) -> Void)? = nil
    ) throws {
        self.settings = settings
        self.store = store
        self.logger = logger
        self.beforeCommit = beforeCommit
        self.afterCommit = afterCommit
        let topics = FleetTopics(prefix: settings.topicPrefix)
        self.topics = topics
        let buffer = try IngestBuffer(batchSize: settings.batchSize, capacity: settings.bufferCapacity)
        self.buffer = buffer
        let link = LinkState()
        self.link = link
        let subscriptions = topics.subscriptions(sharedGroup: settings.sharedGroup)
        client = try MQTTClient(clientID: settings.clientID, cleanStart: false) { event in
            switch event {
            case .connected(nil):
                let patterns = subscriptions.joined(separator: " ")
                logger.info("connected to the broker", metadata: ["broker": "\(settings.endpoint.url)", "subscriptions": "\(patterns)"])
                link.reconnected.store(true, ordering: .releasing)
                // The session keeps the subscriptions, but it may be new (expired, another broker).
                for pattern in subscriptions {
                    do { try link.client.withLock { $0 }?.subscribe(pattern) } catch { logger.error("\(error)") }
                }
                buffer.wake()
            case .connected(let refusal?):
                logger.error("the broker refused the connection: \(refusal)", metadata: ["broker": "\(settings.endpoint.url)"])
            case .disconnected(let reason):
                logger.warning("lost the broker (\(reason)); reconnecting", metadata: ["broker": "\(settings.endpoint.url)"])
            case .message(let message):
                Self.take(topic: message.topic, payload: message.payload, topics: topics, buffer: buffer, logger: logger)
            case .log(let text, let isError):
                if isError { logger.error("MQTT: \(text)") } else { logger.warning("MQTT: \(text)") }
            case .acknowledged:
                break
            }
        }
        if let credentials = settings.credentials { try client.setCredentials(username: credentials.username, password: credentials.password) }
        if let caFile = settings.caFile { try client.setTLS(caFile: caFile) }
        link.client.withLock { $0 = client }
    }

    /// Checks one message on libmosquitto's thread: a good one is buffered, a bad one logged
    /// with the machine and why, and nothing else happens to either.
    static func take(topic: String, payload: [UInt8], topics: FleetTopics, buffer: IngestBuffer, logger: Logger) {
        switch topics.classify(topic) {
        case .event(let machine, let type):
            if let event = checked(payload[...], machine: machine, type: type, what: "an event on \(topic)", topic: topic, logger: logger) {
                buffer.add([event])
            }
        case .backlog(let machine):
            let lines = EventBatch.events(in: payload)
            buffer.add(
                lines.enumerated().compactMap { line, payload in
                    checked(
                        payload, machine: machine, type: nil, what: "event \(line + 1) of \(lines.count) on \(topic)", topic: topic, logger: logger)
                })
        case .retained(let machine, let subject):
            // An empty retained message clears the topic at the broker; the store keeps the last.
            guard !payload.isEmpty else { return }
            switch RetainedPayload.decode(payload, machine: machine, subject: subject) {
            case .success(let (update, warning)):
                if let warning { logger.warning("\(warning)", metadata: ["machine": "\(machine)", "topic": "\(topic)"]) }
                buffer.add(update)
            case .failure(let refusal):
                logger.error(
                    "refused \(subject) on \(topic): \(refusal.reason)", metadata: ["machine": "\(machine)", "topic": "\(topic)"])
            }
        case nil:
            break
        }
    }

    /// The event, or nil with the machine and the reason logged.
    private static func checked(
        _ payload: ArraySlice<UInt8>, machine: String, type: String?, what: String, topic: String, logger: Logger
    ) -> IncomingEvent? {
        switch EventPayload.decode(payload, machine: machine, type: type) {
        case .success(let (event, warning)):
            if let warning { logger.warning("\(warning)", metadata: ["machine": "\(machine)", "seq": "\(event.seq)"]) }
            return event
        case .failure(let refusal):
            logger.error("refused \(what): \(refusal.reason)", metadata: ["machine": "\(machine)", "topic": "\(topic)"])
            return nil
        }
    }

    /// Connects and commits until `stop()`; returns after the last batch is committed and acknowledged.
    /// `started` runs once the client is started (it connects, and reconnects, by itself): the
    /// service is ready then, a broker that is away is no reason to fail.
    public func run(started: () -> Void = {}) throws {
        try client.start(settings.endpoint, sessionExpirySeconds: settings.sessionExpirySeconds)
        started()
        var batches = 0
        var lastFlush = MonotonicClock.now
        while !stopping.load(ordering: .acquiring) {
            let (batch, dropped) = buffer.next(window: settings.batchWindow, idle: settings.ackInterval)
            if dropped > 0 {
                logger.warning("\(dropped) events dropped: \(settings.bufferCapacity) were waiting for the database; their machines send them again")
            }
            if !batch.isEmpty {
                batches += 1
                beforeCommit?(batches)
                commit(batch)
            }
            if link.reconnected.exchange(false, ordering: .acquiring) { acks.forgetPublished() }
            if MonotonicClock.now - lastFlush >= settings.ackInterval {
                publishAcks()
                lastFlush = MonotonicClock.now
            }
        }
        let (rest, _) = buffer.next(window: .zero, idle: .zero)
        if !rest.isEmpty { commit(rest) }
        publishAcks()
        client.stop()
    }

    /// What libmosquitto's thread shares with the rest: the client (to subscribe from the
    /// CONNACK) and the news of a reconnection.
    private final class LinkState: Sendable {
        let client = Mutex<MQTTClient?>(nil)
        let reconnected = Atomic<Bool>(false)
    }

    /// Asks `run()` to finish (from a signal handler's thread).
    public func stop() {
        stopping.store(true, ordering: .releasing)
        buffer.wake()
    }

    /// Commits, retrying until the database takes it (it may be restarting); nothing is
    /// acknowledged before.
    private func commit(_ batch: IngestBuffer.Batch) {
        var delay = Duration.milliseconds(200)
        var failures = 0
        while true {
            do {
                let outcome = try store.commit(events: batch.events, retained: batch.retained, receivedAt: WallClock.milliseconds)
                if failures > 0 { logger.notice("\(store.name) takes commits again after \(failures) failures") }
                report(outcome)
                acks.record(outcome.acknowledgements)
                if let afterCommit, outcome.inserted > 0 || !batch.retained.isEmpty {
                    var machines = Set(batch.retained.map(\.machine))
                    if outcome.inserted > 0 { machines.formUnion(batch.events.map(\.machine)) }
                    afterCommit(machines)
                }
                return
            } catch {
                failures += 1
                if failures == 1 || failures % 10 == 0 {
                    logger.error("cannot commit \(batch.events.count) events into \(store.name) (attempt \(failures)); retrying: \(error)")
                }
                if stopping.load(ordering: .acquiring), failures >= 3 { return }
                sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    private func report(_ outcome: CommitOutcome) {
        for conflict in outcome.conflicts {
            logger.error(
                "conflict: sequence \(conflict.seq) is held with id \(conflict.storedID); another event (id \(conflict.offeredID)) came under it and was not stored",
                metadata: ["machine": "\(conflict.machine)", "seq": "\(conflict.seq)"])
        }
        for refused in outcome.refused {
            logger.error(
                "refused event \(refused.event.id): \(refused.reason)",
                metadata: ["machine": "\(refused.event.machine)", "seq": "\(refused.event.seq)"])
        }
    }

    private func publishAcks() {
        let now = WallClock.milliseconds
        for (machine, seq) in acks.due {
            do {
                try client.publish(topics.stored(machine), Acknowledgement.payload(seq: seq, at: now), qos: 1, retain: true)
                acks.sent(machine, seq)
            } catch {
                // Not connected: sent after the reconnection.
                return
            }
        }
    }

    private func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var spec = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        nanosleep(&spec, nil)
    }
}
