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
    /// The dispenser's timers: `time` itself unless the rig was made with relay timers of their own.
    let relayTime: ManualTimekeeper
    let controller: MachineController
    let hardware: Hardware

    /// `edit` may change the sample configuration's text; with `directory`, the machine is
    /// restored from the state left there (a restart), otherwise it starts new.
    /// `devices` may swap parts of the simulated hardware. `separateRelayTimers` gives the
    /// dispenser's timers a clock of their own (`relayTime`), as vendd's `vendd-relays` thread.
    init(
        edit: (String) -> String = { $0 }, directory existing: TemporaryDirectory? = nil, separateRelayTimers: Bool = false,
        logger: Logger = Logger(label: "test"),
        devices: (Hardware, ManualTimekeeper) -> Hardware = { hardware, _ in hardware }
    ) throws {
        relayTime = separateRelayTimers ? ManualTimekeeper() : time
        directory = try existing ?? TemporaryDirectory()
        let sample = try String(contentsOf: repositoryRoot.appendingPathComponent("config/examples/cctalk-coins.yaml"), encoding: .utf8)
        let configPath = directory.path + "/vendd.yaml"
        try edit(sample).write(toFile: configPath, atomically: true, encoding: .utf8)
        config = try ConfigLoader.load(file: configPath)
        let store = try MachineStore(directory: directory.path)
        let machine = try Startup.restore(from: store, config: config, outbox: nil, now: time.wallClockMilliseconds, logger: logger).get().machine
        controller = MachineController(
            machine: machine, store: store, config: config, logger: logger, timekeeper: time, relayTimers: relayTime)
        if existing != nil { _ = controller.resolveInterruptedVend() }
        let notices = controller.notices
        hardware = devices(
            try Hardware.simulated(
                config, stateDirectory: directory.path, timekeeper: time, relayTimers: relayTime,
                notify: { notices.post($0) }), time)
        controller.attach(hardware)
        controller.settle()
    }

    var world: SimulatedWorld { hardware.world! }

    /// Time passes in 10 ms steps; after each, the machine has carried out every input the
    /// devices and timers sent it (they reach it through its inbox, on its own thread).
    func advance(by duration: Duration) {
        let end = time.now + duration
        while time.now < end {
            time.advance(by: min(.milliseconds(10), end - time.now))
            controller.settle()
        }
    }

    func tearDown() async {
        await controller.detachHardware()
        controller.closeStore()
        directory.remove()
    }
}

/// Hardware that stops working puts the machine out of order: no coins, no sales, relays given back.
@Suite(.timeLimit(.minutes(5))) struct OutOfOrderTests {
    @Test func lostHardwareStopsSalesAndReleasesTheRelays() async throws {
        let rig = try ControllerRig()
        rig.controller.sendAndWait(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))
        #expect(rig.world.coinAcceptor.isAccepting)
        rig.controller.inputs.hardwareFailed("the GPIO inputs stopped delivering events")
        rig.controller.settle()  // an input like any other

        let status = rig.controller.status()
        #expect(status.state == "out-of-order")
        #expect(status.stateReason == "the GPIO inputs stopped delivering events")
        #expect(rig.controller.acceptsCoins == false)
        #expect(!rig.world.coinAcceptor.isAccepting)
        // The relays were given back: driving one now fails instead of moving it.
        let firstSlot = try #require(rig.config.slots.first)
        #expect(rig.hardware.dispenser.start(firstSlot.id, completion: { _ in }) == .notDropped)
        #expect(rig.world.chip.isActive(try #require(firstSlot.relay).line.line) == false)
        await rig.tearDown()
    }
}
