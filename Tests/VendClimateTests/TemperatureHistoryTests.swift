import Testing
import VendClimate
import VendingCore

/// `vendctl temps`' memory: a sample a minute with its lowest, highest and last reading, a day kept.
@Suite struct TemperatureHistoryTests {
    static func at(_ seconds: Int64) -> Instant { Instant(millisecondsSinceEpoch: 1_790_000_020_000 + seconds * 1_000) }

    @Test func readingsOfAMinuteMakeOneSample() {
        var history = TemperatureHistory()
        history.record(.success(.celsius(4)), at: Self.at(0))
        history.record(.failure(.crcMismatch), at: Self.at(5))
        history.record(.success(.celsius(7)), at: Self.at(10))
        history.record(.success(.celsius(5)), at: Self.at(19))
        history.record(.success(.celsius(3)), at: Self.at(20))
        #expect(history.samples.count == 2, "1_790_000_020 s is 20 s before a minute starts")
        let first = history.samples[0]
        #expect(first.start == Instant(millisecondsSinceEpoch: 1_789_999_980_000))
        #expect(first.lowest == .celsius(4) && first.highest == .celsius(7) && first.last == .celsius(5) && first.faults == 1)
        #expect(history.samples[1].start == Self.at(20) && history.samples[1].last == .celsius(3))
    }

    @Test func aMinuteOfFaultsHasNoTemperatureAndTheOldestGoBeyondTheCapacity() {
        var history = TemperatureHistory(intervalMilliseconds: 60_000, capacity: 3)
        for minute in 0..<5 { history.record(minute == 4 ? .failure(.missing) : .success(.celsius(minute)), at: Self.at(20 + Int64(minute) * 60)) }
        #expect(history.samples.map(\.last) == [.celsius(2), .celsius(3), nil])
        #expect(history.samples.last?.faults == 1 && history.samples.last?.lowest == nil)
        #expect(history.samples(since: Self.at(20 + 3 * 60)).map(\.last) == [.celsius(3), nil])
        #expect(history.samples(since: Self.at(20 + 9 * 60)).isEmpty)
    }
}
