import VendTelemetry

/// What the store makes of a topic under `<prefix>` (docs/mqtt.md). The machine is always the
/// topic's `<machine>` level: the broker's ACL ties it to the machine's credentials.
public enum StoreTopic: Equatable, Sendable {
    /// `<prefix>/<machine>/events/<type>`
    case event(machine: String, type: String)
    /// `<prefix>/<machine>/backlog`: several events, one per line (`EventBatch`)
    case backlog(machine: String)
    /// `<prefix>/<machine>/state|stock|cash` or `<prefix>/<machine>/zones/<zone>`: the subject
    /// is the topic after the machine.
    case retained(machine: String, subject: String)
}

/// The store's side of VendTelemetry's topic tree (whose `stored(_:)` names the acknowledgement's topic).
extension FleetTopics {
    /// What the store subscribes to; with `sharedGroup`, as an MQTT 5 shared subscription so
    /// that several ingesters split the messages between them.
    public func subscriptions(sharedGroup: String?) -> [String] {
        ["+/events/#", "+/backlog", "+/state", "+/stock", "+/cash", "+/zones/+"].map { pattern in
            let topic = "\(prefix)/\(pattern)"
            return sharedGroup.map { "$share/\($0)/\(topic)" } ?? topic
        }
    }

    /// Nil for a topic the store does not keep (its own acknowledgements, commands, replies).
    public func classify(_ topic: String) -> StoreTopic? {
        guard topic.hasPrefix(prefix + "/") else { return nil }
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.count >= 2, !levels[0].isEmpty else { return nil }
        switch (levels[1], levels.count) {
        case ("events", 3) where !levels[2].isEmpty: return .event(machine: levels[0], type: levels[2])
        case ("backlog", 2): return .backlog(machine: levels[0])
        case ("state", 2), ("stock", 2), ("cash", 2): return .retained(machine: levels[0], subject: levels[1])
        case ("zones", 3) where !levels[2].isEmpty: return .retained(machine: levels[0], subject: "zones/" + levels[2])
        default: return nil
        }
    }
}
