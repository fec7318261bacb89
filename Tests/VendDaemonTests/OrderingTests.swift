import Dispatch
import Synchronization
import Testing
import VendConfig
import VendHardware
import VendingCore

@testable import VendControl
@testable import VendDaemon
@testable import VendPOSIX

/// Effects are carried out in the order the core returns them, and a request is answered only
/// after its effects: the acceptor is always in the state of the last change, seen from outside.
@Suite(.timeLimit(.minutes(5))) struct OrderingTests {
    static let root = UnixSocket.PeerCredentials(pid: 1, uid: 0, gid: 0)

    @Test func aThousandAlternatingAcceptanceChangesEndInTheStateOfTheLast() async throws {
        let rig = try ControllerRig()
        rig.controller.sendAndWait(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))
        for change in 0..<1_000 {
            let serviceOn = change % 2 == 0
            let answer = CommandHandler.handle(ControlRequest(.service(on: serviceOn)), peer: Self.root, controller: rig.controller)
            guard answer.ok else {
                Issue.record("refused: \(answer)")
                break
            }
            // The answer is never seen before its effect.
            #expect(rig.world.coinAcceptor.isAccepting == !serviceOn, "after change \(change)")
        }
        #expect(rig.world.coinAcceptor.isAccepting)  // the last change (999) switched service off
        await rig.tearDown()
    }

    @Test func changesFromManyThreadsLeaveTheAcceptorAsTheMachineSays() async throws {
        let rig = try ControllerRig()
        rig.controller.sendAndWait(.restock(rig.config.slots[0].id, count: nil, loadedAt: nil))
        let controller = rig.controller
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for change in 0..<250 { _ = controller.requests.setServiceModeByTechnician((change + thread) % 2 == 0) }
        }
        #expect(rig.world.coinAcceptor.isAccepting == controller.acceptsCoins)
        await rig.tearDown()
    }

    /// The race a clean machine once showed: `restock` enables coins and the next request inserts
    /// one. Each round starts from an empty machine (coins inhibited); 20 coins stay under the
    /// sample machine's maximum credit.
    @Test func restockThenCoinIsAlwaysAccepted() async throws {
        let rig = try ControllerRig()
        let slot = rig.config.slots[0].id
        for round in 0..<20 {
            #expect(!rig.world.coinAcceptor.isAccepting)
            _ = CommandHandler.handle(ControlRequest(.restock(slot: slot.rawValue, count: 1)), peer: Self.root, controller: rig.controller)
            let coin = CommandHandler.handle(ControlRequest(.sim(.coin(amount: "500"))), peer: Self.root, controller: rig.controller)
            #expect(coin.ok, "round \(round): \(coin.message ?? "")")
            rig.controller.sendAndWait(.unload(slot, count: 1))
        }
        #expect(rig.controller.status().credit == "10000")
        await rig.tearDown()
    }
}

/// What a request learns is the lane's answer for its own input: the view as that input left it,
/// never one a later input has changed (as a view read after the answer may be).
@Suite(.timeLimit(.minutes(5))) struct InputOutcomeTests {
    @Test func theOutcomeIsTheInputsOwnWhateverComesAfter() async throws {
        let rig = try ControllerRig()
        let slot = rig.config.slots[0].id
        let controller = rig.controller
        let currency = rig.config.machine.currency
        let mine = Money(minorUnits: 500, currency: currency), other = Money(minorUnits: 700, currency: currency)
        for round in 0..<50 {
            controller.sendAndWait(.setPrice(slot, nil))
            let outcome = Mutex<InputOutcome?>(nil)
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                if thread == 0 {
                    let answer = controller.requests.request(.setPrice(slot, mine))
                    outcome.withLock { $0 = answer }
                } else {
                    controller.send(.setPrice(slot, other))
                }
            }
            let answer = try #require(outcome.withLock { $0 })
            #expect(answer.after.machine.price(of: slot) == mine, "round \(round)")
            #expect(answer.before.machine.price(of: slot) != mine, "round \(round)")
            #expect(answer.effects.events.contains { if case .priceChanged(_, _, mine) = $0 { true } else { false } })
        }
        await rig.tearDown()
    }
}
