import MDB
import MDBSocketSimulator
import SimulatedMDB
import Testing
import VendSettings
import VendingCore

@testable import VendDrivers
@testable import VendHardware

/// The MDB master and drivers against the simulated changer and bill validator, block by block,
/// on manual time.
@Suite struct MDBDriverTests {
    func won(_ amount: Int64) -> Money { MDBRig.won(amount) }

    @Test func bringUpFollowsTheSpecSequenceAfterTheSetupTime() throws {
        let rig = MDBRig()
        try rig.master.busReset()
        try rig.run(for: .milliseconds(190))
        #expect(rig.bus.transactions.isEmpty, "nothing within t-setup (200 ms) of a bus reset")
        try rig.run(for: .milliseconds(20))
        // §5.6 and §6.6: POLL (JUST RESET), SETUP, level-3 ID and FEATURE ENABLE, TUBE STATUS, COIN TYPE.
        #expect(rig.sent(to: .coinChanger).prefix(6) == ["0B", "09", "0F00", "0F01", "0A", "0C"])
        #expect(rig.sent(to: .billValidator).prefix(5) == ["33", "31", "3700", "36", "34"])
        #expect(rig.master.readyDevices == [.coinChanger, .billValidator])
        #expect(rig.changer.acceptMask == [0, 1, 2, 3])
        #expect(rig.changer.featuresEnabled == [.alternativePayout])
        #expect(rig.validator.acceptMask == [0, 1, 2, 3] && rig.validator.escrowMask == [0, 1, 2, 3])
        #expect(rig.log.notices.contains { $0.hasPrefix("coin changer: VSM SIM-CHANGER, serial 000000000808") })
        #expect(rig.log.notices.contains("coin changer (08h) ready"))
        #expect(rig.log.faults.isEmpty, "\(rig.log.faults)")
        // Polled at the interval afterwards, not faster.
        let polls = rig.changer.pollCount
        try rig.run(for: .seconds(1))
        #expect(rig.changer.pollCount - polls == 10)
    }

