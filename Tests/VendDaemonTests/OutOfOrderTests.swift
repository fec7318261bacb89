import Foundation
import Logging
import Testing
import VendConfig
import VendHardware
import VenddTestSupport
import VendingCore
@testable import VendDaemon

/// Hardware that stops working puts the machine out of order: no coins, no sales, relays given back.
@Suite struct OutOfOrderTests {
    @Test func lostHardwareStopsSalesAndReleasesTheRelays() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/vendd.yaml").path)
        let controller = MachineController(machine: Machine(setup: config.machineSetup),
                                           store: try MachineStore(directory: directory.path), config: config,
                                           logger: Logger(label: "test"))
        let hardware = try Hardware.simulated(config, notify: { _ in })
        await controller.attach(hardware)
        await controller.hardwareFailed("the GPIO inputs stopped delivering events")

        let status = await controller.status()
        #expect(status.state == "out-of-order")
        #expect(status.stateReason == "the GPIO inputs stopped delivering events")
        #expect(await controller.acceptsCoins == false)
        // The relays were given back: driving one now fails instead of moving it.
        let firstSlot = try #require(config.slots.first)
        #expect(await hardware.dispenser.dispense(firstSlot.id) == .notDropped)
        #expect(hardware.world?.chip.isActive(firstSlot.relay.line.line) == false)
        await controller.detachHardware()
        await controller.closeStore()
    }
}
