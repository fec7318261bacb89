import Testing
import VendTelemetry

@testable import VendDaemon
@testable import VendingCore

/// An age check as the fleet and the journal see it: one `age-check` type whose `reason` tells
/// started, approved and each end; the display follows `age-check-ended` (not `-used`).
@Suite struct AgeCheckTelemetryTests {
    static let won = Currency(code: "KRW", minorDigits: 0)
    static let at = Instant(millisecondsSinceEpoch: 1_790_000_000_000)
    static let check = AgeCheck(slot: "A2", age: 19, startedAt: at, deadline: at + .seconds(60))

    @Test func theFleetGetsEveryStepWithItsSlotAndAge() throws {
        let events: [(MachineEvent, String)] = [
            (.ageCheckStarted(Self.check), "started"), (.ageCheckApproved(Self.check), "approved"),
            (.ageCheckEnded(Self.check, reason: .used), "used"), (.ageCheckEnded(Self.check, reason: .timedOut), "timed-out"),
            (.ageCheckEnded(Self.check, reason: .restarted), "restarted"),
        ]
        for (event, reason) in events {
            let sent = try #require(TelemetryEvent(event, machine: "m1", currency: Self.won, at: Self.at))
            #expect(sent.type == .ageCheck && sent.slot == "A2" && sent.count == 19 && sent.reason == reason)
        }
    }

    @Test func theJournalSaysNoMoneyMovedOnAnEnd() {
        let format = MoneyFormat(template: "{amount}원")!
        let timedOut = EventDescription(.ageCheckEnded(Self.check, reason: .timedOut), format: format)
        #expect(timedOut.kind == "age-check-ended")
        #expect(timedOut.text == "slot A2: age check (19+) ended: timed-out; no money moved on it")
        #expect(timedOut.fields["RESULT"] == "timed-out")
        #expect(EventDescription(.ageCheckEnded(Self.check, reason: .used), format: format).kind == "age-check-used")
        let refused = EventDescription(.rejected(.noAgeVerifier("A2", age: 19)), format: format)
        #expect(
            refused.text
                == "refused: slot A2 is sold only after an age check (19+) and this machine has no age verifier: make another selection")
    }
}
