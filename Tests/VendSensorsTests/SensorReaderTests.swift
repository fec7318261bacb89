import Foundation
import Testing
import VendSensors
import VenddTestSupport
import VendingCore

/// Fake sysfs trees in a temporary directory, laid out as the kernel lays them out.
struct FakeSysfs {
    let directory: TemporaryDirectory
    var w1: String { directory.path + "/w1" }
    var hwmon: String { directory.path + "/hwmon" }

    init() throws {
        directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/w1", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.path + "/hwmon", withIntermediateDirectories: true)
    }

    func write(_ text: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: false, encoding: .utf8)
    }

    func slave(_ id: String, crc: String = "YES", t: String, scratchpad: String = "72 01 4b 46 7f ff 0e 10 57") throws {
        try write("\(scratchpad) : crc=57 \(crc)\n\(scratchpad) t=\(t)\n", to: "\(w1)/\(id)/w1_slave")
    }

    /// hwmonN with its `name`, a temperature input and (optionally) the `device` link.
    func chip(_ number: Int, name: String, millidegrees: String, device: String? = nil) throws {
        let directory = "\(hwmon)/hwmon\(number)"
        try write(name + "\n", to: "\(directory)/name")
        try write(millidegrees + "\n", to: "\(directory)/temp1_input")
        if let device {
            try FileManager.default.createDirectory(atPath: "\(self.directory.path)/devices/\(device)", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/device", withDestinationPath: "../../devices/\(device)")
        }
    }
}

@Suite struct W1ThermTests {
    @Test func aGoodReadIsTheTemperatureInMillidegrees() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.slave("28-000005e2fdc3", t: "3125")
        #expect(W1ThermSensor(name: "top", id: "28-000005e2fdc3", root: tree.w1).read() == .success(Temperature(millidegreesCelsius: 3_125)))
        try tree.slave("28-000005e2fdc3", t: "-1250")
        #expect(W1ThermSensor(name: "top", id: "28-000005e2fdc3", root: tree.w1).read() == .success(Temperature(millidegreesCelsius: -1_250)))
    }

    @Test func aFailedCRCIsAFault() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.slave("28-1", crc: "NO", t: "3125")
        #expect(W1ThermSensor(name: "top", id: "28-1", root: tree.w1).read() == .failure(.crcMismatch))
    }

    @Test func thePowerOnValueIsAFault() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.slave("28-1", t: "85000")
        #expect(W1ThermSensor(name: "top", id: "28-1", root: tree.w1).read() == .failure(.powerOnValue))
    }

    @Test func aMissingDeviceIsAFault() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        #expect(W1ThermSensor(name: "top", id: "28-gone", root: tree.w1).read() == .failure(.missing))
    }

    @Test(arguments: [
        "", "garbage", "72 01 : crc=57 YES\n72 01 t=abc\n", "72 01 : crc=57 MAYBE\n72 01 t=3000\n", "72 01 : crc=57 YES\n72 01 x=3000\n",
        "72 01 : crc=57 YES\n72 01 t=999999\n", "00 00 00 00 00 00 00 00 00 : crc=00 YES\n00 00 00 00 00 00 00 00 00 t=0\n",
    ])
    func garbageIsUnreadable(text: String) throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.write(text, to: "\(tree.w1)/28-1/w1_slave")
        let reading = W1ThermSensor(name: "top", id: "28-1", root: tree.w1).read()
        guard case .failure(.unreadable) = reading else {
            Issue.record("\(text.debugDescription) read as \(reading)")
            return
        }
    }

    @Test func theTemperatureAttributeServesWithoutW1Slave() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.write("4500\n", to: "\(tree.w1)/28-2/temperature")
        #expect(W1ThermSensor(name: "top", id: "28-2", root: tree.w1).read() == .success(Temperature(millidegreesCelsius: 4_500)))
        try tree.write("85000\n", to: "\(tree.w1)/28-2/temperature")
        #expect(W1ThermSensor(name: "top", id: "28-2", root: tree.w1).read() == .failure(.powerOnValue))
    }
}

@Suite struct HwmonTests {
    @Test func theChipIsFoundByNameWhateverItsNumber() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.chip(0, name: "cpu_thermal", millidegrees: "48000")
        try tree.chip(3, name: "lm75", millidegrees: "4250")
        #expect(HwmonSensor(name: "cabinet", chip: "lm75", root: tree.hwmon).read() == .success(Temperature(millidegreesCelsius: 4_250)))
    }

    @Test func theDeviceLinkTellsTwoChipsOfOneNameApart() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.chip(1, name: "lm75", millidegrees: "4000", device: "1-0048")
        try tree.chip(2, name: "lm75", millidegrees: "61000", device: "1-0049")
        #expect(HwmonSensor(name: "hot", chip: "lm75", device: "1-0049", root: tree.hwmon).read() == .success(.celsius(61)))
        #expect(HwmonSensor(name: "cold", chip: "lm75", device: "1-0048", root: tree.hwmon).read() == .success(.celsius(4)))
        #expect(HwmonSensor(name: "none", chip: "lm75", device: "1-004a", root: tree.hwmon).read() == .failure(.missing))
    }

    @Test func aMissingChipOrInputIsAFault() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.chip(0, name: "tmp102", millidegrees: "4000")
        #expect(HwmonSensor(name: "cabinet", chip: "lm75", root: tree.hwmon).read() == .failure(.missing))
        #expect(HwmonSensor(name: "cabinet", chip: "tmp102", input: "temp2_input", root: tree.hwmon).read() == .failure(.missing))
    }

    @Test func garbageIsUnreadable() throws {
        let tree = try FakeSysfs()
        defer { tree.directory.remove() }
        try tree.chip(0, name: "lm75", millidegrees: "hello")
        guard case .failure(.unreadable) = HwmonSensor(name: "cabinet", chip: "lm75", root: tree.hwmon).read() else {
            Issue.record("garbage read as a temperature")
            return
        }
    }
}
