/// Something that went wrong with the machine and is reported until it has been read: a zone's
/// health lock, its refrigeration or its sensor failing, a slot's motor fault. The DEX audit
/// reports incidents as EVA-DTS events (EA1/EA2).
public struct Incident: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public enum Kind: String, Hashable, Comparable, Sendable, Codable, CaseIterable {
        /// The zone's food-safety lock: from when it latched until it is serviced.
        case healthLock = "health-lock"
        /// The zone stayed past its health limit long enough to trip: from when the excursion
        /// began until a reading is within the limit again.
        case overLimit = "over-limit"
        /// The zone's sensors gave no good reading for longer than their grace: from the last good
        /// reading until the next.
        case sensorFault = "sensor-fault"
        /// The slot's motor jammed, is missing or was away from home: until a technician clears it.
        case motorFault = "motor-fault"

        public static func < (lhs: Kind, rhs: Kind) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }
    }

    public let kind: Kind
    /// The zone or the slot.
    public let subject: String

    public init(_ kind: Kind, _ subject: String) {
        self.kind = kind
        self.subject = subject
    }

    public static func healthLock(_ zone: ZoneID) -> Incident { Incident(.healthLock, zone.rawValue) }
    public static func overLimit(_ zone: ZoneID) -> Incident { Incident(.overLimit, zone.rawValue) }
    public static func sensorFault(_ zone: ZoneID) -> Incident { Incident(.sensorFault, zone.rawValue) }
    public static func motorFault(_ slot: SlotID) -> Incident { Incident(.motorFault, slot.rawValue) }

    /// "health-lock chilled".
    public var description: String { "\(kind.rawValue) \(subject)" }

    public static func < (lhs: Incident, rhs: Incident) -> Bool { (lhs.kind, lhs.subject) < (rhs.kind, rhs.subject) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let parsed = Incident(text: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an incident: '\(text)'"))
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    init?(text: String) {
        guard let space = text.firstIndex(of: " "), let kind = Kind(rawValue: String(text[..<space])) else { return nil }
        self.init(kind, String(text[text.index(after: space)...]))
    }
}

extension Incident: CodingKeyRepresentable {
    /// Dictionaries keyed by incidents encode as objects (`{"motor-fault A1": …}`).
    public var codingKey: any CodingKey { AnyCodingKey(description) }
    public init?<Key: CodingKey>(codingKey: Key) { self.init(text: codingKey.stringValue) }
}

/// What the machine keeps of one incident: how often it began, and its latest occurrence.
public struct IncidentRecord: Hashable, Sendable, Codable {
    /// Occurrences since the machine was new (EA203); never reset.
    public internal(set) var occurrences: Int
    public internal(set) var lastStart: Instant
    /// nil while the latest occurrence lasts.
    public internal(set) var lastEnd: Instant?
    /// What the latest occurrence was, for people ("jammed", "sensor missing").
    public internal(set) var detail: String

    public init(occurrences: Int, lastStart: Instant, lastEnd: Instant?, detail: String) {
        self.occurrences = occurrences
        self.lastStart = lastStart
        self.lastEnd = lastEnd
        self.detail = detail
    }

    public var isActive: Bool { lastEnd == nil }

    /// How long the latest occurrence lasted, or has lasted by `now`.
    public func duration(at now: Instant) -> Duration { max((lastEnd ?? now) - lastStart, .zero) }
}

extension Machine {
    /// An incident began at `start` (a health trip names when its excursion began). One already
    /// under way goes on: it is the same occurrence.
    mutating func beginIncident(_ incident: Incident, at start: Instant, detail: String) {
        if var record = incidents[incident] {
            guard !record.isActive else { return }
            record.occurrences += 1
            record.lastStart = start
            record.lastEnd = nil
            record.detail = detail
            incidents[incident] = record
        } else {
            incidents[incident] = IncidentRecord(occurrences: 1, lastStart: start, lastEnd: nil, detail: detail)
        }
    }

    mutating func endIncident(_ incident: Incident, at end: Instant) {
        guard incidents[incident]?.isActive == true else { return }
        incidents[incident]?.lastEnd = end
    }

    /// What each incident's "since last reset" count (EA202) counts from: its occurrences at the
    /// last acknowledged DEX read. An incident active at that read was not reset (EVA-DTS 6.1.1
    /// §2.8.2: only events no longer active are), so its occurrence counts again.
    public var incidentCountsForReset: [Incident: Int] {
        incidents.mapValues { $0.occurrences - ($0.isActive ? 1 : 0) }
    }

    /// Occurrences of `incident` since the last acknowledged DEX read.
    public func occurrencesSinceRead(of incident: Incident) -> Int {
        (incidents[incident]?.occurrences ?? 0) - (lastAuditRead?.incidents[incident] ?? 0)
    }

    /// The whole-life totals a DEX audit made now reports: the ledger's, and the incidents'.
    public var auditTotals: AuditTotals {
        var totals = AuditTotals(ledger)
        totals.incidents = incidentCountsForReset
        return totals
    }
}
