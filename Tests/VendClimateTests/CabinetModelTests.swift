import Testing
import VendClimate
import VendingCore

@Suite struct CabinetModelTests {
    @Test func aColdCabinetCoolsWithTheCompressorAndWarmsWithout() {
        var model = CabinetModel(kind: .cold, temperature: .celsius(10), at: Zones.start)
        model.advance(to: Zones.start + .seconds(60), relayOn: true, doorOpen: false)
        #expect(model.temperature == Temperature(millidegreesCelsius: 10_000 - 1_200 + 480))
        let cooled = model.temperature
        model.advance(to: Zones.start + .seconds(120), relayOn: false, doorOpen: false)
        #expect(model.temperature > cooled)
        let closed = model.temperature
        model.advance(to: Zones.start + .seconds(180), relayOn: false, doorOpen: true)
        #expect(model.temperature - closed > Temperature(millidegreesCelsius: 2_000), "an open door warms faster")
    }

    @Test func theRoomIsAsFarAsItDrifts() {
        var model = CabinetModel(kind: .cold, temperature: .celsius(20), at: Zones.start)
        model.advance(to: Zones.start + .seconds(3_600), relayOn: false, doorOpen: true)
        #expect(model.temperature == .celsius(22))
    }

    @Test func aZoneReadsItsWorstSensorOrItsFault() {
        let readings: [Result<Temperature, SensorFault>] = [.success(.celsius(3)), .success(.celsius(5))]
        #expect(ZoneKind.cold.reading(of: readings) == .success(.celsius(5)))
        #expect(ZoneKind.hot.reading(of: readings) == .success(.celsius(3)))
        #expect(ZoneKind.cold.reading(of: readings + [.failure(.crcMismatch)]) == .failure(.crcMismatch))
        #expect(ZoneKind.cold.reading(of: []) == .failure(.missing))
    }
}
