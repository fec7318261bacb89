import Dispatch
import FoundationEssentials
import Logging
import Synchronization
import VendConfig
import VendControl
import VendDEX
import VendMQTT
import VendTelemetry

/// The machine's MQTT link. The MQTT client's network thread only hands its reports to one serial
/// queue (`vendd-mqtt`); on that queue the link publishes what the outbox holds, the retained
/// state, stock and cash (from the view the machine's lane published), and answers commands.
/// Nothing here runs on the machine's lane, and the machine never waits for it: a broker that is
/// down or slow delays no vend and no coin. The link holds the machine only as `MachineRequests`
/// (a remote command waits for its input's outcome on the queue) and `status`.
final class FleetLink: Sendable {
    private let settings: MQTTSettings
    private let topics: FleetTopics
    private let outbox: Outbox
    private let machine: MachineRequests
    /// `vendctl status` as it stands: what the retained topics and `report` say.
    private let status: @Sendable () -> StatusReport
    private let logger: Logger
    private let queue = DispatchQueue(label: "vendd-mqtt")
    private let client: Mutex<MQTTClient?> = Mutex(nil)
    private let link = Mutex(LinkState())

    private struct LinkState {
        var connected = false
        var publishScheduled = false
        /// A resend is due: what goes then is sent as backlog.
        var resendScheduled = false
        /// The broker refused a backlog message on this connection (an ACL without the topic).
        var backlogRefused = false
        /// The last retained payload per topic, so that an unchanged one is not sent again.
        var retained: [String: [UInt8]] = [:]
        /// The last problem logged, so that a broker down for hours logs it once, not every retry.
        var lastProblem: String?
    }

    init(
        settings: MQTTSettings, outbox: Outbox, machine: MachineRequests, status: @escaping @Sendable () -> StatusReport, logger: Logger
    ) {
        self.settings = settings
        topics = FleetTopics(prefix: settings.topicPrefix)
        self.outbox = outbox
        self.machine = machine
        self.status = status
        self.logger = logger
    }

    /// Reads the credentials, configures TLS and the last will, and starts connecting in the
    /// background. Throws only for what no retry can fix (an unreadable credentials file).
    func start() throws(MQTTError) {
        let client = try MQTTClient(clientID: "vendd-\(settings.machineID)", cleanStart: true) { [weak self] event in
            guard let self else { return }
            queue.async { self.handle(event) }
        }
        if let file = settings.credentialsFile {
            let (username, password) = try MQTTCredentials.read(file)
            try client.setCredentials(username: username, password: password)
        }
        if settings.broker.tls, let ca = settings.caFile { try client.setTLS(caFile: ca) }
        let offline = MachineStateMessage(
            machine: settings.machineID, online: false, state: "offline", reason: "connection lost",
            credit: nil, currency: nil)
        try client.setWill(topic: topics.state(settings.machineID), payload: Self.json(offline), retain: true)
        outbox.onAdd { [weak self] in self?.schedulePublish() }
        if outbox.keepUntilStored {
            machine.timekeeper.repeatEvery(Self.resendCheck) { [weak self] in
                guard let self else { return false }
                if outbox.resendIfDue(now: machine.timekeeper.now) { schedulePublish(resend: true) }
                return true
            }
        }
        // A lock or a service sends the zones at once (its event wakes the link); their
        // temperatures go out at most once a minute, when they changed.
        if settings.publish.contains(.zones), !machine.view.config.zones.isEmpty {
            machine.timekeeper.repeatEvery(Self.zoneInterval) { [weak self] in
                self?.schedulePublish()
                return self != nil
            }
        }
        self.client.withLock { $0 = client }
        try client.start(MQTTEndpoint(host: settings.broker.host, port: settings.broker.port, tls: settings.broker.tls))
        logger.notice("MQTT: connecting to \(settings.broker.url) as machine \(settings.machineID); \(outbox.summary.count) event(s) in the outbox")
    }

    /// Says goodbye (retained offline state) and disconnects; the last thing before exit.
    func stop() {
        guard let client = client.withLock({ $0 }) else { return }
        queue.sync {
            if link.withLock({ $0.connected }) {
                let offline = MachineStateMessage(
                    machine: settings.machineID, online: false, state: "offline", reason: "vendd stopped",
                    credit: nil, currency: nil, at: machine.timekeeper.wallClockMilliseconds)
                _ = try? client.publish(topics.state(settings.machineID), Self.json(offline), retain: true)
            }
        }
        client.stop()
    }

    // MARK: - On the queue

