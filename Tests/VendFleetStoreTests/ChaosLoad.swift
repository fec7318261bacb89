import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

/// A count from the environment (a note's run scales the chaos up), else `fallback`.
func chaosSetting(_ name: String, _ fallback: Int) -> Int {
    Int(ProcessInfo.processInfo.environment[name] ?? "") ?? fallback
}

/// The chaos runs' random choices: VENDSTORE_CHAOS_SEED repeats a run.
func chaosGenerator() -> SplitMix64 {
    SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["VENDSTORE_CHAOS_SEED"] ?? "") ?? 37)
}

/// vendstore-load streaming simulated machines' events (m00001…) to the rig's broker, sending
/// again what stays unacknowledged, until the store has acknowledged every one; then the count.
final class ChaosLoad: @unchecked Sendable {
    // @unchecked: one test drives it.
    let machines: Int
    let eventsPerMachine: Int
    let logPath: String
    private let process: ChildProcess

    var events: Int { machines * eventsPerMachine }
    var isRunning: Bool { process.isRunning }

    /// Steady streaming at `rate` events a second in all, so that every kill finds some in flight.
    init(_ rig: StoreProcessRig, machines: Int = 20, eventsPerMachine: Int, rate: Int = 400) throws {
        self.machines = machines
        self.eventsPerMachine = eventsPerMachine
        logPath = rig.directory.path + "/load.log"
        process = try ChildProcess(
            builtProduct("vendstore-load"),
            [
                "--broker", rig.broker.url, "--machines", "\(machines)", "--events-per-machine", "\(eventsPerMachine)",
                "--rate", "\(rate)", "--resend-milliseconds", "1000", "--timeout-seconds", "600",
            ], output: logPath, errors: logPath)
    }

    /// Waits until vendstore-load ends: every event acknowledged by the store (it exits 0), or it gave up.
    func waitUntilAcknowledged(timeout: TimeInterval = 120) throws {
        let status = process.wait(seconds: timeout)
        #expect(status == 0, "vendstore-load: status \(String(describing: status)): \(summary)")
    }

    var summary: String { ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }

    func stop() { process.stop(SIGKILL) }

    /// Counts what `store` holds of the load's events, prints the case's one line, and expects every
    /// event exactly once: all stored, none lost, none duplicated, no gap, every machine contiguous.
    func expectExactlyOnce(in store: FleetStore, case name: String, kills: String) throws {
        var stored = 0, lost = 0, duplicated = 0
        for number in 1...machines {
            let name = "m" + String(repeating: "0", count: 5 - String(number).count) + String(number)
            let held = try store.events(of: name, from: 1, limit: eventsPerMachine * 2)
            stored += held.count
            lost += eventsPerMachine - Set(held.map(\.seq)).intersection(1...Int64(eventsPerMachine)).count
            duplicated += held.count - Set(held.map(\.id)).count
        }
        print("chaos: \(name): kills \(kills), events \(events), stored \(stored), lost \(lost), duplicated \(duplicated); load: \(summary)")
        #expect(stored == events)
        #expect(lost == 0)
        #expect(duplicated == 0)
        #expect(try store.gaps().isEmpty)
        let progress = try store.progress()
        #expect(progress.count == machines && progress.allSatisfy { $0.contiguous == Int64(eventsPerMachine) }, "\(progress)")
    }
}
