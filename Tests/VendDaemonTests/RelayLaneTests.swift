import Dispatch
import Testing
import VendingCore

@testable import VendDaemon

/// The relay lane never waits on the machine's: a pulse ends on time while the machine is stuck
/// in a journal write. The machine journals (and fsyncs) each input on its lane with its state
/// held, so the test holds the lane there, as a write that never returns would, and the pulse
/// must still end.
@Suite(.timeLimit(.minutes(5))) struct RelayLaneTests {
    @Test func aPulseEndsOnTimeWhileTheMachineIsStuckInTheJournal() async throws {
        let rig = try ControllerRig(separateRelayTimers: true)
        let slot = try #require(rig.config.slots.first { $0.id == "A1" })  // 1 200원, a 600 ms pulse
        let relay = try #require(slot.relay)
        rig.controller.sendAndWait(.restock(slot.id, count: nil, loadedAt: nil))
        for _ in 0..<3 { _ = rig.world.coinAcceptor.insert(Money(minorUnits: 500, currency: rig.config.machine.currency)) }
        rig.controller.sendAndWait(.slotSelected(slot.id))
        #expect(rig.world.chip.isActive(relay.line.line))

        let controller = rig.controller, relayTime = rig.relayTime
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            controller.onLane { _ in
                held.signal()
                release.wait()
            }
        }
        held.wait()
        // On the relay lane's clock: the pulse's end, then the drop window's (no item fell: the
        // main clock stands still), whose outcome goes to the stuck machine.
        let window = try #require(slot.dropSensor).window
        let pulseEnded = DispatchSemaphore(value: 0), windowClosed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            relayTime.advance(by: relay.pulse)
            pulseEnded.signal()
            relayTime.advance(by: window)
            windowClosed.signal()
        }
        let endedInTime = pulseEnded.wait(timeout: .now() + .seconds(5)) == .success
        let releasedInTime = !rig.world.chip.isActive(relay.line.line)
        let closedInTime = windowClosed.wait(timeout: .now() + .seconds(5)) == .success
        release.signal()
        #expect(endedInTime, "the pulse's end waited for the machine")
        #expect(releasedInTime)
        #expect(closedInTime, "the drop window's end waited for the machine")
        if !closedInTime { windowClosed.wait() }

        // The machine, free again, ends the vend: nothing dropped, the price back to credit.
        rig.controller.settle()
        #expect(rig.controller.pendingVend == nil)
        #expect(rig.controller.status().books.failedVends == 1)
        await rig.tearDown()
    }
}
