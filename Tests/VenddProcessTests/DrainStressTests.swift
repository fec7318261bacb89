import Foundation
import Testing
import VendControl
import VenddTestSupport

/// Reload and shutdown drain through the machine's ordered path. A customer presses buttons and
/// feeds coins without pause while vendd reloads 200 times and stops and starts 50 times: no
/// relay is released before its pulse ends (nothing detaches a relay mid-pulse), every relay
/// energised is released, and no vend starts between a drain and its end.
@Suite(.serialized) struct DrainStressTests {
    static let reloads = 200
    static let restarts = 50
    static let pulse = 100

    /// The sample machine with short pulses, so that the stress runs in seconds.
    static func edit(_ sample: String) -> String {
        sample.replacingOccurrences(of: "pulse_ms: 600", with: "pulse_ms: \(pulse)")
    }

    @Test(.timeLimit(.minutes(5))) func aCustomerPressingThroughReloadsAndRestartsNeverSeesARelayCutOrAVendWhileDraining() async throws {
        let daemon = try DaemonHarness(edit: Self.edit)
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        let customer = Customer(socketPath: daemon.socketPath)
        let pressing = Thread { customer.run() }
        pressing.start()
        defer { customer.stop() }

        for reload in 1...Self.reloads {
            daemon.signal(SIGHUP)
            try daemon.waitForLog("configuration reloaded", count: reload, timeout: 30)
        }
        for _ in 1...Self.restarts {
            #expect(try daemon.stop() == 0)
            try daemon.start()
        }
        customer.stop()
        #expect(try daemon.stop() == 0)

        let lines = daemon.allLogs.split(separator: "\n").map(String.init)
        var draining = false
        var energised = 0, released = 0, started = 0, startedWhileDraining: [String] = []
        var shortPulses: [String] = []
        for line in lines {
            if line.contains("draining: no vend, coin or payout starts") { draining = true }
            if line.contains("draining ended") || line.contains("vendd ready in") { draining = false }
            if line.contains(" started: slot ") {
                started += 1
                if draining { startedWhileDraining.append(line) }
            }
            if line.contains("energised (line") { energised += 1 }
            if let range = line.range(of: #"released after (\d+) ms"#, options: .regularExpression) {
                released += 1
                let milliseconds = Int(line[range].split(separator: " ")[2]) ?? 0
                if milliseconds < Self.pulse { shortPulses.append(line) }
            }
        }
        print(
            "drain stress: \(Self.reloads) reloads, \(Self.restarts) restarts, \(customer.presses) presses, \(started) vends started, \(energised) relays energised, \(released) released, \(startedWhileDraining.count) vends started while draining, \(shortPulses.count) pulses cut short"
        )
        #expect(started > 20, "the customer bought through the reloads")
        #expect(startedWhileDraining.isEmpty, "\(startedWhileDraining.prefix(3))")
        #expect(shortPulses.isEmpty, "\(shortPulses.prefix(3))")
        #expect(energised == released, "every relay energised was released at the end of its pulse")
        #expect(!daemon.allLogs.contains("cut by its"), "no maximum on-time cut")
    }
}

/// Feeds coins and presses A1–A4 in turn, restocking now and then, until stopped; ignores
/// refusals and the moments vendd is not there.
final class Customer: @unchecked Sendable {
    // @unchecked: `stopped` and `presses` are only touched under `lock`.
    private let socketPath: String
    private let lock = NSLock()
    private var stopped = false
    private var count = 0

    init(socketPath: String) { self.socketPath = socketPath }

    var presses: Int { lock.withLock { count } }

    func stop() { lock.withLock { stopped = true } }

    func run() {
        let slots = ["A1", "A2", "A3", "A4"]
        var round = 0
        while !lock.withLock({ stopped }) {
            round += 1
            guard let client = try? ControlClient(path: socketPath) else {
                usleep(2_000)
                continue
            }
            _ = try? client.send(.sim(.coin(amount: "500")))
            _ = try? ControlClient(path: socketPath).send(.sim(.coin(amount: "500")))
            _ = try? ControlClient(path: socketPath).send(.sim(.coin(amount: "500")))
            _ = try? ControlClient(path: socketPath).send(.sim(.press(slot: slots[round % slots.count])))
            if round % 25 == 0 { _ = try? ControlClient(path: socketPath).send(.restock(slot: "all", count: nil)) }
            lock.withLock { count += 1 }
            usleep(5_000)
        }
    }
}
