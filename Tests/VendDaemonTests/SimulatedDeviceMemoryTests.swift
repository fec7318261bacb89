import Foundation
import Testing
import VendConfig
import VendHardware
import VendTime
import VenddTestSupport

@testable import VendDaemon

/// What a simulated device keeps across restarts is one line, replaced whole and durably. A file
/// that does not read back (cut short, garbled) stops `vendd --simulate` with an error naming the
/// file, never a fresh device that would hide what the last one paid or where a cam stood.
@Suite(.timeLimit(.minutes(5))) struct SimulatedDeviceMemoryTests {
    @Test func aKeptMemoryReadsBackAndNoneIsNil() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let memory = SimulatedDeviceMemory(path: directory.path + "/memory.txt", device: "test device")
        #expect(try memory.recall { $0 } == nil)
        memory.keep(["7", "58", "2", "0"])
        #expect(try String(contentsOfFile: memory.path, encoding: .utf8) == "7 58 2 0\n")
        #expect(try memory.recall { $0.map(String.init) } == ["7", "58", "2", "0"])
        memory.keep([])
        #expect(try memory.recall { $0 } == [])
        try "".write(toFile: memory.path, atomically: false, encoding: .utf8)
        #expect(try memory.recall { $0 } == [], "an empty file holds no fields")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["memory.txt"], "no temporary file left")
    }

    @Test(
        arguments: [
            ("config/examples/change-won.yaml", "simulated-hopper-3.txt", "simulated hopper at address 3", "3 57 2"),
            ("config/examples/change-won.yaml", "simulated-hopper-4.txt", "simulated hopper at address 4", "3 fifty 2 0\n"),
            ("config/vendd.yaml", "simulated-changer-tubes.txt", "simulated MDB changer", "20 20 -1 20\n"),
            ("config/vendd.yaml", "simulated-changer-tubes.txt", "simulated MDB changer", "20 2"),
            ("config/examples/spiral-matrix.yaml", "simulated-cams.txt", "simulated spiral motors", "D7"),
        ])
    func aTornOrGarbledMemoryStopsStartNamingItsFile(config file: String, memory name: String, device: String, text: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/" + name
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent(file).path)
        let time = ManualTimekeeper()
        let error = #expect(throws: HardwareError.self) {
            try Hardware.simulated(config, stateDirectory: directory.path, timekeeper: time, relayTimers: time, notify: { _ in })
        }
        let quoted = String(text.prefix(40)).debugDescription
        #expect(
            error?.description
                == "\(path): the memory of the \(device) cannot be read back (\(quoted) is not one); delete the file to start the simulated device afresh"
        )
    }
}
