import Logging
import Synchronization
import Testing
import VendFleetStore
import VendTelemetry
import VenddTestSupport

@testable import VendFleetIngest

/// What the ingester logs, one line per record: level, message and metadata (sorted).
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])

    var logger: Logger { Logger(label: "test") { _ in Handler(capture: self) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.lines.withLock { $0.append("\(event.level) \(event.message) \(fields)") }
        }
    }
}

/// A hostile or malformed retained message, and the reason it must be refused for.
struct HostileRetained: CustomTestStringConvertible, Sendable {
    let name: String
    let subject: String
    let payload: String
    let reason: String

    var testDescription: String { name }

    static let slot = #""slot":"A1","product":"Cola","price":"1.50","capacity":8"#

    static func stock(_ slots: String) -> String { #"{"machine":"m1","currency":"EUR","slots":[\#(slots)]}"# }
    static func stock(_ slots: String, _ fields: String) -> String { #"{"machine":"m1","currency":"EUR","slots":[\#(slots)],\#(fields)}"# }
    static func cash(_ fields: String) -> String { #"{"machine":"m1","currency":"EUR",\#(fields)}"# }
    /// Slot A1 with `lines` as its price lines.
    static func priced(_ lines: String) -> String { stock(#"{\#(slot),"available":1,"stock":1,"priceLines":[\#(lines)]}"#) }
    /// A stock message with `field` (`priceLists` or `bands`) holding `entries`.
    static func pricing(_ field: String, _ entries: String) -> String {
        stock(#"{\#(slot),"available":1,"stock":1}"#, #""\#(field)":[\#(entries)]"#)
    }
    static func band(_ fields: String) -> String { pricing("bands", "{\(fields)}") }
    static func zone(_ fields: String) -> String { #"{"machine":"m1","zone":"cold","kind":"cooling",\#(fields)}"# }

    static let all: [HostileRetained] = [
        .init(name: "stock: no slots", subject: "stock", payload: #"{"machine":"m1","currency":"EUR"}"#, reason: "'slots' is missing"),
        .init(
            name: "stock: a count as text", subject: "stock", payload: stock(#"{\#(slot),"available":"3","stock":3}"#),
            reason: "'slots.Index 0.available' has the wrong type"),
        .init(
            name: "stock: a count past Int64", subject: "stock", payload: stock(#"{\#(slot),"available":3,"stock":99999999999999999999999}"#),
            reason: "a number is out of range"),
        .init(
            name: "stock: a negative count", subject: "stock", payload: stock(#"{\#(slot),"available":-3,"stock":3}"#),
            reason: "slot A1's available -3 is negative"),
        .init(
            name: "stock: a negative capacity", subject: "stock",
            payload: stock(#"{"slot":"A1","product":"Cola","price":"1.50","capacity":-8,"available":0,"stock":0}"#),
            reason: "slot A1's capacity -8 is negative"),
        .init(
            name: "stock: a price as a number", subject: "stock",
            payload: stock(#"{"slot":"A1","product":"Cola","price":1.5,"capacity":8,"available":0,"stock":0}"#),
            reason: "'slots.Index 0.price' has the wrong type"),
        .init(
            name: "stock: a price in exponent form", subject: "stock",
            payload: stock(#"{"slot":"A1","product":"Cola","price":"1e308","capacity":8,"available":0,"stock":0}"#),
            reason: "slot A1's price '1e308' is not an exact decimal amount"),
        .init(
            name: "stock: a slot twice", subject: "stock", payload: stock(#"{\#(slot),"available":1,"stock":1},{\#(slot),"available":2,"stock":2}"#),
            reason: "slot A1 is listed twice"),
        .init(
            name: "stock: a price line on list 0", subject: "stock", payload: priced(#"{"list":0,"payment":"cash","price":"1.00"}"#),
            reason: "slot A1's price line 0 is not a price list (1 to 999)"),
        .init(
            name: "stock: a price line on list 1000", subject: "stock", payload: priced(#"{"list":1000,"payment":"any","price":"1.00"}"#),
            reason: "slot A1's price line 1000 is not a price list (1 to 999)"),
        .init(
            name: "stock: a price line for an unknown payment", subject: "stock",
            payload: priced(#"{"list":2,"payment":"bitcoin","price":"1.00"}"#),
            reason: "slot A1's price line on list 2 is for payment 'bitcoin', not one of any, cash, cashless, cashless1, cashless2"),
        .init(
            name: "stock: a price line's amount with a comma", subject: "stock", payload: priced(#"{"list":2,"payment":"cash","price":"1,00"}"#),
            reason: "slot A1's price on list 2 for cash '1,00' is not an exact decimal amount"),
        .init(
            name: "stock: a price line's amount as a number", subject: "stock", payload: priced(#"{"list":2,"payment":"cash","price":1}"#),
            reason: "has the wrong type"),
        .init(
            name: "stock: a list and payment twice", subject: "stock",
            payload: priced(#"{"list":2,"payment":"cash","price":"1.00"},{"list":2,"payment":"cash","price":"0.90"}"#),
            reason: "slot A1 has a price on list 2 for cash twice"),
        .init(
            name: "stock: a list numbered 0", subject: "stock", payload: pricing("priceLists", #"{"list":0,"name":"staff"}"#),
            reason: "a price list's number 0 is not a price list (1 to 999)"),
        .init(
            name: "stock: a list named twice", subject: "stock",
            payload: pricing("priceLists", #"{"list":2,"name":"happy hour"},{"list":2,"name":"staff"}"#), reason: "price list 2 is named twice"),
        .init(
            name: "stock: a band on list 1000", subject: "stock", payload: band(#""list":1000,"days":["mon"],"from":"15:00","to":"17:00""#),
            reason: "a band's list 1000 is not a price list (1 to 999)"),
        .init(
            name: "stock: a band without days", subject: "stock", payload: band(#""list":2,"days":[],"from":"15:00","to":"17:00""#),
            reason: "the band on list 2 names no day"),
        .init(
            name: "stock: a band on an unknown day", subject: "stock", payload: band(#""list":2,"days":["monday"],"from":"15:00","to":"17:00""#),
            reason: "the band on list 2 starts on 'monday', not one of sun, mon, tue, wed, thu, fri, sat"),
        .init(
            name: "stock: a band's day twice", subject: "stock", payload: band(#""list":2,"days":["mon","mon"],"from":"15:00","to":"17:00""#),
            reason: "the band on list 2 names mon twice"),
        .init(
            name: "stock: a band from 24:00", subject: "stock", payload: band(#""list":2,"days":["mon"],"from":"24:00","to":"02:00""#),
            reason: "the band on list 2 starts at '24:00', not a time from 00:00 to 23:59"),
        .init(
            name: "stock: a band to 17:60", subject: "stock", payload: band(#""list":2,"days":["mon"],"from":"15:00","to":"17:60""#),
            reason: "the band on list 2 ends at '17:60', not a time from 00:00 to 24:00"),
        .init(
            name: "stock: a band to 5pm", subject: "stock", payload: band(#""list":2,"days":["mon"],"from":"15:00","to":"5pm""#),
            reason: "the band on list 2 ends at '5pm', not a time from 00:00 to 24:00"),
        .init(
            name: "stock: an empty band", subject: "stock", payload: band(#""list":2,"days":["mon"],"from":"15:00","to":"15:00""#),
            reason: "the band on list 2 is empty: it starts and ends at 15:00"),
        .init(name: "cash: no sales", subject: "cash", payload: cash(#""coinsIn":"1.00","refunds":"0.00""#), reason: "'sales' is missing"),
        .init(
            name: "cash: a huge number for an amount", subject: "cash", payload: cash(#""coinsIn":1e400,"sales":"0.00","refunds":"0.00""#),
            reason: "a number is out of range at 'coinsIn'"),
        .init(
            name: "cash: an amount that is not a decimal", subject: "cash", payload: cash(#""coinsIn":"NaN","sales":"0.00","refunds":"0.00""#),
            reason: "coinsIn 'NaN' is not an exact decimal amount"),
        .init(
            name: "cash: exact change as text", subject: "cash",
            payload: cash(#""coinsIn":"1.00","sales":"0.00","refunds":"0.00","exactChangeOnly":"yes""#),
            reason: "'exactChangeOnly' has the wrong type"),
        .init(name: "zone: no health", subject: "zones/cold", payload: zone(#""temperature":"4.5""#), reason: "'health' is missing"),
        .init(
            name: "zone: a relay as text", subject: "zones/cold", payload: zone(#""health":"ok","relayOn":"on""#),
            reason: "'relayOn' has the wrong type"),
        .init(
            name: "zone: a time past Int64", subject: "zones/cold", payload: zone(#""health":"ok","since":1e30"#), reason: "a number is out of range"),
        .init(name: "not an object", subject: "cash", payload: #"["m1","1.00"]"#, reason: "not a JSON object"),
        .init(name: "not JSON", subject: "stock", payload: #"{"machine":"m1","slots":[}"#, reason: "not a JSON object: not valid JSON"),
    ]
}

/// Takes `messages` (topic, payload) as libmosquitto's thread would: the batch and the log.
func take(_ messages: [(String, String)], prefix: String = "vendd") throws -> (IngestBuffer.Batch, [String]) {
    let capture = LogCapture()
    let buffer = try IngestBuffer(batchSize: 1000, capacity: 1000)
    for (topic, payload) in messages {
        Ingester.take(topic: topic, payload: Array(payload.utf8), topics: FleetTopics(prefix: prefix), buffer: buffer, logger: capture.logger)
    }
    let (batch, dropped) = buffer.next(window: .zero, idle: .zero)
    #expect(dropped == 0)
    return (batch, capture.lines.withLock { $0 })
}

/// The retained `stock`, `cash` and `zones/<zone>` messages as the ingester takes them off the
/// broker: a hostile or malformed one is refused and logged with the topic's machine and the
/// reason, and nothing of it reaches the batch; the good ones around it are all there.
@Suite("Retained payloads")
struct RetainedPayloadTests {
    private func good(_ subject: String, machine: String = "m1") -> String {
        switch subject {
        case "stock": HostileRetained.stock(#"{\#(HostileRetained.slot),"available":2,"stock":3}"#).replacingOccurrences(of: "m1", with: machine)
        case "cash": HostileRetained.cash(#""coinsIn":"3.00","sales":"1.50","refunds":"0.00""#).replacingOccurrences(of: "m1", with: machine)
        default: HostileRetained.zone(#""health":"ok","temperature":"4.5""#).replacingOccurrences(of: "m1", with: machine)
        }
    }

    @Test(arguments: HostileRetained.all)
    func aHostilePayloadIsRefusedWithItsMachineAndReasonAndNothingElseIsLost(_ hostile: HostileRetained) throws {
        let topic = "vendd/m2/\(hostile.subject)"
        let (batch, log) = try take([
            ("vendd/m2/\(hostile.subject)", good(hostile.subject, machine: "m2")), (topic, hostile.payload),
            ("vendd/m3/\(hostile.subject)", good(hostile.subject, machine: "m3")), ("vendd/m2/events/vend-ended", eventPayload("m2", 1)),
        ])
        // The payloads name m1: the topic's machine (m2) is the one logged, and the only refusal.
        let refusals = log.filter { $0.hasPrefix("error") }
        #expect(refusals.count == 1, "\(log)")
        let refusal = try #require(refusals.first)
        #expect(refusal.hasPrefix("error refused \(hostile.subject) on \(topic): "), "\(refusal)")
        #expect(refusal.contains(hostile.reason), "\(refusal)")
        #expect(refusal.contains("machine=m2") && refusal.contains("topic=\(topic)") && !refusal.contains("machine=m1"), "\(refusal)")
        // Nothing of it is in the batch; the messages around it all are.
        #expect(batch.retained.map(\.machine) == ["m2", "m3"])
        #expect(!batch.retained.contains { $0.payload == hostile.payload })
        #expect(batch.events.map(\.seq) == [1])

        // Stored, the last good one stands for m2.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteFleetStore(path: directory.path + "/fleet.db", now: 1)
        _ = try store.commit(events: batch.events, retained: batch.retained, receivedAt: 2)
        #expect(try store.latest(of: "m2")[hostile.subject] == good(hostile.subject, machine: "m2"))
        #expect(try store.latest(of: "m1").isEmpty, "a payload naming m1 reached m1")
    }

    /// vendd's price lists, bands across midnight and to 24:00 included, pass and are kept as
    /// sent: the office reads them from the stored payload.
    @Test func aStockWithPriceListsAndBandsIsKeptAsSent() throws {
        let payload = HostileRetained.stock(
            #"{\#(HostileRetained.slot),"available":1,"stock":1,"priceLines":[{"list":1,"payment":"cashless1","price":"1.40"},{"list":2,"payment":"any","price":"1.20"},{"list":999,"payment":"cashless","price":"0.90"}]}"#,
            #""priceLists":[{"list":2,"name":"happy hour"},{"list":999,"name":"staff"}],"bands":[{"list":2,"days":["mon","fri"],"from":"15:00","to":"17:00"},{"list":2,"days":["sat"],"from":"22:00","to":"02:00"},{"list":999,"days":["sun"],"from":"00:00","to":"24:00"}]"#
        )
        let (batch, log) = try take([("vendd/m1/stock", payload)])
        #expect(log.isEmpty, "\(log)")
        #expect(batch.retained.map(\.payload) == [payload])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteFleetStore(path: directory.path + "/fleet.db", now: 1)
        _ = try store.commit(events: [], retained: batch.retained, receivedAt: 2)
        #expect(try store.latest(of: "m1")["stock"] == payload)
        #expect(try store.slots(of: "m1").map(\.price) == ["1.50"], "list 1's price stays the slot's column")
    }

    @Test(arguments: ["stock", "cash", "zones/cold"])
    func aPayloadNamingAnotherMachineIsStoredAsTheTopicsAndWarnedAbout(_ subject: String) throws {
        let (batch, log) = try take([("vendd/m2/\(subject)", good(subject, machine: "m1"))])
        let update = try #require(batch.retained.first)
        #expect(update.machine == "m2" && update.subject == subject)
        #expect(log.count == 1 && log[0].hasPrefix("warning "), "\(log)")
        #expect(log.first?.contains("names machine 'm1' but arrived on machine 'm2''s topic: stored as 'm2''s") == true, "\(log)")
        #expect(log.first?.contains("machine=m2") == true, "\(log)")

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteFleetStore(path: directory.path + "/fleet.db", now: 1)
        _ = try store.commit(events: [], retained: batch.retained, receivedAt: 2)
        switch subject {
        case "stock": #expect(try store.slots(of: "m2").map(\.available) == [2] && store.slots(of: "m1").isEmpty)
        case "cash": #expect(try store.cash(of: "m2")?.coinsIn == "3.00" && store.cash(of: "m1") == nil)
        default: #expect(try store.zones(of: "m2").map(\.zone) == ["cold"] && store.zones(of: "m1").isEmpty)
        }
    }
}

/// vendd's `cash-collected` event read into the collection's columns as it arrives; one that
/// does not decode as its schema is refused with its machine and why, and nothing else is lost.
@Suite struct CollectionPayloadTests {
    static func payload(_ fields: String) -> String {
        #"{"id":"c-1","seq":4,"machine":"m1","at":1790000000000,"type":"cash-collected","currency":"KRW",\#(fields)}"#
    }

    static let good = payload(
        #""collection":3,"amount":"7100","since":1789000000000,"reason":"collected by ana (uid 1001)","coins":[{"value":"100","count":1},{"value":"500","count":2}],"bills":[{"value":"1000","count":6}]"#
    )

    private func take(_ payload: String, type: String = "cash-collected") throws -> (IngestBuffer.Batch, [String]) {
        let capture = LogCapture()
        let buffer = try IngestBuffer(batchSize: 100, capacity: 100)
        Ingester.take(
            topic: "vendd/m1/events/\(type)", payload: Array(payload.utf8), topics: FleetTopics(prefix: "vendd"), buffer: buffer,
            logger: capture.logger)
        return (buffer.next(window: .zero, idle: .zero).0, capture.lines.withLock { $0 })
    }

    @Test func aCollectionIsReadIntoColumns() throws {
        let (batch, log) = try take(Self.good)
        #expect(log.isEmpty, "\(log)")
        let event = try #require(batch.events.first)
        #expect(event.payload == Self.good)
        #expect(
            event.collection
                == CollectionColumns(
                    number: 3, currency: "KRW", total: "7100", since: 1_789_000_000_000, collectedBy: "ana (uid 1001)",
                    denominations: [
                        DenominationCount(kind: .coin, value: "100", count: 1), DenominationCount(kind: .coin, value: "500", count: 2),
                        DenominationCount(kind: .bill, value: "1000", count: 6),
                    ]))
        // Every other type has none.
        let (other, _) = try take(eventPayload("m1", 1), type: "vend-ended")
        #expect(other.events.count == 1 && other.events.first?.collection == nil)
    }

    @Test(arguments: [
        (#""amount":"7100""#, "a cash-collected event needs its collection number and amount"),
        (#""collection":3,"amount":"7,100""#, "amount '7,100' is not an exact decimal amount"),
        (#""collection":3,"amount":"500","coins":[{"value":"500","count":-1}]"#, "coin 500's count -1 is negative"),
        (#""collection":3,"amount":"500","bills":[{"value":"1000","count":1},{"value":"1000","count":1}]"#, "bill 1000 is listed twice"),
        (#""collection":"3","amount":"500""#, "not a cash-collected event: 'collection' has the wrong type"),
    ])
    func aBadCollectionIsRefused(_ fields: String, _ reason: String) throws {
        let (batch, log) = try take(Self.payload(fields))
        #expect(batch.events.isEmpty)
        #expect(log.count == 1 && log[0].contains("refused an event on vendd/m1/events/cash-collected: \(reason)"), "\(log)")
        #expect(log.first?.contains("machine=m1") == true)
    }
}
