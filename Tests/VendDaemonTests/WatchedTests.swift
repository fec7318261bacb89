import Dispatch
import Foundation
import Testing
import VendPOSIX

/// `Watched`: what the simulated devices' answers wait on instead of polling.
@Suite(.timeLimit(.minutes(5)))
struct WatchedTests {
    @Test func aWaiterIsWokenByTheChangeThatSatisfiesItNotByTheDeadline() {
        let counter = Watched(0)
        let started = ContinuousClock.now
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            for _ in 1...3 { counter.withValue { $0 += 1 } }
        }
        #expect(counter.wait(until: { $0 == 3 }, deadline: started + .seconds(30)))
        // Woken by the third change, long before the deadline.
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func aConditionAlreadyTrueReturnsAtOnceAndOneNeverMetReturnsFalseAtTheDeadline() {
        let value = Watched("ready")
        #expect(value.wait(until: { $0 == "ready" }, deadline: .now))
        let started = ContinuousClock.now
        #expect(!value.wait(until: { $0 == "never" }, deadline: started + .milliseconds(100)))
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }

    @Test func manyWaitersOnDifferentConditionsEachReturnWhenTheirsHolds() {
        let counter = Watched(0)
        let met = Watched(0)
        // Threads of their own: each blocks in `wait`, as the control socket's thread does.
        for target in 1...8 {
            Thread.detachNewThread {
                if counter.wait(until: { $0 >= target }, deadline: .now + .seconds(30)) { met.withValue { $0 += 1 } }
            }
        }
        for _ in 1...8 { counter.withValue { $0 += 1 } }
        #expect(met.wait(until: { $0 == 8 }, deadline: .now + .seconds(30)))
    }
}
