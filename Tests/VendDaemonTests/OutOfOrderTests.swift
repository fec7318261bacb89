import Foundation
import Logging
import Testing
import VendConfig
import VendHardware
import VendTime
import VenddTestSupport
import VendingCore
@testable import VendDaemon

/// A controller on the sample machine with simulated hardware and manual time.
struct ControllerRig {
    let directory: TemporaryDirectory
    let config: VenddConfig
    let time = ManualTimekeeper()
    let controller: MachineController
    let hardware: Hardware

    init() throws {
        directory = try TemporaryDirectory()
        config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/vendd.yaml").path)
        let store = try MachineStore(directory: directory.path)
        _ = try store.restore()
        controller = MachineController(machine: Machine(setup: config.machineSetup), store: store, config: config,
                                       logger: Logger(label: "test"), timekeeper: time)
        let notices = controller.notices
        hardware = try Hardware.simulated(config, timekeeper: time, notify: { notices.post($0) })
        controller.attach(hardware)
    }

    var world: SimulatedWorld { hardware.world! }

    func tearDown() async {
        await controller.detachHardware()
        controller.closeStore()
        directory.remove()
    }
}

/// Hardware that stops working puts the machine out of order: no coins, no sales, relays given back.
@Suite struct OutOfOrderTests {
    @Test func lostHardwareStopsSalesAndReleasesTheRelays() async throws {
        let rig = try ControllerRig()
        rig.controller.submit(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))
        #expect(rig.world.coinAcceptor.isAccepting)
        rig.controller.hardwareFailed("the GPIO inputs stopped delivering events")

        let status = rig.controller.status()
        #expect(status.state == "out-of-order")
        #expect(status.stateReason == "the GPIO inputs stopped delivering events")
        #expect(rig.controller.acceptsCoins == false)
        #expect(!rig.world.coinAcceptor.isAccepting)
        // The relays were given back: driving one now fails instead of moving it.
        let firstSlot = try #require(rig.config.slots.first)
        #expect(rig.hardware.dispenser.start(firstSlot.id, completion: { _ in }) == .notDropped)
        #expect(rig.world.chip.isActive(firstSlot.relay.line.line) == false)
        await rig.tearDown()
    }
}
