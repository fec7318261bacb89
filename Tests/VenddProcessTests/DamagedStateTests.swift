import Foundation
import Testing
import VendControl
import VenddTestSupport

/// What a technician finds when the state files are damaged: never an empty machine in silence.
@Suite(.oneRealProcessTestAtATime) struct DamagedStateTests {
    /// A machine with credit and stock, stopped cleanly so that state.json holds it.
    func stoppedMachine() throws -> DaemonHarness {
        let daemon = try DaemonHarness()
        try daemon.start()
        try daemon.send(.restock(slot: "A1", count: 4))
        try daemon.send(.sim(.coin(amount: "500")))
        #expect(try daemon.stop() == 0)
        return daemon
    }

    func damage(_ file: String, _ change: (inout Data) -> Void) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: file))
        change(&data)
        try data.write(to: URL(fileURLWithPath: file))
    }

    func expectRefusal(_ daemon: DaemonHarness, mentioning text: String) throws {
        try daemon.start()
        #expect(try daemon.waitForExit() == 65)
        #expect(daemon.log.contains(text), "log: \(daemon.log)")
    }

    /// How the technician resets: `vendd run --reset-state`, or `vendd reset-state` before a start.
    enum Reset { case runFlag, subcommand }

    func expectMovedAsideAndRecoverable(_ daemon: DaemonHarness, by reset: Reset) throws {
        let entries = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory)
        #expect(entries.contains { $0.hasPrefix("corrupt-") })
        #expect(entries.contains("STATE-LOST"))
        // A second start refuses too: the machine is not silently emptied by a restart loop.
        try expectRefusal(daemon, mentioning: "--reset-state")
        // The documented recovery: an explicit reset starts an empty machine.
        switch reset {
        case .runFlag:
            try daemon.start(extraArguments: ["--reset-state"])
            #expect(daemon.log.contains("--reset-state: starting with an empty machine"))
        case .subcommand:
            let tool = Process()
            tool.executableURL = URL(fileURLWithPath: builtProduct("vendd"))
            tool.arguments = ["reset-state", "--config", daemon.configPath, "--state-dir", daemon.stateDirectory]
            tool.standardOutput = FileHandle.nullDevice
            try tool.run()
            tool.waitUntilExit()
            #expect(tool.terminationStatus == 0)
            try daemon.start()
        }
        let status = try daemon.status()
        #expect(status.credit == "0")
        #expect(status.totalStock == 0)
        #expect(try daemon.stop() == 0)
    }

    /// A simulated device's memory cut short (as an older vendd's in-place write tore under
    /// `kill -9`) stops the start by name, with the machine's own state untouched; deleting the
    /// file, as the message says, starts the device afresh.
    @Test func aTornSimulatedDeviceMemoryIsRefusedByName() throws {
        // The sample machine: its MDB changer runs in-process and keeps its tubes.
        let daemon = try DaemonHarness(config: "config/vendd.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "A1", count: 4))
        #expect(try daemon.stop() == 0)
        let tubes = daemon.stateDirectory + "/simulated-changer-tubes.txt"
        try "20 20 1".write(toFile: tubes, atomically: false, encoding: .utf8)
        try expectRefusal(daemon, mentioning: "\(tubes): the memory of the simulated MDB changer cannot be read back")
        try FileManager.default.removeItem(atPath: tubes)
        try daemon.start()
        #expect(try daemon.status().slot("A1")?.stock == 4)
        #expect(try daemon.stop() == 0)
    }

    @Test func aCorruptSnapshotIsMovedAsideAndStartRefused() throws {
        let daemon = try stoppedMachine()
        defer { daemon.tearDown() }
        try damage(daemon.stateDirectory + "/state.json") { data in
            let index = data.count - 20
            data[index] = data[index] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
        }
        try expectRefusal(daemon, mentioning: "state.json")
        try expectMovedAsideAndRecoverable(daemon, by: .runFlag)
    }

    @Test func aTruncatedSnapshotIsMovedAsideAndStartRefused() throws {
        let daemon = try stoppedMachine()
        defer { daemon.tearDown() }
        try damage(daemon.stateDirectory + "/state.json") { data in data = data.prefix(data.count / 2) }
        try expectRefusal(daemon, mentioning: "cut short")
        try expectMovedAsideAndRecoverable(daemon, by: .subcommand)
    }

    @Test func aTornLastJournalRecordIsDroppedAndTheRestKept() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "A1", count: 4))
        try daemon.send(.sim(.coin(amount: "500")))
        daemon.signal(SIGKILL)  // no snapshot: the journal holds the inputs
        _ = try daemon.waitForExit()
        let journal = daemon.stateDirectory + "/journal.log"
        try damage(journal) { data in data.append(contentsOf: Array("9999 deadbeef {\"at\":17".utf8)) }
        try daemon.start()
        let status = try daemon.status()
        #expect(status.credit == "500")
        #expect(status.slot("A1")?.stock == 4)
        #expect(daemon.log.contains("dropped an incomplete last record"))
        #expect(try daemon.stop() == 0)
    }
}
