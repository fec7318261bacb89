import VendClimate
import VendConfig
import VendHardware
import VendSettings
import VendTime
import VendingCore

/// The zones' relay lines: each zone's compressor (cold) or heater (hot), and its defrost heater.
/// Requested inactive when the climate service starts and held until it stops, across reloads:
/// giving a compressor's line back for a reload would stop it and restart it inside its minimum
/// off time. `release` drives every line inactive; after a crash the kernel frees the lines and
/// the relay boards' pull resistors keep them off (see README: Installing).
final class ZoneOutputs: Sendable {
    private let group: (any GPIOOutputGroup)?
    /// Each zone's index in the group for its relay and its defrost heater, in zone order.
    private let relays: [Int?]
    private let heaters: [Int?]

    /// Requests every zone's lines as one group on `chips`; a busy line or a missing chip is
    /// reported at the line of the file that names it.
    init(zones: [ZoneConfig], chips: GPIOChipSet) throws(GPIOError) {
        var lines: [OutputLineConfig] = []
        var relays: [Int?] = []
        var heaters: [Int?] = []
        for zone in zones {
            relays.append(zone.relay.map { _ in lines.count })
            if let relay = zone.relay { lines.append(relay) }
            heaters.append(zone.defrostHeater.map { _ in lines.count })
            if let heater = zone.defrostHeater { lines.append(heater) }
        }
        group = lines.isEmpty ? nil : try chips.requestOutputs(lines, consumer: "vendd-zones")
        self.relays = relays
        self.heaters = heaters
    }

    /// Carries out the zone's switching actions, in order; the first failure is returned (the
    /// remaining actions are still tried: an off must reach its line even after an on failed).
    func apply(_ actions: [ZoneAction], zone index: Int) -> GPIOError? {
        var failure: GPIOError?
        for action in actions {
            let line: Int?, active: Bool
            switch action {
            case .relay(let on): (line, active) = (relays[index], on)
            case .defrostHeater(let on): (line, active) = (heaters[index], on)
            case .defrost, .tripped: continue
            }
            guard let group, let line else { continue }
            do throws(GPIOError) {
                try group.set(line, active: active)
            } catch {
                failure = failure ?? error
            }
        }
        return failure
    }

    /// Every line inactive and given back; safe to call more than once.
    func release() { group?.release() }
}

/// The zones' control time. Minimum on and off times, the start delay, trip timers, recovery
/// windows and defrost phases are measured on the monotonic clock, counted from the service's
/// start: an NTP step of the wall clock can neither restart a compressor inside its minimum off
/// time nor shorten a trip. Only what is shown or recorded as a date (an excursion's start, a
/// lock's "since") is turned into wall-clock time, as that long before the wall clock's now.
struct ZoneClock: Sendable {
    let timekeeper: any Timekeeper
    let origin: ContinuousClock.Instant

    init(timekeeper: any Timekeeper) {
        self.timekeeper = timekeeper
        origin = timekeeper.now
    }

    /// Now, in control time.
    var now: Instant { Instant(millisecondsSinceEpoch: (timekeeper.now - origin).wholeMilliseconds) }

    /// A control instant as a wall-clock date.
    func date(of instant: Instant) -> Instant {
        Instant(millisecondsSinceEpoch: timekeeper.wallClockMilliseconds - (now - instant).wholeMilliseconds)
    }
}
