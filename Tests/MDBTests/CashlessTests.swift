import MDB
import MDBSocketSimulator
import SimulatedMDB
import Testing

/// The cashless device's commands and answers against the byte layouts of MDB 4.2 §7 and the
/// traces of real readers (shared/reference/cashless-dex-health-motors-research.md §1).
@Suite struct CashlessCodecTests {
    @Test func commandsAreAddressedToReaderOneOrTwo() {
        #expect(CashlessCommand.poll.block(for: .cashless1).addressByte == 0x12)
        #expect(CashlessCommand.poll.block(for: .cashless2).addressByte == 0x62)
        #expect(CashlessCommand.readerEnable.block(for: .cashless1).description == "14 01")
        #expect(CashlessCommand.setupConfig(vmcLevel: 3).block(for: .cashless1).description == "11 0003000000")
        #expect(CashlessCommand.setupPrices(maximum: 0xFFFF, minimum: 0, currency: nil).block(for: .cashless1).description == "11 01FFFF0000")
        #expect(
            CashlessCommand.setupPrices(maximum: 0xFFFF_FFFF, minimum: 0, currency: MDBCurrencyCode(raw: 0x1978)).block(for: .cashless1).description
                == "11 01FFFFFFFF000000001978")
        // 1.50 at scale 5, 2 decimals = 30 units; item 4.
        #expect(CashlessCommand.vendRequest(price: 30, item: 4, expanded: false).block(for: .cashless1).description == "13 00001E0004")
        #expect(CashlessCommand.vendRequest(price: 30, item: 4, expanded: true).block(for: .cashless2).description == "63 000000001E0004")
        #expect(CashlessCommand.vendCancel.block(for: .cashless1).description == "13 01")
        #expect(CashlessCommand.vendSuccess(item: 4).block(for: .cashless1).description == "13 020004")
        #expect(CashlessCommand.vendFailure.block(for: .cashless1).description == "13 03")
        #expect(CashlessCommand.sessionComplete.block(for: .cashless1).description == "13 04")
        #expect(CashlessCommand.cashSale(price: 30, item: 4, currency: nil).block(for: .cashless1).description == "13 05001E0004")
        #expect(CashlessCommand.readerCancel.block(for: .cashless1).description == "14 02")
        #expect(CashlessCommand.revalueLimitRequest.block(for: .cashless1).description == "15 01")
        // SENVEND's VMC enables "always idle" alone (senvend/mdb).
        #expect(CashlessCommand.featureEnable(.alwaysIdle).block(for: .cashless1).description == "17 0400000020")
        let id = CashlessCommand.requestID(manufacturer: "VND", serialNumber: "000000000001", model: "vendd", softwareVersion: 0x0100)
            .block(for: .cashless1)
        #expect(id.data.count == 30 && id.data.first == 0x00 && Array(id.data[1...3]) == Array("VND".utf8))
    }

    /// A Castles UX700 (SENVEND): level 3, EUR (ISO 1978), scale 5, 2 decimals, 200 s to answer,
    /// it refunds and wants CASH SALE.
    @Test func aRealReadersConfigDataReads() throws {
        let responses = try CashlessResponse.parse([0x01, 0x03, 0x19, 0x78, 0x05, 0x02, 0xC8, 0x09], level: 1, expanded: false)
        let config = ReaderConfig(
            level: 3, currency: MDBCurrencyCode(raw: 0x1978), scaleFactor: 5, decimalPlaces: 2, maximumResponseTime: 200,
            options: [.canRefund, .cashSale])
        #expect(responses == [.readerConfig(config)])
        #expect(CashlessResponse.readerConfig(config).bytes(level: 3, expanded: false) == [0x01, 0x03, 0x19, 0x78, 0x05, 0x02, 0xC8, 0x09])
    }

    /// One block, several answers, served in order (§7.4's own example).
    @Test func aMultiMessageAnswerSplitsByEachResponsesLength() throws {
        #expect(
            try CashlessResponse.parse([0x06, 0x0A, 0x07, 0x04], level: 2, expanded: false)
                == [.vendDenied, .malfunction(code: 0x07), .sessionCancelRequest])
    }

    @Test func beginSessionAndVendApprovedFollowTheLevelAndTheMoneyWidth() throws {
        #expect(try CashlessResponse.parse([0x03, 0x00, 0x64], level: 1, expanded: false) == [.beginSession(BeginSession(funds: 100))])
        #expect(try CashlessResponse.parse([0x03, 0xFF, 0xFF], level: 1, expanded: false) == [.beginSession(BeginSession(funds: nil))])
        let level2 = [0x03, 0x00, 0x64, 0x12, 0x34, 0x56, 0x78, 0x80, 0x00, 0x01] as [UInt8]
        let session = BeginSession(funds: 100, mediaID: 0x1234_5678, paymentType: 0x80, paymentData: 1)
        #expect(try CashlessResponse.parse(level2, level: 2, expanded: false) == [.beginSession(session)])
        #expect(session.isFreeVend && !session.isTestMedia)
        #expect(CashlessResponse.beginSession(session).bytes(level: 2, expanded: false) == level2)
        let expanded = CashlessResponse.beginSession(session).bytes(level: 3, expanded: true)
        #expect(expanded.count == 17)
        #expect(try CashlessResponse.parse(expanded, level: 3, expanded: true) == [.beginSession(session)])
        #expect(try CashlessResponse.parse([0x05, 0x00, 0x1E], level: 3, expanded: false) == [.vendApproved(amount: 30)])
        #expect(try CashlessResponse.parse([0x05, 0x00, 0x00, 0x00, 0x1E], level: 3, expanded: true) == [.vendApproved(amount: 30)])
        #expect(try CashlessResponse.parse([0x05, 0xFF, 0xFF], level: 3, expanded: false) == [.vendApproved(amount: nil)], "a token")
    }

    @Test func outOfSequenceCarriesTheReadersStateFromLevelTwo() throws {
        #expect(try CashlessResponse.parse([0x0B], level: 1, expanded: false) == [.commandOutOfSequence(readerState: nil)])
        #expect(try CashlessResponse.parse([0x0B, 0x03], level: 2, expanded: false) == [.commandOutOfSequence(readerState: 3)])
    }

    @Test func peripheralIDHasFeatureBitsOnlyForALevelThreeReaderAndVMC() throws {
        let identity = PeripheralIdentification(
            manufacturer: "NYX", serialNumber: "123456789012", model: "VPOS TOUCH", softwareVersion: 0x0203,
            features: CashlessFeatures.alwaysIdle.rawValue)
        let bytes = CashlessResponse.peripheralID(identity).bytes(level: 3, expanded: false)
        #expect(bytes.count == 34)
        #expect(try CashlessResponse.parse(bytes, level: 3, expanded: false) == [.peripheralID(identity)])
        let level2 = CashlessResponse.peripheralID(identity).bytes(level: 2, expanded: false)
        #expect(level2.count == 30)
        let read = try CashlessResponse.parse(level2, level: 2, expanded: false)
        #expect(
            read == [
                .peripheralID(
                    PeripheralIdentification(
                        manufacturer: "NYX", serialNumber: "123456789012", model: "VPOS TOUCH",
                        softwareVersion: 0x0203, features: 0))
            ])
    }

    @Test func garbledAnswersAreRefusedWithWhatIsWrong() {
        #expect(throws: MDBDecodeError.self) { try CashlessResponse.parse([0x05, 0x00], level: 3, expanded: false) }
        #expect(throws: MDBDecodeError.self) { try CashlessResponse.parse([0x1B, 0x00], level: 3, expanded: false) }
        #expect(throws: MDBDecodeError.self) {
            try CashlessResponse.parse([0x01, 0x04, 0x19, 0x78, 0x05, 0x02, 0xC8, 0x09], level: 1, expanded: false)
        }
        #expect(throws: MDBDecodeError.self) {
            try CashlessResponse.parse([0x01, 0x03, 0x19, 0x78, 0x00, 0x02, 0xC8, 0x09], level: 1, expanded: false)
        }
        #expect(throws: MDBDecodeError.self) { try CashlessResponse.parse([0x09, 0x41], level: 3, expanded: false) }
    }

    /// Found by fuzz-mdb: a part's error (here READER CONFIG DATA's level) names the whole block.
    @Test func anErrorInsideOneResponseNamesTheWholeBlock() {
        let block: [UInt8] = [0x01, 0x10, 0x00, 0x00, 0x00, 0xF2, 0x00, 0x30, 0x30, 0x0E, 0x0A]
        #expect(throws: MDBDecodeError("READER CONFIG DATA reports level 16, not 1-3", block)) {
            try CashlessResponse.parse(block, level: 1, expanded: false)
        }
    }

    @Test func malfunctionCodesSayWhatTheyMean() {
        #expect(CashlessMalfunction.describe(0xC0).hasPrefix("refund error"))
        #expect(CashlessMalfunction.isDisabling(0x81))
        #expect(!CashlessMalfunction.isDisabling(0x10))
    }
}

