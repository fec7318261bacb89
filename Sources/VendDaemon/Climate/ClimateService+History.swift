import Synchronization
import VendClimate
import VendControl
import VendingCore

/// Each zone's `TemperatureHistory`, fed by the sensors' lane and read by `vendctl temps`.
final class ZoneHistories: Sendable {
    private struct Entry {
        let id: ZoneID
        let kind: ZoneKind
        var history = TemperatureHistory()
    }

    private let entries: Mutex<[Entry]>

    /// The zones in the file's order.
    init(_ zones: [(ZoneID, ZoneKind)]) {
        entries = Mutex(zones.map { Entry(id: $0.0, kind: $0.1) })
    }

    func record(_ reading: Result<Temperature, SensorFault>, zone: ZoneID, at now: Instant) {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.id == zone }) else { return }
            entries[index].history.record(reading, at: now)
        }
    }

    enum Refusal: Error {
        case unknownZone(known: [ZoneID])
    }

    /// Every zone's samples (or `zone`'s) that began in the `minutes` before `now` (all kept: nil).
    func report(zone: ZoneID?, minutes: Int?, now: Instant) throws(Refusal) -> [TempsReport.Zone] {
        let since = Instant(millisecondsSinceEpoch: minutes.map { now.millisecondsSinceEpoch - Int64($0) * 60_000 } ?? .min)
        let chosen = entries.withLock { entries in
            entries.filter { zone == nil || $0.id == zone }.map { entry in
                TempsReport.Zone(
                    id: entry.id.rawValue, kind: entry.kind.rawValue, intervalSeconds: Int(entry.history.intervalMilliseconds / 1_000),
                    samples: entry.history.samples(since: since).map { sample in
                        TempsReport.Sample(
                            at: sample.start.millisecondsSinceEpoch, lowest: sample.lowest?.decimalCelsius,
                            highest: sample.highest?.decimalCelsius, last: sample.last?.decimalCelsius, faults: sample.faults)
                    })
            }
        }
        if chosen.isEmpty { throw .unknownZone(known: entries.withLock { $0.map(\.id) }) }
        return chosen
    }
}
