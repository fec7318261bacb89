import Testing
import VendClimate
import VenddTestSupport
import VendingCore

/// Seeded random cabinet lives: temperatures that wander and jump, sensor faults, doors, readings
/// at uneven intervals. Whatever happens, the compressor keeps its protection times.
@Suite struct ZonePropertyTests {
    @Test(arguments: 0..<40)
    func compressorNeverRestartsInsideItsMinimumOffTime(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let defrost = DefrostSettings(
            method: .offCycle, interval: .seconds(1_800), termination: .celsius(6), maximumDuration: .seconds(900), drip: .seconds(120))
        let settings = Zones.cold(defrost: Bool.random(using: &random) ? defrost : nil)
        guard let thermostat = settings.thermostat else { return }
        var now = Zones.start
        var zone = ZoneController(settings: settings, poweredOnAt: now)
        var temperature = Int.random(in: -2_000...12_000, using: &random)
        var lastOff: Instant?
        var lastOn: Instant?
        for _ in 0..<3_000 {
            now = now + .milliseconds(Int64.random(in: 100...90_000, using: &random))
            temperature += Int.random(in: -800...800, using: &random)
            let actions: [ZoneAction]
            switch Int.random(in: 0..<20, using: &random) {
            case 0: actions = zone.record(.failure(.crcMismatch), at: now)
            case 1: actions = zone.setDoor(open: Bool.random(using: &random), at: now)
            case 2: actions = zone.tick(at: now)
            case 3: actions = zone.serviced(at: now)
            default: actions = zone.record(.success(Temperature(millidegreesCelsius: temperature)), at: now)
            }
            for case .relay(let on) in actions {
                if on {
                    #expect(now >= Zones.start + thermostat.startDelay, "seed \(seed): started inside the start delay")
                    if let lastOff { #expect(now - lastOff >= thermostat.minimumOff, "seed \(seed): restarted after \(now - lastOff)") }
                    lastOn = now
                } else {
                    if let lastOn { #expect(now - lastOn >= thermostat.minimumOn, "seed \(seed): stopped after \(now - lastOn)") }
                    lastOff = now
                }
            }
            if zone.defrost != .idle { #expect(!zone.relayOn, "seed \(seed): cooling during a defrost") }
        }
    }
}
