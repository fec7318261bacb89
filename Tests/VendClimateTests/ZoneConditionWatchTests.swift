import Testing
import VendClimate
import VendingCore

/// When the climate shell tells the machine that a tripped condition is over.
@Suite struct ZoneConditionWatchTests {
    static let warm = HealthTrip(zone: "chilled", cause: .temperature(limit: .celsius(5)), since: Zones.start, worst: .celsius(9))
    static let silent = HealthTrip(zone: "chilled", cause: .sensorFault(.missing), since: Zones.start, worst: nil)

    @Test func afterARestartTheFirstReadingsEndWhatTheyShowOver() {
        var watch = ZoneConditionWatch()
        #expect(watch.cleared(after: [], reading: .success(.celsius(7)), settings: Zones.cold()) == [.sensorFault])
        #expect(watch.cleared(after: [], reading: .success(.celsius(4)), settings: Zones.cold()) == [.overLimit])
        #expect(watch.cleared(after: [], reading: .success(.celsius(4)), settings: Zones.cold()).isEmpty, "each once")
    }

    @Test func anExcursionEndsWithinTheLimitNotBefore() {
        var watch = ZoneConditionWatch()
        _ = watch.cleared(after: [], reading: .success(.celsius(3)), settings: Zones.cold())
        #expect(watch.cleared(after: [.tripped(Self.warm)], reading: .success(.celsius(9)), settings: Zones.cold()).isEmpty)
        #expect(watch.cleared(after: [], reading: .failure(.crcMismatch), settings: Zones.cold()).isEmpty)
        #expect(watch.cleared(after: [], reading: .success(.celsius(5.5)), settings: Zones.cold()).isEmpty, "still past 5 °C")
        #expect(watch.cleared(after: [], reading: .success(.celsius(5)), settings: Zones.cold()) == [.overLimit], "at the limit is within it")
    }

    @Test func aSilentSensorEndsAtItsNextGoodReadingAndAHotZoneTurnsTheOtherWay() {
        var watch = ZoneConditionWatch()
        _ = watch.cleared(after: [], reading: .success(.celsius(66)), settings: Zones.hot())
        #expect(watch.cleared(after: [.tripped(Self.silent)], reading: .failure(.missing), settings: Zones.hot()).isEmpty)
        let coolSoup = HealthTrip(zone: "coffee", cause: .temperature(limit: .celsius(57)), since: Zones.start, worst: .celsius(50))
        #expect(watch.cleared(after: [.tripped(coolSoup)], reading: .success(.celsius(50)), settings: Zones.hot()) == [.sensorFault])
        #expect(watch.cleared(after: [], reading: .success(.celsius(60)), settings: Zones.hot()) == [.overLimit])
    }
}

extension Temperature {
    fileprivate static func celsius(_ degrees: Double) -> Temperature { Temperature(millidegreesCelsius: Int(degrees * 1_000)) }
}