    @Test func depositedCoinsAreCreditedOnceNumberedOnFromTheLastStoredEvent() throws {
        let rig = MDBRig(lastCoin: 41)
        try rig.start()
        rig.changer.tubeCapacity = 1
        #expect(rig.changer.insert(type: 3) == .tubes)
        #expect(rig.changer.insert(type: 3) == .cashBox)
        rig.changer.insert(type: 1)
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.coins.map(\.value) == [won(500), won(500), won(50)])
        #expect(rig.log.coins.map(\.event.sequence) == [42, 43, 44])
        #expect(rig.log.coins.allSatisfy { $0.event.source == "mdb:test:changer" })
        try rig.run(for: .seconds(1))
        #expect(rig.log.coins.count == 3, "an activity is credited once")
    }

    @Test func acceptanceFollowsTheMachine() throws {
        let rig = MDBRig()
        try rig.start()
        rig.accepting = false
        try rig.run(for: .milliseconds(200))
        #expect(rig.changer.acceptMask.isEmpty && rig.validator.acceptMask.isEmpty)
        #expect(rig.changer.insert(type: 3) == .rejected)
        rig.validator.insert(type: 0)
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.coins.isEmpty && rig.log.bills.isEmpty)
        #expect(rig.log.notices.contains("bill validator: 1 bill(s) offered while the validator was disabled"))
        rig.accepting = true
        try rig.run(for: .milliseconds(200))
        #expect(rig.changer.acceptMask == [0, 1, 2, 3])
    }

    @Test func aTableValueTheChangerDisagreesWithIsRefusedLoudly() throws {
        var coins = MDBRig.coins
        coins[2] = MDBDenomination(type: 2, value: won(1000), enabled: true, origin: MDBRig.origin)
        let rig = MDBRig(coins: coins)
        try rig.start()
        #expect(rig.changer.acceptMask == [0, 1, 3])
        #expect(
            rig.log.faults.contains {
                $0.contains("coin type 2 is 1000 in the table but 100 in the coin changer's SETUP")
                    && $0.hasPrefix("coin changer: mdb (mdb-test.yaml:1:1)")
            })
    }

    // MARK: - Payout

    @Test func levelTwoPaysByDispenseAndReadsTheTubesBack() throws {
        let rig = MDBRig(changerLevel: 2)
        rig.changer.tubes[0...3] = [10, 10, 10, 2]
        try rig.start()
        rig.pay(1660)
        try rig.run(for: .seconds(3))
        let result = try #require(rig.results.first)
        #expect(result.paid == won(1660) && result.certain)
        #expect(result.coins == [won(500): 2, won(100): 6, won(50): 1, won(10): 1])
        #expect(rig.changer.coinsPaid.sorted() == [0, 1, 2, 2, 2, 2, 2, 2, 3, 3])
        #expect(rig.bus.count(0x0D) == 4, "one DISPENSE per coin type")
        #expect(rig.results.count == 1)
        // Coins were refused while paying and accepted again after.
        #expect(rig.changer.acceptMask == [0, 1, 2, 3])
        #expect(rig.log.inventories.last == [won(10): 9, won(50): 9, won(100): 4])
    }

    @Test func levelThreePaysByAlternativePayoutAndPayoutStatus() throws {
        let rig = MDBRig()
        rig.changer.tubes[0...3] = [10, 10, 10, 10]
        try rig.start()
        rig.pay(660)
        try rig.run(for: .seconds(2))
        let result = try #require(rig.results.first)
        #expect(result.paid == won(660) && result.certain)
        #expect(result.coins == [won(500): 1, won(100): 1, won(50): 1, won(10): 1])
        #expect(rig.bus.count(0x0F, sub: 0x02) == 1)
        #expect(rig.bus.transactions.contains(MDBBlock(0x0F, [0x02, 66])))
        #expect(rig.bus.count(0x0D) == 0)
    }

    @Test func moreThanOneAlternativePayoutCarriesIsPaidInChunks() throws {
        let rig = MDBRig()
        rig.changer.tubes[0...3] = [0, 0, 0, 20]
        try rig.start()
        rig.pay(5000)  // 500 scaled units: 255 + 245
        try rig.run(for: .seconds(3))
        let result = try #require(rig.results.first)
        #expect(result.paid == won(5000))
        #expect(rig.bus.count(0x0F, sub: 0x02) == 2, "asked 2550, the tubes made 2500; then the 2500 left")
    }

    @Test func whatTheTubesCannotPayIsReportedUnpaid() throws {
        let rig = MDBRig(changerLevel: 2)
        rig.changer.tubes[0...3] = [0, 1, 0, 0]
        try rig.start()
        rig.pay(500)
        try rig.run(for: .seconds(2))
        #expect(rig.results.first?.paid == won(50))
        // Tubes that run out are no fault of the changer: said, but not marked FAULT.
        #expect(rig.log.notices.contains("coin changer: paid 50원 of 500원 (1 × 50원)"))
        #expect(rig.log.faults.isEmpty, "\(rig.log.faults)")
    }

    @Test func tubesTooLowForAnAlternativePayoutAreNoFaultEither() throws {
        let rig = MDBRig()
        rig.changer.tubes[0...3] = [0, 1, 0, 0]
        try rig.start()
        rig.pay(500)
        try rig.run(for: .seconds(3))
        #expect(rig.results.map(\.paid) == [won(50)])
        #expect(rig.results.first?.certain == true)
        #expect(rig.log.faults.isEmpty, "\(rig.log.faults)")
    }

    @Test func payoutBusyIsWaitedOutAndNothingIsSentTwice() throws {
        let rig = MDBRig(changerLevel: 2)
        rig.changer.tubes[0...3] = [10, 10, 10, 10]
        rig.changer.faults.payoutBusyPolls = 8
        try rig.start()
        rig.pay(600)
        try rig.run(for: .seconds(4))
        #expect(rig.results.map(\.paid) == [won(600)])
        #expect(rig.bus.count(0x0D) == 2)
    }

    @Test func aTubeJamStopsThePayoutWithWhatLeftTheTubes() throws {
        let rig = MDBRig(changerLevel: 2)
        rig.changer.tubes[0...3] = [10, 10, 10, 10]
        rig.changer.faults.tubeJam = true
        try rig.start()
        rig.pay(1500)
        try rig.run(for: .seconds(3))
        // The jammed tube reads "full with 0": how many of the 3 coins left is unknown.
        #expect(rig.results.map(\.paid) == [won(0)])
        #expect(rig.results.map(\.unknown) == [won(1500)])
        #expect(rig.bus.count(0x0D) == 1, "no DISPENSE after a jam")
        #expect(rig.log.faults.contains("coin changer: tube jam during a payout"))
        #expect(rig.log.faults.contains("coin changer reports tube(s) [3] full with 0 coins: a jam or a bad tube sensor"))
    }

    @Test func anUnansweredDispenseIsNotRepeatedAndIsReadBackFromTheTubes() throws {
        let rig = MDBRig(changerLevel: 2)
        rig.changer.tubes[0...3] = [10, 10, 10, 10]
        rig.changer.faults.dropDispenseAck = true
        try rig.start()
        rig.pay(600)
        try rig.run(for: .seconds(3))
        #expect(rig.bus.count(0x0D) == 1)
        #expect(rig.results.map(\.paid) == [won(500)], "paid what left the tubes; the rest is not tried blind")
        #expect(rig.log.faults.contains { $0.hasPrefix("coin changer: the changer did not answer DISPENSE 1 × type 3; it was not repeated") })
    }

    @Test func aChangerResetMidPayoutEndsItWithTheTubeCount() throws {
        let rig = MDBRig(changerLevel: 2)
        rig.changer.tubes[0...3] = [10, 10, 10, 10]
        rig.changer.faults.payoutBusyPolls = 30
        try rig.start()
        rig.pay(600)
        try rig.run(for: .milliseconds(500))
        rig.changer.resetItself()
        try rig.run(for: .seconds(1))
        #expect(rig.results.count == 1)
        #expect(rig.results.first?.paid == won(500))
        #expect(rig.results.first?.certain == false)
        #expect(rig.bus.count(0x08) == 0, "an unsolicited JUST RESET is not answered with RESET (§A3)")
    }

    // MARK: - Offline and reset

    @Test func aSilentDeviceGoesOfflineAfterItsNonResponseTimeAndIsResetEveryTenSeconds() throws {
        let rig = MDBRig()
        try rig.start()
        rig.changer.faults.silent = true
        try rig.run(for: .milliseconds(1900))
        #expect(!rig.log.faults.contains { $0.hasPrefix("coin changer (08h) not answering") })
        try rig.run(for: .milliseconds(200))
        #expect(rig.log.faults.filter { $0.hasPrefix("coin changer (08h) not answering for 2") }.count == 1)
        #expect(rig.master.readyDevices == [.billValidator], "the other device is still served")
        try rig.run(for: .seconds(25))
        #expect(rig.bus.count(0x08) == 2, "RESET every 10 s while offline")
        #expect(rig.log.faults.filter { $0.hasPrefix("coin changer (08h) not answering") }.count == 1, "said once")
        rig.changer.faults.silent = false
        try rig.run(for: .seconds(11))
        #expect(rig.master.readyDevices == [.coinChanger, .billValidator])
        #expect(rig.log.notices.filter { $0 == "coin changer (08h) ready" }.count == 2)
        rig.changer.insert(type: 2)
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.coins.map(\.value) == [won(100)])
    }

    @Test func aDeviceThatResetsItselfIsInitialisedAgainWithoutReset() throws {
        let rig = MDBRig()
        try rig.start()
        rig.validator.resetItself()
        try rig.run(for: .milliseconds(300))
        #expect(rig.validator.acceptMask == [0, 1, 2, 3])
        #expect(rig.bus.count(0x30) == 0)
        #expect(rig.log.faults.contains("bill validator (30h) was reset (JUST RESET, or a RESET of its driver's): initialising it again"))
    }

    @Test func theInterfaceGoingAwayIsALinkFailure() throws {
        let rig = MDBRig()
        try rig.start()
        rig.transport.unplugged = true
        #expect(throws: MDBLinkFailure.self) { try rig.run(for: .milliseconds(200)) }
    }

    // MARK: - Bills

    @Test func anEscrowedBillIsStackedAndCreditedOnlyWhenTheMachineTakesIt() throws {
        let rig = MDBRig()
        try rig.start()
        rig.validator.insert(type: 1)
        try rig.run(for: .milliseconds(300))
        #expect(rig.validator.stacked == [1])
        #expect(rig.log.bills.map(\.0) == [won(5000)])
        #expect(rig.log.bills.map(\.1) == [CoinEventID(source: "mdb:test:bills", sequence: 1)])

        rig.stackAllowed = { _ in false }
        rig.validator.insert(type: 2)
        try rig.run(for: .milliseconds(300))
        #expect(rig.validator.returned == [2])
        #expect(rig.log.bills.count == 1, "a returned bill is never credited")
        #expect(rig.log.notices.contains("bill validator: bill of type 2 (10,000원) in escrow: returning it (the machine cannot take it now)"))
    }

    /// The interface is lost once ESCROW has reached the validator, before its answer, and is
    /// back with a bus reset: a bill stacked lost its STACKED report with the reset and was
    /// never credited, nor said to be; the stacker's one more bill now credits it, once. A bill
    /// returned is never credited.
    @Test(arguments: [true, false])
    func aLinkLostBeforeTheAnswerToEscrowCreditsAStackedBillOnce(stack: Bool) throws {
        let rig = MDBRig()
        try rig.start()
        rig.stackAllowed = { _ in stack }
        rig.transport.unplugAfterDelivering = { $0.addressByte == 0x35 }
        rig.validator.insert(type: 1)
        try Self.loseTheInterfaceAndComeBack(rig)
        #expect(rig.validator.stacked == (stack ? [1] : []) && rig.validator.returned == (stack ? [] : [1]))
        #expect(rig.log.bills.map(\.0) == (stack ? [won(5000)] : []), "\(rig.log.notices)")
    }

    /// The same with the POLL that carried STACKED lost instead: the bill was only said to be
    /// in doubt (not credited, count the cash box); the stacker now proves it stacked.
    @Test func aLinkLostWithTheStackedReportCreditsTheBillOnce() throws {
        let rig = MDBRig()
        try rig.start()
        var escrowSent = false
        rig.transport.unplugAfterDelivering = { block in
            if block.addressByte == 0x35 { escrowSent = true }
            return escrowSent && block.addressByte == 0x33
        }
        rig.validator.insert(type: 1)
        try Self.loseTheInterfaceAndComeBack(rig)
        #expect(rig.validator.stacked == [1])
        #expect(rig.log.bills.map(\.0) == [won(5000)], "\(rig.log.notices)")
    }

    /// Serves the bus until the link fails, then as MDBBus does: every device lost, the
    /// interface opened again with a bus reset, and served on.
    private static func loseTheInterfaceAndComeBack(_ rig: MDBRig) throws {
        #expect(throws: MDBLinkFailure.self) { try rig.run(for: .milliseconds(500)) }
        rig.master.interfaceLost()
        rig.transport.unplugged = false
        try rig.master.busReset()
        try rig.run(for: .seconds(1))
    }

    @Test func theMachineIsAskedWithTheBillsValue() throws {
        let rig = MDBRig()
        var asked: [Money] = []
        rig.stackAllowed = {
            asked.append($0)
            return $0 <= MDBRig.won(10000)
        }
        try rig.start()
        rig.validator.insert(type: 3)
        try rig.run(for: .milliseconds(300))
        rig.validator.insert(type: 0)
        try rig.run(for: .milliseconds(300))
        #expect(asked == [won(50000), won(1000)])
        #expect(rig.validator.stacked == [0] && rig.validator.returned == [3])
    }

    @Test func aBillJamIsAFaultAndNothingIsCredited() throws {
        let rig = MDBRig()
        try rig.start()
        rig.validator.faults.billJam = true
        rig.validator.insert(type: 1)
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.faults.contains("bill validator: validator jammed"))
        rig.validator.clearJam()
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.bills.isEmpty)
        #expect(rig.log.notices.contains("bill validator: bill of type 1 (5,000원) returned"))
    }

    @Test func aFullStackerRefusesBillsUntilEmptied() throws {
        let rig = MDBRig()
        try rig.start()
        rig.validator.stackerCapacity = 1
        rig.validator.insert(type: 0)
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.faults.contains("bill validator: bill stacker FULL (1 bills): bills refused until it is emptied"))
        #expect(rig.validator.acceptMask.isEmpty)
        rig.validator.emptyStacker()
        try rig.run(for: .milliseconds(300))
        #expect(rig.validator.acceptMask == [0, 1, 2, 3])
        #expect(rig.log.notices.contains("bill validator: bill stacker emptied"))
    }

    @Test func aRemovedCashBoxIsAFault() throws {
        let rig = MDBRig()
        try rig.start()
        rig.validator.removeCashBox()
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.faults.contains("bill validator: cash box out of position (open or removed)"))
    }
}

