import Testing

@testable import VendFleetStore

/// The array literals a batch travels in: quotes and backslashes escaped, any other character as
/// it is (the round trip through a real server is StoreContractTests' on PostgreSQL).
@Suite struct PostgresArrayTests {
    @Test func textElementsAreQuotedAndEscaped() {
        #expect(PostgresArray.text([]) == "{}")
        #expect(PostgresArray.text(["a", nil, ""]) == #"{"a",NULL,""}"#)
        #expect(PostgresArray.text([#"say "hi""#, #"C:\dir"#, "{,}"]) == #"{"say \"hi\"","C:\\dir","{,}"}"#)
        #expect(PostgresArray.text(["₩1,000 é 🥤", "NULL"]) == #"{"₩1,000 é 🥤","NULL"}"#, "multi-byte characters untouched; the word NULL quoted")
    }

    @Test func integersAndNulls() {
        #expect(PostgresArray.integers([1, nil, -9_223_372_036_854_775_808]) == "{1,NULL,-9223372036854775808}")
    }
}
