import MDB
import Testing

@Suite struct ChangerCodecTests {
    /// The constructed KRW exchange of reference §5.3: 10/50/100/500 won, scaling 10.
    static let setup: [UInt8] = [0x03, 0x14, 0x10, 0x0A, 0x00, 0x00, 0x0F, 0x01, 0x05, 0x0A, 0x32] + [UInt8](repeating: 0, count: 12)

    @Test func setupGivesCurrencyScalingRoutingAndCoinValues() throws {
        let setup = try ChangerSetup(Self.setup)
        #expect(setup.level == 3)
        #expect(setup.currency.iso4217Numeric == 410)
        #expect(setup.scalingFactor == 10 && setup.decimalPlaces == 0)
        #expect(setup.routableToTubes == [0, 1, 2, 3])
        #expect((0..<5).map(setup.value(ofType:)) == [10, 50, 100, 500, nil])
        #expect(setup.bytes == Self.setup)
    }

    @Test func setupCutShortCountsMissingTypesAsUnusedAndTokensHaveNoValue() throws {
        let setup = try ChangerSetup([0x02, 0x00, 0x01, 0x05, 0x02, 0x00, 0x03, 0x05, 0xFF])
        #expect(setup.currency.iso4217Numeric == nil)
        #expect(setup.currency.description == "country code 0001")
        #expect(setup.value(ofType: 0) == 25)
        #expect(setup.value(ofType: 1) == nil, "a vend token")
        #expect(setup.value(ofType: 15) == nil)
    }

    @Test func badSetupAnswersAreRefused() {
        #expect(throws: MDBDecodeError.self) { try ChangerSetup([0x03, 0x14]) }
        #expect(throws: MDBDecodeError.self) { try ChangerSetup([0x01] + Array(Self.setup.dropFirst())) }
        #expect(throws: MDBDecodeError.self) { try ChangerSetup([0x03, 0x14, 0x10, 0x00, 0x00, 0x00, 0x0F]) }
    }

    @Test func tubeStatusCountsAndAJammedTubeIsFullWithZero() throws {
        let status = try TubeStatus([0x00, 0x04, 0x32, 0x28, 0x00, 0x1E])
        #expect(status.counts.prefix(5) == [50, 40, 0, 30, 0])
        #expect(status.full == [2])
        #expect(status.suspectTubes == [2])
        #expect(status.bytes.count == 18)
    }

    @Test func pollActivitiesParseInOrder() throws {
        // 500 won (type 3) to the tubes, 31 now; 100 won to the cash box; 2 slugs; payout busy;
        // manual dispense of 3 × type 1 leaving 12; JUST RESET; an undefined status.
        let answer: [UInt8] = [0x53, 0x1F, 0x42, 0x00, 0x22, 0x02, 0xB1, 0x0C, 0x0B, 0x0E]
        #expect(
            try ChangerActivity.parse(answer) == [
                .deposited(type: 3, routing: .tubes, tubeCount: 31),
                .deposited(type: 2, routing: .cashBox, tubeCount: 0),
                .slugs(2),
                .status(.payoutBusy),
                .manuallyDispensed(type: 1, count: 3, tubeCount: 12),
                .status(.justReset),
                .unknown(0x0E),
            ])
        #expect(try ChangerActivity.parse([0x73, 0x05]) == [.deposited(type: 3, routing: .rejected, tubeCount: 5)])
        #expect(throws: MDBDecodeError.self) { try ChangerActivity.parse([0x0B, 0x53]) }
    }

    @Test func everyStatusCodeHasAName() {
        #expect(ChangerStatus.allCases.map(\.rawValue) == Array(0x01...0x0D))
        #expect(Set(ChangerStatus.allCases.map(\.name)).count == 13)
        #expect(ChangerStatus.tubeJam.isFault && !ChangerStatus.payoutBusy.isFault)
    }

    @Test func levelThreeCommands() {
        #expect(ChangerCommand.identification.block.wireBytes == [0x0F, 0x00, 0x0F])
        #expect(ChangerCommand.featureEnable([.alternativePayout]).block.data == [0x01, 0x00, 0x00, 0x00, 0x01])
        #expect(ChangerCommand.alternativePayout(scaledValue: 0x32).block.data == [0x02, 0x32])
        #expect(ChangerCommand.payoutStatus.block.data == [0x03])
        #expect(ChangerCommand.payoutValuePoll.block.data == [0x04])
        #expect(ChangerCommand.dispense(type: 3, count: 15).block.data == [0xF3])
    }

    @Test func identificationRoundTripsWithFeatureBits() throws {
        let id = PeripheralIdentification(
            manufacturer: "VND", serialNumber: "000000001234", model: "SIM-CHANGER", softwareVersion: 0x0102, features: 0x0000_0003)
        let bytes = id.bytes(withFeatures: true)
        #expect(bytes.count == 33)
        let back = try PeripheralIdentification(bytes, withFeatures: true)
        #expect(back == id)
        #expect(ChangerFeatures(rawValue: back.features).contains(.alternativePayout))
        #expect(back.summary == "VND SIM-CHANGER, serial 000000001234, software 1.2")
        #expect(throws: MDBDecodeError.self) { try PeripheralIdentification(Array(bytes.prefix(30)), withFeatures: true) }
    }

    @Test func payoutStatusIsCoinsPerTypeFromTypeZero() throws {
        let status = try PayoutStatus([0x00, 0x02, 0x01])
        #expect(status.coinsPaid.prefix(4) == [0, 2, 1, 0])
        #expect(throws: MDBDecodeError.self) { try PayoutStatus([]) }
    }
}

