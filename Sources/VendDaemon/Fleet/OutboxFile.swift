import FoundationEssentials
import VendStore
import VendTelemetry

/// `outbox.json`: `{"lastSeq": N, "events": [...]}`. A vendd without sequence numbers wrote a bare
/// array of events; it is still read.
struct OutboxFile: Codable {
    let lastSequence: UInt64
    let events: [TelemetryEvent]

    enum CodingKeys: String, CodingKey {
        case lastSequence = "lastSeq"
        case events
    }

    static let empty = OutboxFile(lastSequence: 0, events: [])

    static func decode(_ bytes: [UInt8]) throws -> OutboxFile {
        let decoder = JSONDecoder()
        if bytes.first(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) == UInt8(ascii: "[") {
            return OutboxFile(lastSequence: 0, events: try decoder.decode([TelemetryEvent].self, from: Data(bytes)))
        }
        return try decoder.decode(OutboxFile.self, from: Data(bytes))
    }

    /// With the events journaled after this file was written, each id once, after its own; the
    /// last sequence number the highest either knows.
    func adding(journaled: [TelemetryEvent]) -> OutboxFile {
        var seen = Set(events.map(\.id))
        let merged = events + journaled.filter { seen.insert($0.id).inserted }
        return OutboxFile(lastSequence: max(lastSequence, merged.compactMap(\.seq).max() ?? 0), events: merged)
    }

    /// Before `--reset-state` moves the journal aside: the fleet events journaled since the last
    /// compaction go into `outbox.json`, so that they are still delivered and their sequence
    /// numbers are never given again. Reset empties the machine, not what it already told the
    /// fleet. Returns what to log when a machine with a fleet outbox cannot have its journal read
    /// (its events are then left behind with it, and their numbers may be given again).
    static func keepThroughReset(_ store: MachineStore) -> String? {
        guard let bytes = try? store.readCompanion(Outbox.fileName) else { return nil }
        do {
            let journaled = try store.restore().entries.flatMap { $0.outbox ?? [] }
            guard !journaled.isEmpty else { return nil }
            let kept = try decode(bytes).adding(journaled: journaled)
            try store.replaceCompanion(Outbox.fileName, with: Array(JSONEncoder().encode(kept)))
            return nil
        } catch {
            return
                "the fleet events journaled since the last compaction could not be kept in \(Outbox.fileName) (\(error)); they stay in the journal moved aside, and the fleet store may see their sequence numbers again"
        }
    }
}