    private func handle(_ event: MQTTEvent) {
        guard let client = client.withLock({ $0 }) else { return }
        switch event {
        case .connected(nil):
            link.withLock {
                $0.connected = true
                $0.lastProblem = nil
                $0.backlogRefused = false
                $0.retained.removeAll()
            }
            logger.notice("MQTT: connected to \(settings.broker.url); \(outbox.summary.count) event(s) to send")
            do {
                try client.subscribe(topics.commands(settings.machineID))
            } catch {
                logger.error("MQTT: \(error); remote commands are not received")
            }
            if outbox.keepUntilStored {
                do {
                    try client.subscribe(topics.stored(settings.machineID))
                } catch {
                    logger.error("MQTT: \(error); the store's acknowledgement is not received: events stay in the outbox and are sent again")
                }
            }
            outbox.connectionRestarted()
            publishPending(client, backlog: true)
        case .connected(let refusal?):
            problem(
                "the broker \(settings.broker.url) refused the connection: \(refusal) (check \(settings.credentialsFile ?? "the credentials") and the broker's password file and ACL)"
            )
        case .disconnected(let reason):
            let wasConnected = link.withLock { state in
                defer { state.connected = false }
                return state.connected
            }
            outbox.connectionLost()
            if wasConnected {
                logger.warning("MQTT: connection to \(settings.broker.url) lost (\(reason)); reconnecting; sales go on and events wait in the outbox")
            } else {
                problem("\(settings.broker.url) cannot be reached (\(reason)); retrying; sales go on and events wait in the outbox")
            }
        case .acknowledged(let messageID, let accepted):
            if accepted {
                outbox.acknowledged(messageID: messageID, now: machine.timekeeper.now)
                if !outbox.keepUntilStored { schedulePublish() }  // the state's outbox may have drained
            } else if outbox.refused(messageID: messageID) {
                link.withLock { $0.backlogRefused = true }
                problem(
                    "the broker refused a backlog message on \(topics.backlog(settings.machineID)): is this machine allowed to publish there (docs/mqtt.md, Broker ACL)? Its events are sent one by one instead"
                )
                schedulePublish()
            } else {
                problem(
                    "the broker refused an event (message \(messageID)): is this machine allowed to publish on \(topics.machine(settings.machineID))/events/#? It stays in the outbox"
                )
            }
        case .message(let message) where message.topic == topics.stored(settings.machineID):
            storeAcknowledged(message.payload)
        case .message(let message):
            answer(message, client)
        case .log(let text, _):
            problem(explain(text))
        }
    }

    /// Logs a connection problem once until it changes or a connection succeeds.
    private func problem(_ text: String) {
        let isNew = link.withLock { state in
            defer { state.lastProblem = text }
            return state.lastProblem != text
        }
        if isNew { logger.error("MQTT: \(text)") }
    }

    private func explain(_ text: String) -> String {
        if text.contains("certificate verify failed") {
            return
                "\(settings.broker.url): the broker's certificate is not signed by the CA in \(settings.caFile ?? "ca_file") (\(text)); check mqtt.ca_file"
        }
        return "\(settings.broker.url): \(text)"
    }

    private func schedulePublish(resend: Bool = false) {
        let first = link.withLock { state in
            defer { state.publishScheduled = true }
            state.resendScheduled = state.resendScheduled || resend
            return !state.publishScheduled
        }
        guard first else { return }
        queue.async { [self] in
            let resend = link.withLock { state in
                defer { (state.publishScheduled, state.resendScheduled) = (false, false) }
                return state.resendScheduled
            }
            guard let client = client.withLock({ $0 }) else { return }
            publishPending(client, backlog: resend)
        }
    }

    /// Each event on its own topic as it happens. With `keep_until_stored`, the `backlog` — what
    /// waits when the link comes up (after an outage, a restart) or is sent again — goes to the
    /// store in batches instead, several events a message (`EventBatch`, docs/mqtt.md).
    private func publishPending(_ client: MQTTClient, backlog: Bool = false) {
        guard link.withLock({ $0.connected }) else { return }
        let unsent = outbox.takeUnsent()
        let payloads = unsent.map { Self.json($0) }
        let asBacklog = outbox.keepUntilStored && backlog && unsent.count > 1 && !link.withLock { $0.backlogRefused }
        let messages: [(topic: String, events: Range<Int>)] =
            asBacklog
            ? EventBatch.runs(of: payloads).map { (topics.backlog(settings.machineID), $0) }
            : unsent.indices.map { (topics.event(settings.machineID, unsent[$0].type), $0..<($0 + 1)) }
        for (position, message) in messages.enumerated() {
            let ids = unsent[message.events].map(\.id)
            do {
                let messageID = try client.publish(message.topic, EventBatch.payload(payloads[message.events]))
                outbox.published(ids, messageID: messageID, backlog: asBacklog)
            } catch {
                // The connection just dropped: this message and the ones after it go again.
                outbox.unsent(messages[position...].flatMap { unsent[$0.events].map(\.id) })
                break
            }
        }
        publishRetained(client)
    }