@Suite struct BillCodecTests {
    /// KRW, scaling 1000: 1,000 / 5,000 / 10,000 / 50,000 won (reference §7).
    static let setup: [UInt8] =
        [0x01, 0x14, 0x10, 0x03, 0xE8, 0x00, 0x01, 0x90, 0xFF, 0xFF, 0xFF, 0x01, 0x05, 0x0A, 0x32] + [UInt8](repeating: 0, count: 12)

    @Test func setupGivesValuesCapacityAndEscrow() throws {
        let setup = try BillSetup(Self.setup)
        #expect(setup.currency.iso4217Numeric == 410)
        #expect(setup.scalingFactor == 1000 && setup.stackerCapacity == 400)
        #expect(setup.escrowCapable)
        #expect(setup.highSecurityTypes.count == 16)
        #expect((0..<5).map(setup.value(ofType:)) == [1000, 5000, 10000, 50000, nil])
        #expect(setup.bytes == Self.setup)
        #expect(throws: MDBDecodeError.self) { try BillSetup(Array(Self.setup.prefix(5))) }
    }

    @Test func commands() {
        #expect(BillCommand.setup.block.wireBytes == [0x31, 0x31])
        #expect(BillCommand.security(highSecurity: [0, 1]).block.data == [0x00, 0x03])
        #expect(BillCommand.poll.block.wireBytes == [0x33, 0x33])
        #expect(BillCommand.billType(accept: [0, 1, 2, 3], escrow: [0, 1, 2, 3]).block.wireBytes == [0x34, 0x00, 0x0F, 0x00, 0x0F, 0x52])
        #expect(BillCommand.escrow(stack: false).block.wireBytes == [0x35, 0x00, 0x35])
        #expect(BillCommand.stacker.block.wireBytes == [0x36, 0x36])
        #expect(BillCommand.identification.block.data == [0x00])
    }

    @Test func pollActivitiesAndEveryStatusByName() {
        #expect(
            BillActivity.parse([0x91, 0x81, 0xA2, 0xC0, 0x06, 0x09, 0x43, 0x25]) == [
                .bill(type: 1, routing: .escrowPosition),
                .bill(type: 1, routing: .stacked),
                .bill(type: 2, routing: .returned),
                .bill(type: 0, routing: .disabledBillRejected),
                .status(.justReset),
                .status(.validatorDisabled),
                .insertedWhileDisabled(3),
                .unknown(0x25),
            ])
        #expect(BillStatus.allCases.map(\.rawValue) == Array(0x01...0x0C))
        #expect(Set(BillStatus.allCases.map(\.name)).count == 12)
        #expect(BillActivity.bill(type: 1, routing: .stacked).byte == 0x81)
    }

    @Test func stackerFullFlagAndCount() throws {
        #expect(try StackerStatus([0x81, 0x90]) == StackerStatus(full: true, bills: 400))
        #expect(try StackerStatus([0x00, 0x05]).bytes == [0x00, 0x05])
        #expect(throws: MDBDecodeError.self) { try StackerStatus([0x00]) }
    }
}
