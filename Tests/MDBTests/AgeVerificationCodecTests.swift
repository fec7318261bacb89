import MDB
import Testing

/// The reader's own age verification against the integrators' bus traces: SENVEND's raw log
/// (senvend/mdb age_verification.md) and ICT's DCM5 test log (blog.csdn.net/hbstart/article/details/140190380).
@Suite struct AgeVerificationCodecTests {
    @Test func dravpAndDravsAreTheTracesBytes() {
        // SENVEND: "data from VMC: [17h, ffh, 05h, 06h, 12h, 44h, 52h, 41h, 56h, 50h]" (18 years).
        #expect(CashlessCommand.ageVerificationAge(18).block(for: .cashless1).description == "17 FF0506124452415650")
        #expect(CashlessCommand.ageVerificationAge(0).block(for: .cashless2).description == "67 FF0506004452415650")
        // "[17h, ffh, 06h, 06h, 00h, 44h, 52h, 41h, 56h, 53h]".
        #expect(CashlessCommand.ageVerificationCheck.block(for: .cashless1).description == "17 FF0606004452415653")
    }

    @Test func theRepliesAreRead() throws {
        let tag = { (name: String) in Array(name.utf8) }
        // SENVEND's DRAVP reply, and the DCM5's.
        #expect(AgeVerification.reply(diagnostic: [0x05, 0x06, 0x00] + tag("DRAVP")) == .ageSet(status: 0))
        // DRAVS: SENVEND approved 9F 10; DCM5 1E 10 old enough, 0E 10 too young, 00 00 no age.
        #expect(AgeVerification.reply(diagnostic: [0x06, 0x07, 0x9F, 0x10] + tag("DRAVS")) == .checked(.oldEnough))
        #expect(AgeVerification.reply(diagnostic: [0x06, 0x07, 0x1E, 0x10] + tag("DRAVS")) == .checked(.oldEnough))
        #expect(AgeVerification.reply(diagnostic: [0x06, 0x07, 0x0E, 0x10] + tag("DRAVS")) == .checked(.tooYoung))
        #expect(AgeVerification.reply(diagnostic: [0x06, 0x07, 0x00, 0x00] + tag("DRAVS")) == .checked(.noAge))
        // As a POLL answer: FFh, then the rest of the block.
        let poll = try CashlessResponse.parse([0xFF, 0x06, 0x07, 0x1E, 0x10] + tag("DRAVS"), level: 3, expanded: false)
        guard case .diagnostic(let data) = try #require(poll.first) else {
            Issue.record("not a diagnostic: \(poll)")
            return
        }
        #expect(AgeVerification.reply(diagnostic: data) == .checked(.oldEnough))
    }

    @Test func otherDiagnosticDataIsNoAnswer() {
        let tag = Array("DRAVS".utf8)
        // A wrong count, a wrong tag, a truncated block, a reader's own data.
        #expect(AgeVerification.reply(diagnostic: [0x06, 0x08, 0x1E, 0x10] + tag) == nil)
        #expect(AgeVerification.reply(diagnostic: [0x06, 0x07, 0x1E, 0x10] + Array("DRAVP".utf8)) == nil)
        #expect(AgeVerification.reply(diagnostic: [0x06, 0x07, 0x1E]) == nil)
        #expect(AgeVerification.reply(diagnostic: [0x01, 0x02, 0x03]) == nil)
        #expect(AgeVerification.reply(diagnostic: []) == nil)
        #expect(AgeVerification.reply(diagnostic: [0x05, 0x06, 0x00] + tag) == nil)
    }
}
