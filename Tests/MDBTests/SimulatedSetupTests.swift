import MDB
import SimulatedMDB
import Testing

/// How `vendd --simulate` sets its simulated MDB devices up from the configured values.
@Suite struct SimulatedSetupTests {
    @Test func theFactorIsTheLargestWithinTheLimitThatDividesEveryValue() {
        let coins = ScaledValues([0: 50, 1: 100, 2: 500], limit: 255)
        #expect(coins.factor == 50)
        #expect(coins.credits == [1, 2, 10] + Array(repeating: 0, count: 13))
        // Won notes: their common divisor (1,000) is beyond a changer's byte; 250 divides it.
        let notes = ScaledValues([0: 1_000, 1: 5_000, 3: 10_000], limit: 255)
        #expect(notes.factor == 250)
        #expect(notes.credits.prefix(4) == [4, 20, 0, 40])
        #expect(ScaledValues([0: 1_000, 1: 5_000], limit: 65_535).factor == 1_000)
        #expect(ScaledValues([:], limit: 255) == ScaledValues([0: 0], limit: 255), "no value: factor 1")
    }

    @Test func anISONumericCodeIsBCDAfterAOne() {
        #expect(MDBCurrencyCode(iso4217Numeric: 410).raw == 0x1410)
        #expect(MDBCurrencyCode(iso4217Numeric: 978).raw == 0x1978)
        #expect(MDBCurrencyCode(iso4217Numeric: 36).iso4217Numeric == 36)
    }
}