/// The simulated reader against the spec's sequences (§7.5 examples), driven block by block as a
/// VMC would: it is what the cashless driver will be tested against.
@Suite struct SimulatedCashlessReaderTests {
    let reader = SimulatedCashlessReader(level: 3, maximumResponseTime: 200)

    func send(_ command: CashlessCommand) -> MDBAnswer { reader.respond(to: command.block(for: .cashless1)) }

    func poll() throws -> [CashlessResponse] {
        guard case .data(let bytes) = send(.poll) else { return [] }
        return try CashlessResponse.parse(bytes, level: 3, expanded: reader.enabledFeatures.contains(.money32))
    }

    /// RESET → JUST RESET → SETUP → config → max/min → REQUEST ID → PERIPHERAL ID → features → ENABLE.
    func initialise() throws {
        #expect(try poll() == [.justReset])
        guard case .data(let config) = send(.setupConfig(vmcLevel: 3)) else {
            Issue.record("no READER CONFIG DATA")
            return
        }
        #expect(try CashlessResponse.parse(config, level: 1, expanded: false) == [.readerConfig(reader.config)])
        #expect(send(.setupPrices(maximum: 0xFFFF, minimum: 0, currency: nil)) == .ack)
        guard case .data(let id) = send(.requestID(manufacturer: "VND", serialNumber: "1", model: "vendd", softwareVersion: 0x0100)),
            case .peripheralID(let identity)? = try CashlessResponse.parse(id, level: 3, expanded: false).first
        else {
            Issue.record("no PERIPHERAL ID")
            return
        }
        #expect(CashlessFeatures(rawValue: identity.features).contains(.alwaysIdle))
        #expect(send(.featureEnable(.alwaysIdle)) == .ack)
        #expect(send(.readerEnable) == .ack)
        #expect(reader.state == .enabled)
    }