extension MDBDriverTests {
    @Test func billsMarkedHighSecurityAreSentWithSecurityAfterSetup() throws {
        let bills = MDBRig.bills.map {
            MDBDenomination(type: $0.type, value: $0.value, enabled: true, highSecurity: $0.type == 2 || $0.type == 3, origin: MDBRig.origin)
        }
        let rig = MDBRig(bills: bills)
        try rig.start()
        #expect(rig.sent(to: .billValidator).prefix(3) == ["33", "31", "32"])
        #expect(rig.validator.highSecurity == [2, 3])
        #expect(rig.log.notices.contains { $0.contains("high security for types 2 3") })
        // Sent again after the validator resets itself (its settings are gone).
        rig.validator.resetItself()
        try rig.run(for: .milliseconds(300))
        #expect(rig.validator.highSecurity == [2, 3])
    }

    @Test func withNoBillMarkedSecurityIsNotSent() throws {
        let rig = MDBRig()
        try rig.start()
        #expect(rig.bus.count(0x32) == 0)
        #expect(rig.validator.highSecurity == nil)
    }
}

extension MDBDriverTests {
    /// POLL's deposit and manual-dispense reports carry the tube's new count (§5.3): the levels
    /// `vendctl status` shows follow them without another TUBE STATUS.
    @Test func theTubeLevelsFollowDepositsAndManualDispenses() throws {
        let rig = MDBRig()
        rig.changer.tubes[0...3] = [5, 5, 5, 5]
        try rig.start()
        let tubeReads = rig.bus.count(0x0A)
        rig.changer.insert(type: 3)
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.inventories.last == [won(10): 5, won(50): 5, won(100): 5, won(500): 6])
        rig.changer.manualDispense(type: 1, count: 2)
        try rig.run(for: .milliseconds(300))
        #expect(rig.log.inventories.last == [won(10): 5, won(50): 3, won(100): 5, won(500): 6])
        #expect(rig.bus.count(0x0A) == tubeReads)
    }
}