    private func publishRetained(_ client: MQTTClient) {
        let status = self.status()
        let machine = settings.machineID
        // Each retained topic is sent again only when its content changes; `at` is not content.
        var messages: [(topic: String, content: [UInt8], payload: [UInt8])] = []
        if settings.publish.contains(.state) {
            var state = MachineStateMessage(
                machine: machine, online: true, state: status.state, reason: status.stateReason,
                credit: status.credit, currency: status.currency)
            state.dex = status.dexPort.map { MachineStateMessage.DEXAudit(lastReadAt: $0.lastReadAt) }
            let waiting = outbox.keepsEvents ? status.fleetOutbox?.pending : nil
            state.outbox = waiting.map(OutboxBacklog.magnitude)
            let content = Self.json(state)
            state.outbox = waiting
            state.at = self.machine.timekeeper.wallClockMilliseconds
            messages.append((topics.state(machine), content, Self.json(state)))
        }
        if settings.publish.contains(.stock) {
            // The lists as `vendctl price --show` reports them: each slot's lines beyond list 1's
            // price, the lists' names and the bands. Not the band in force: its start is no
            // event, so a retained one would go stale; it follows from the bands and a clock.
            let prices = self.machine.view.reports.prices
            let priceLines = prices.fleetPriceLines
            var stock = StockMessage(
                machine: machine, currency: status.currency,
                slots: status.slots.map {
                    // The slot's list-1 price, as `price-changed` events keep it: a band's start
                    // is no event, so a band's price retained here would go stale.
                    var slot = StockMessage.Slot(
                        slot: $0.id, product: $0.product, price: $0.listPrice ?? $0.price, available: $0.available, stock: $0.stock,
                        capacity: $0.capacity, earliestExpiry: $0.earliestExpiry)
                    slot.fault = $0.fault
                    slot.healthLock = $0.healthLock
                    slot.priceLines = priceLines[$0.id]
                    return slot
                })
            stock.priceLists = prices.fleetPriceLists
            stock.bands = prices.fleetBands
            let content = Self.json(stock)
            stock.at = self.machine.timekeeper.wallClockMilliseconds
            messages.append((topics.stock(machine), content, Self.json(stock)))
        }
        if settings.publish.contains(.cash) {
            var message = CashMessage(
                machine: machine, currency: status.currency, coinsIn: status.books.coinsIn,
                sales: status.books.sales, refunds: status.books.refunds)
            message.billsIn = status.books.billsIn
            message.changePaid = status.books.changePaid
            message.unknownPayouts = status.books.unknownPayouts
            message.cardSales = status.books.cardSales
            message.cashBox = status.cashBox?.total
            if let devices = status.payoutDevices, !devices.isEmpty {
                // A value may be in several devices (two hoppers of one coin): their counts add up.
                var levels: [CashMessage.ChangeLevel] = []
                for coin in devices.flatMap(\.coins) {
                    if let index = levels.firstIndex(where: { $0.value == coin.value }) {
                        levels[index] = .init(value: coin.value, count: levels[index].count.flatMap { known in coin.count.map { known + $0 } })
                    } else {
                        levels.append(.init(value: coin.value, count: coin.count))
                    }
                }
                message.changeStock = levels
                message.exactChangeOnly = status.exactChangeOnly
            }
            let content = Self.json(message)
            message.at = self.machine.timekeeper.wallClockMilliseconds
            messages.append((topics.cash(machine), content, Self.json(message)))
        }
        if settings.publish.contains(.zones) {
            for zone in status.zones ?? [] {
                var message = Self.zoneMessage(zone, machine: machine)
                let content = Self.json(message)
                message.at = self.machine.timekeeper.wallClockMilliseconds
                messages.append((topics.zone(machine, zone.id), content, Self.json(message)))
            }
        }
        for (topic, content, payload) in messages where link.withLock({ $0.retained[topic] != content }) {
            do {
                try client.publish(topic, payload, retain: true)
                link.withLock { $0.retained[topic] = content }
            } catch {
                return
            }
        }
    }

    /// The fleet store's retained acknowledgement (keep_until_stored): what it covers leaves the
    /// outbox; a payload that makes no sense is logged and changes nothing.
    private func storeAcknowledged(_ payload: [UInt8]) {
        guard outbox.keepUntilStored else { return }
        switch outbox.storeAcknowledged(payload, now: machine.timekeeper.now) {
        case .accepted(let seq, let removed):
            logger.debug("MQTT: the store acknowledges events up to \(seq); \(removed) left the outbox")
            if removed > 0 { schedulePublish() }  // the state's outbox may have drained
        case .ignored(let reason):
            logger.warning(
                "MQTT: the store's acknowledgement on \(topics.stored(settings.machineID)) is ignored: \(reason); nothing leaves the outbox",
                metadata: ["MQTT_TOPIC": "\(topics.stored(settings.machineID))"])
        }
    }

