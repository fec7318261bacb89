import Logging
import Testing
import VendHardware
import VendingCore

@testable import VendDaemon

/// Every kind of device report takes the one route to its place: money, presses and switches
/// become the machine's inputs, coins refilled its change stock, a failure puts it out of order,
/// and a drop goes to the dispenser's open window (the machine hears only the vend's outcome).
@Suite(.timeLimit(.minutes(5))) struct DeviceReportRouteTests {
    @Test func eachReportReachesItsPlace() async throws {
        let rig = try ControllerRig()
        let controller = rig.controller
        let route = DeviceReportRoute(
            logger: Logger(label: "test"), notices: controller.notices, machine: controller.inputs, dispenser: rig.hardware.dispenser)
        let won = { (amount: Int64) in Money(minorUnits: amount, currency: rig.config.machine.currency) }
        let slot = try #require(rig.config.slots.first { $0.id == "A1" })  // 1 200원
        let sensor = try #require(slot.dropSensor)
        controller.sendAndWait(.restock(slot.id, count: nil, loadedAt: nil))

        for sequence in 1...3 {
            route.report(.cash(.accepted(AcceptedCoin(channel: 4, value: won(500), event: CoinEventID(source: "route", sequence: UInt64(sequence))))))
        }
        route.report(.changeInventory([ChangeStock(value: won(500), count: 7)]))
        controller.settle()
        #expect(controller.currentMachine.credit == won(1_500))
        #expect(controller.currentMachine.changeInventory == [ChangeStock(value: won(500), count: 7)])

        // The simulated item stays caught: the only drop is the one reported here.
        try rig.world.setDrop(slot.id, succeeds: false)
        route.report(.panel(.slotButtonPressed(slot.id)))
        controller.settle()
        #expect(controller.pendingVend?.slot == slot.id)
        rig.advance(by: .milliseconds(700))
        route.report(.panel(.dropSensed(sensor.input.line, at: rig.time.now)))
        rig.advance(by: .milliseconds(10))
        #expect(controller.pendingVend == nil)
        #expect(controller.currentMachine.ledger.sales == won(1_200), "the drop confirmed the vend")

        route.report(.panel(.serviceKey(on: true)))
        controller.settle()
        #expect(controller.switches.serviceKeyOn && controller.currentMachine.isInServiceMode)

        route.report(.failed("the test's lines are gone"))
        controller.settle()
        #expect(controller.status().stateReason == "the test's lines are gone")
        await rig.tearDown()
    }
}
