import Foundation
import Testing
import VendingCore

@Suite struct PersistenceTests {
    /// A machine with something of everything in it.
    func busyMachine() throws -> Machine {
        var rig = Rig(setup: Fixtures.setup())
        try buy("A1", in: &rig, paying: [1_000, 500])
        rig.apply(.setPrice("B1", Fixtures.won(800)))
        rig.apply(.setServiceMode(true))
        rig.apply(.setServiceMode(false))
        rig.insert(1_000)
        rig.select("B1")  // left in flight
        return rig.machine
    }

    @Test func aSnapshotRestoresTheExactMachine() throws {
        let machine = try busyMachine()
        let restored = try JSON.roundTrip(MachineSnapshot(machine))
        #expect(restored.schemaVersion == MachineSnapshot.currentSchemaVersion)
        #expect(restored.machine == machine)
        #expect(restored.machine.integrityProblems.isEmpty)
    }

    @Test func theStateFileIsReadable() throws {
        let text = try JSON.text(MachineSnapshot(try busyMachine()))
        #expect(text.contains(#""credit":"500 KRW""#))
        #expect(text.contains(#""vendTimeoutMilliseconds":30000"#))
        #expect(text.contains(#""schemaVersion":1"#))
        #expect(text.contains(#""A1":"#))
    }

    @Test func aRestoredMachineReplaysInputsIdentically() throws {
        var original = try busyMachine()
        var restored = try JSON.roundTrip(MachineSnapshot(original)).machine
        let now = Fixtures.start.adding(days: 1)
        let inputs: [Input] = [
            .vendEnded(VendID(rawValue: 2), .dropped), .coinReturnPressed,
            .restock("A1", count: nil, loadedAt: nil),
        ]
        for input in inputs {
            #expect(original.apply(input, at: now) == restored.apply(input, at: now))
        }
        #expect(original == restored)
    }

    /// State written before bills and two-phase payouts existed (no such keys, `payoutAvailable`
    /// instead of a payout policy) still restores, with empty payout records.
    @Test func stateFromBeforePayoutsRestores() throws {
        let machine = try busyMachine()
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(MachineSnapshot(machine))) as? [String: Any])
        var state = try #require(object["machine"] as? [String: Any])
        for key in ["pendingPayout", "lastPayoutNumber", "payoutCounters", "changeInventory"] { state[key] = nil }
        var ledger = try #require(state["ledger"] as? [String: Any])
        for key in ["billsIn", "stacker", "changePaid", "unknownPayouts"] { ledger[key] = nil }
        var setup = try #require(state["setup"] as? [String: Any])
        #expect(setup["payoutPolicy"] as? String == "manual")
        setup["payoutPolicy"] = nil
        setup["payoutAvailable"] = true
        state["ledger"] = ledger
        state["setup"] = setup
        object["machine"] = state
        let old = try JSONSerialization.data(withJSONObject: object)
        let restored = try JSONDecoder().decode(MachineSnapshot.self, from: old).machine
        #expect(restored == machine)
        #expect(restored.setup.payoutPolicy == .manual)
    }

    @Test func tamperedBooksAreDetected() throws {
        let text = try JSON.text(MachineSnapshot(try busyMachine()))
        let tampered = text.replacingOccurrences(of: #""credit":"500 KRW""#, with: #""credit":"5000 KRW""#)
        #expect(tampered != text)
        let machine = try JSONDecoder().decode(MachineSnapshot.self, from: Data(tampered.utf8)).machine
        #expect(
            machine.integrityProblems.map(\.description) == [
                "coins in (2500 KRW) differ from sales + refunds + credit + held (7000 KRW)"
            ])
    }

    @Test func aNegativeLotOrStrayStockIsDetected() throws {
        let text = try JSON.text(MachineSnapshot(Rig().machine))
        let negative = text.replacingOccurrences(of: #"{"count":8,"#, with: #"{"count":-1,"#)
        #expect(negative != text)
        let machine = try JSONDecoder().decode(MachineSnapshot.self, from: Data(negative.utf8)).machine
        #expect(machine.integrityProblems.map(\.description) == ["slot A1 has a lot with no items"])
    }
}