    // MARK: - Commands

    private func answer(_ message: MQTTMessage, _ client: MQTTClient) {
        guard let name = topics.commandName(in: message.topic, machine: settings.machineID) else { return }
        let request = (try? JSONDecoder().decode(RemoteCommand.self, from: Data(message.payload))) ?? RemoteCommand()
        let replyTopic = message.responseTopic ?? "\(topics.reply(settings.machineID))/\(name)"
        let sender = request.sender ?? "unnamed sender"
        var fields: Logger.Metadata = ["MQTT_COMMAND": "\(name)", "MQTT_SENDER": "\(sender)", "MQTT_REPLY_TO": "\(replyTopic)"]
        var response: ControlResponse
        var body: [UInt8]?
        if let command = MQTTSettings.Command(rawValue: name), settings.commands.contains(command) {
            (response, body) = perform(command, request)
        } else {
            response = .failure(
                ControlError(.forbidden, "command '\(name)' is not allowed on this machine (mqtt.commands in \(machine.view.config.file))"))
        }
        fields["MQTT_RESULT"] = "\(response.ok ? "ok" : "refused")"
        let outcome = response.ok ? (response.message ?? "done") : (response.error?.message ?? "failed")
        logger.log(
            level: response.ok ? .notice : .warning, "MQTT command '\(name)' from \(sender) (reply to \(replyTopic)): \(outcome)", metadata: fields)
        do {
            try client.reply(replyTopic, body ?? Self.json(response), correlation: message.correlation)
        } catch {
            logger.warning("MQTT: the reply to '\(name)' could not be sent: \(error)")
        }
    }

    /// The answer, and for `dex` the file that replaces it as the reply's payload.
    private func perform(_ command: MQTTSettings.Command, _ request: RemoteCommand) -> (ControlResponse, [UInt8]?) {
        switch command {
        case .report:
            return (.success(status: status()), nil)
        case .price:
            guard let slot = request.slot, let price = request.price else {
                return (
                    .failure(
                        ControlError(
                            .badRequest,
                            "price needs {\"slot\": \"A1\", \"price\": \"1.50\"} (or \"default\"), and for another line \"list\": 2 and \"payment\": \"cash\""
                        )), nil
                )
            }
            // As `vendctl price SLOT AMOUNT --list N --payment P`: the same checks, the same line.
            switch PriceLineName.read(list: request.list, payment: request.payment) {
            case .failure(let problem): return (.failure(ControlError(.badRequest, problem.reason)), nil)
            case .success(let line): return (CommandHandler.setPrice(slot, price, list: line.list, scope: line.scope, machine: machine), nil)
            }
        case .service:
            guard let on = request.on else { return (.failure(ControlError(.badRequest, "service needs {\"on\": true} or {\"on\": false}")), nil) }
            if let stays = machine.setServiceModeByTechnician(on) { return (.failure(ControlError(.rejected, stays)), nil) }
            return (.success(on ? "service mode on: sales stopped" : "service mode off: back in service"), nil)
        case .dex:
            let view = machine.view
            let communicationID = request.commId ?? view.config.dex?.communicationID ?? "VDD0000001"
            guard DEXAudit.isValidCommunicationID(communicationID) else {
                return (
                    .failure(ControlError(.badRequest, "commId '\(communicationID)' must be 3 capital letters and 7 digits, e.g. VDD0000001")), nil
                )
            }
            do {
                let audit = try DEXAudit(
                    view.reports.sales(since: nil, at: machine.now), communicationID: communicationID,
                    asset: request.asset ?? (request.commId == nil ? view.config.dex?.assetNumber : nil) ?? communicationID)
                return (.success("DEX audit of \(audit.selections.count) selections sent"), Array(DEXWriter.file(audit).utf8))
            } catch {
                return (.failure(ControlError(.rejected, "\(error)")), nil)
            }
        }
    }

    // MARK: - Helpers

    /// The fleet's messages hold strings, integers and booleans only: encoding them cannot fail.
    static func json(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(value))) ?? []
    }
}

/// A command's JSON payload; each command reads the fields it needs. `sender` names the operator
/// for the log (the broker's ACL, not this field, decides who may send commands at all).
struct RemoteCommand: Decodable {
    var sender: String?
    var slot: String?
    var price: String?
    /// price: the line (absent: list 1, every payment), as `vendctl price --list --payment`.
    var list: Int?
    var payment: String?
    var on: Bool?
    /// dex: the communication id (DXS01, ID101) and the operator's asset number (ID106).
    var commId: String?
    var asset: String?
}