    /// Found by the power cuts: a card's funds outlived the session a reset ended, and the
    /// next customer's selection (always idle, no card yet) was denied for want of them.
    @Test func aResetEndsTheSessionAndForgetsTheCardsFunds() throws {
        try initialise()
        reader.presentCard(funds: 100)
        #expect(try poll().count == 1, "BEGIN SESSION")
        #expect(send(.vendRequest(price: 100, item: 1, expanded: false)) == .ack)
        #expect(try poll() == [.vendApproved(amount: 100)])
        #expect(send(.vendSuccess(item: 1)) == .ack)
        // The power goes before SESSION COMPLETE: the master resets the reader at its next start.
        #expect(send(.reset) == .ack)
        try initialise()
        #expect(send(.vendRequest(price: 150, item: 4, expanded: false)) == .ack)
        #expect(try poll() == [.vendApproved(amount: 150)], "a new customer, selection first: not the last card's funds")
        #expect(reader.charged == [100, 150])
    }

    @Test func selectionFirstAnOnlineApprovalThenSuccess() throws {
        try initialise()
        reader.faults.approvalPolls = 3
        #expect(send(.vendRequest(price: 150, item: 4, expanded: false)) == .ack)
        for _ in 0..<3 { #expect(try poll().isEmpty) }
        #expect(try poll() == [.vendApproved(amount: 150)])
        #expect(send(.vendSuccess(item: 4)) == .ack)
        #expect(reader.charged == [150] && reader.refunded.isEmpty)
        // Always idle: the vend ends in Session Idle; the VMC closes it (MDB 4.2 §7.4.4, examples #11, #13).
        #expect(reader.state == .sessionIdle)
        #expect(send(.sessionComplete) == .ack)
        #expect(try poll() == [.endSession])
        #expect(reader.state == .enabled)
    }

    @Test func cardFirstAFailedVendIsRefundedAndTheSessionEnds() throws {
        try initialise()
        reader.presentCard(funds: 1_000)
        guard case .beginSession(let session)? = try poll().first else {
            Issue.record("no BEGIN SESSION")
            return
        }
        #expect(session.funds == 1_000)
        #expect(send(.vendRequest(price: 150, item: 4, expanded: false)) == .ack)
        #expect(try poll() == [.vendApproved(amount: 150)])
        #expect(send(.vendFailure) == .ack)
        #expect(try poll().isEmpty, "refund done: ACK")
        #expect(reader.refunded == [150])
        #expect(send(.sessionComplete) == .ack)
        #expect(try poll() == [.endSession])
    }

    @Test func aCommandOutOfSequenceIsAckedIgnoredAndReported() throws {
        try initialise()
        #expect(send(.sessionComplete) == .ack)
        #expect(try poll() == [.commandOutOfSequence(readerState: SimulatedCashlessReader.State.enabled.rawValue)])
    }

    @Test func aResetBetweenApprovedAndSuccessIsASale() throws {
        try initialise()
        #expect(send(.vendRequest(price: 150, item: 4, expanded: false)) == .ack)
        #expect(try poll() == [.vendApproved(amount: 150)])
        reader.resetItself()
        #expect(try poll() == [.justReset])
        #expect(reader.charged == [150] && reader.refunded.isEmpty, "the reader settles it as a sale")
    }
}
