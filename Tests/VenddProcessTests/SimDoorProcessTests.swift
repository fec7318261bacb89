import Foundation
import Testing
import VendControl
import VenddTestSupport

/// `vendctl sim door` is the door switch, as the README and the sample say: an open door puts the
/// machine in service mode (the same input as the GPIO door line), and where there are
/// temperature zones, their cabinet sees the door too. The answer comes once the machine has it.
@Suite(.oneRealProcessTestAtATime) struct SimDoorProcessTests {
    @Test func openingTheDoorOfTheSampleMachinePutsItInServiceMode() throws {
        let daemon = try DaemonHarness(config: DaemonHarness.sampleMachine)
        defer { daemon.tearDown() }
        try daemon.start()
        #expect(try daemon.status().state == "in-service")

        let open = try daemon.vendctl("sim", "door", "open")
        #expect(open.status == 0, "\(open.errors)")
        #expect(open.output == "opened the door: the machine is in service mode\n")
        let opened = try daemon.status()
        #expect(opened.state == "service-mode", "a status right after the answer sees the open door")
        #expect(opened.stateReason?.contains("the door is open") == true, "\(opened.stateReason ?? "")")

        let closed = try daemon.vendctl("sim", "door", "close")
        #expect(closed.output == "closed the door: the machine is back in service\n", "\(closed.errors)")
        #expect(try daemon.status().state == "in-service")
    }

    @Test func theZonesSeeTheSameDoor() throws {
        let daemon = try DaemonHarness(config: "config/examples/chilled-food.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        #expect(try daemon.vendctl("sim", "door", "open").status == 0)
        let opened = try daemon.status()
        #expect(opened.state == "service-mode")
        #expect(opened.zones?.allSatisfy(\.doorOpen) == true, "every zone shares the cabinet door")
        #expect(try daemon.vendctl("sim", "door", "close").status == 0)
        let closed = try daemon.status()
        #expect(closed.state == "in-service")
        #expect(closed.zones?.allSatisfy { !$0.doorOpen } == true)
    }

    @Test func aMachineWithoutADoorSwitchSaysSo() throws {
        let daemon = try DaemonHarness(config: "config/examples/minimal.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        let open = try daemon.vendctl("sim", "door", "open")
        #expect(open.status == 1)
        #expect(open.errors.contains("the configuration has no door switch"), "\(open.errors)")
    }
}
