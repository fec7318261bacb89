import Testing
import VendConfig
import VendHardware
import VendPOSIX
import VendSettings
import VendTime
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// `vendd run --simulate --line-log`: every level change of the simulated lines, inputs and
/// outputs, in the order it happened, stamped with CLOCK_MONOTONIC as it happened.
@Suite struct LineChangeLogTests {
    @Test func recordsEachChangeOfButtonAndRelayInOrderWithMonotonicStamps() throws {
        let path = "/tmp/vendd-line-log-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        defer { unlink(path) }
        let config = try HardwareFixtures.config()
        let time = ManualTimekeeper()
        let log = try LineChangeLog(path: path)
        let world = try SimulatedWorld(
            slots: config.slots, buttons: config.buttons, coinChannels: [], timekeeper: time, defaultChip: "sim", lineLog: log)
        let dispenser = try Dispenser(chip: world.chip, slots: config.slots, timekeeper: time, notify: { _ in })
        let before = MonotonicClock.nanoseconds

        try world.press("A2")  // the button (line 2) for 120 ms
        #expect(dispenser.start("A2", completion: { _ in }) == nil)  // the relay (line 11) for 50 ms
        time.advance(by: .milliseconds(50))
        try world.set(.serviceMode, active: false)  // no change: nothing recorded
        time.advance(by: .milliseconds(70))
        log.close()

        let after = MonotonicClock.nanoseconds
        let lines = try TextFile.read(path).split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1) }
        #expect(lines.map { String($0[1]) } == ["sim 2 in 1", "sim 11 out 1", "sim 11 out 0", "sim 2 in 0"])
        let stamps = lines.compactMap { UInt64($0[0]) }
        #expect(stamps.count == 4)
        #expect(stamps == stamps.sorted())
        #expect(stamps.allSatisfy { (before...after).contains($0) })
    }

    @Test func anUnopenableFileIsRefusedWithItsPath() {
        #expect(throws: SystemError(call: "open", path: "/nonexistent/lines.txt", errno: ENOENT)) {
            try LineChangeLog(path: "/nonexistent/lines.txt")
        }
    }
}
