import FoundationEssentials

/// What the fleet console knows of each machine, built from the messages as they arrive.
public struct FleetView: Sendable {
    public struct Machine: Sendable, Equatable {
        public let id: String
        public var state: MachineStateMessage?
        public var stock: StockMessage?
        public var cash: CashMessage?
        /// When it last published anything, by its own clock, in milliseconds since the Unix
        /// epoch (a retained message only says when its content last changed).
        public var lastSeen: Int64 = 0
        /// The last fault event, if any.
        public var lastFault: String?

        /// Slots sold out, low (at most a quarter of capacity left) or holding expired items.
        public func stockAlerts(now: Int64) -> [String] {
            guard let stock else { return [] }
            return stock.slots.compactMap { slot in
                if slot.stock == 0 { return "\(slot.slot) sold out" }
                if let expiry = slot.earliestExpiry, expiry <= now { return "\(slot.slot) expired" }
                if slot.stock * 4 <= slot.capacity { return "\(slot.slot) low (\(slot.stock))" }
                return nil
            }
        }
    }

    public let topics: FleetTopics
    public private(set) var machines: [String: Machine] = [:]

    public init(topics: FleetTopics) { self.topics = topics }

    /// Takes one message; false when the topic or payload is not one of the fleet's.
    @discardableResult
    public mutating func take(topic: String, payload: [UInt8]) -> Bool {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let prefixLevels = topics.prefix.split(separator: "/").count
        guard levels.count > prefixLevels + 1, levels.prefix(prefixLevels).joined(separator: "/") == topics.prefix else { return false }
        let id = String(levels[prefixLevels])
        let kind = levels[prefixLevels + 1]
        var machine = machines[id] ?? Machine(id: id)
        let decoder = JSONDecoder()
        let data = Data(payload)
        switch kind {
        case "state":
            machine.state = try? decoder.decode(MachineStateMessage.self, from: data)
            machine.lastSeen = max(machine.lastSeen, machine.state?.at ?? 0)
        case "stock": machine.stock = try? decoder.decode(StockMessage.self, from: data)
        case "cash": machine.cash = try? decoder.decode(CashMessage.self, from: data)
        case "events", "backlog":
            // A backlog holds several events, one per line (EventBatch).
            let events = EventBatch.events(in: payload).compactMap { try? decoder.decode(TelemetryEvent.self, from: Data($0)) }
            guard !events.isEmpty else { return false }
            for event in events {
                if event.type == .fault { machine.lastFault = event.reason }
                machine.lastSeen = max(machine.lastSeen, event.at)
            }
        default: return false
        }
        machines[id] = machine
        return true
    }
}
