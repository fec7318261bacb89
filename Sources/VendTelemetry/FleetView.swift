import FoundationEssentials

/// What the fleet console knows of each machine, built from the messages as they arrive.
public struct FleetView: Sendable, Equatable {
    public struct Machine: Sendable, Equatable {
        public let id: String
        public var state: MachineStateMessage?
        public var stock: StockMessage?
        public var cash: CashMessage?
        /// The temperature zones' latest messages, by zone.
        public var zones: [String: ZoneMessage] = [:]
        /// When it last published anything, by its own clock, in milliseconds since the Unix
        /// epoch: the latest `at` of its events and retained messages (a retained message says
        /// when it was last sent, so an offline machine's tells when it was last heard of).
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

        /// What keeps it (or part of it) from selling: out of order, zones under a food-safety
        /// lock, slots out of service after a motor fault, exact change only, the last fault event.
        public var faults: [String] {
            var faults: [String] = []
            if state?.state == "out-of-order" { faults.append(state?.reason ?? "out of order") }
            for zone in zones.values.sorted(by: { $0.zone < $1.zone }) where zone.health == "locked" {
                faults.append("zone \(zone.zone) LOCKED" + (zone.cause.map { " (\($0))" } ?? ""))
            }
            for slot in stock?.slots ?? [] {
                if let fault = slot.fault { faults.append("\(slot.slot) \(fault)") }
            }
            if cash?.exactChangeOnly == true { faults.append("exact change only") }
            if state?.state != "out-of-order", let lastFault { faults.append(lastFault) }
            return faults
        }
    }

    public let topics: FleetTopics
    public private(set) var machines: [String: Machine] = [:]

    public init(topics: FleetTopics) { self.topics = topics }

    /// Takes one message; false when the topic or payload is not one of the fleet's, or it
    /// changed nothing.
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
        case "stock":
            machine.stock = try? decoder.decode(StockMessage.self, from: data)
            machine.lastSeen = max(machine.lastSeen, machine.stock?.at ?? 0)
        case "cash":
            machine.cash = try? decoder.decode(CashMessage.self, from: data)
            machine.lastSeen = max(machine.lastSeen, machine.cash?.at ?? 0)
        case "zones" where levels.count == prefixLevels + 3:
            let zone = String(levels[prefixLevels + 2])
            machine.zones[zone] = try? decoder.decode(ZoneMessage.self, from: data)
            machine.lastSeen = max(machine.lastSeen, machine.zones[zone]?.at ?? 0)
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
        guard machines[id] != machine else { return false }
        machines[id] = machine
        return true
    }
}
