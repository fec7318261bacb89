import CcTalk
import Testing

/// The hopper headers' data layouts, as Part 2 §3.81–3.90 gives them.
@Suite struct HopperPayloadTests {
    @Test func hopperStatusIsFourBytesInTheSpecsOrder() throws {
        let status = try #require(HopperStatus([7, 2, 3, 0]))
        #expect(status == HopperStatus(eventCounter: 7, coinsRemaining: 2, lastPaid: 3, lastUnpaid: 0))
        #expect(status.isPaying)
        #expect(!status.wasReset)
        #expect(status.encoded == [7, 2, 3, 0])
        #expect(try #require(HopperStatus([0, 0, 0, 0])).wasReset)
        #expect(HopperStatus([7, 2, 3]) == nil)
        #expect(HopperStatus([7, 2, 3, 0, 1]) == nil)
    }

    @Test func testHopperRegistersNameTheirFlags() throws {
        let sch3 = try #require(HopperTest([0b1100_0000, 0b0000_0010, 0b0001_0001]))
        #expect(sch3.payoutDisabled)
        #expect(sch3.powerUpDetected)
        #expect(sch3.encryptionEnabled)
        #expect(sch3.powerDownDuringPayout)
        #expect(
            sch3.flags == [
                "power-up detected", "payout disabled", "single coin payout mode",
                "power-down during payout", "encryption enabled",
            ])
        // An SCH1 hopper has one register: the others read clear.
        let sch1 = try #require(HopperTest([0b0000_0100]))
        #expect(!sch1.encryptionEnabled)
        #expect(sch1.flags == ["motor reversed during last payout to clear a jam"])
        #expect(HopperTest([]) == nil)
        #expect(HopperTest([0, 0, 0, 0]) == nil)
    }

    @Test func enableAndDispenseData() {
        #expect(Payload.hopperEnable(true) == [165])
        #expect(Payload.hopperEnable(false) == [0])
        // Serial 12 345 678 = 0xBC614E: security bytes 78 97 188, then the count.
        #expect(Payload.dispense(3, serialNumber: 12_345_678) == [78, 97, 188, 3])
        #expect(Payload.dispense(0, serialNumber: 1) == nil)
        #expect(Payload.dispense(256, serialNumber: 1) == nil)
    }

    @Test func neitherADispenseNorAnEmergencyStopIsRepeatedBlindly() {
        #expect(!Header.dispenseHopperCoins.isIdempotent)
        #expect(!Header.emergencyStop.isIdempotent)
        #expect(Header.requestHopperStatus.isIdempotent)
        #expect(Header.enableHopper.isIdempotent)
    }

    /// Part 3's example frame for hopper status to address 3: `03 00 01 A6 56`.
    @Test func theSpecsHopperStatusRequestFrame() {
        let frame = Frame(destination: 3, source: 1, header: Header.requestHopperStatus.rawValue, data: [])
        #expect(frame.encoded(.simple8) == [0x03, 0x00, 0x01, 0xA6, 0x56])
    }

    /// Part 2 §3.39: bit 0 low triggered, bit 1 high triggered, bit 4 low fitted, bit 5 high
    /// fitted; a trigger bit of a sensor that is not fitted means nothing.
    @Test func levelStatusBitsAreTheSpecsLayout() throws {
        let low = try #require(HopperLevel([0b0001_0001]))
        #expect(low.hasLowSensor && low.isBelowLow)
        #expect(!low.hasHighSensor && !low.isAtOrAboveHigh)
        let full = try #require(HopperLevel([0b0011_0010]))
        #expect(full.hasLowSensor && !full.isBelowLow)
        #expect(full.hasHighSensor && full.isAtOrAboveHigh)
        let noSensors = try #require(HopperLevel([0b0000_0011]))
        #expect(!noSensors.hasLowSensor && !noSensors.isBelowLow && !noSensors.isAtOrAboveHigh)
        #expect(HopperLevel(lowSensor: true, belowLow: true, highSensor: true, atOrAboveHigh: false).encoded == [0b0011_0001])
        #expect(HopperLevel(lowSensor: false, belowLow: true, highSensor: false, atOrAboveHigh: true).encoded == [0])
        #expect(HopperLevel([]) == nil)
        #expect(HopperLevel([0x10, 0]) == nil)
        #expect(Header.requestPayoutHighLowStatus.rawValue == 217)
        #expect(Header.requestPayoutHighLowStatus.isIdempotent)
    }
}
