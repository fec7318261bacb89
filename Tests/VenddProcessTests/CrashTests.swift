import Foundation
import Synchronization
import Testing
import VendControl
import VenddTestSupport

/// Power cuts, imitated with SIGKILL at random instants while coins, purchases, restocks and
/// cash box collections stream in. After every restart the books must balance exactly, no coin
/// may be lost or counted twice, no vend may start twice, and every coin is in the cash box or
/// in exactly one collection.
@Suite(.oneRealProcessTestAtATime) struct CrashTests {
    static let kills = 200

    @Test func killedAtRandomInstantsTheBooksStillBalance() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        var random = SplitMix64(seed: 20261121)
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        let initialItems = try daemon.status().totalStock
        let traffic = TrafficLog()

        for round in 0..<Self.kills {
            let socket = daemon.socketPath
            let seed = random.next()
            // Marked running before the thread starts: a thread that started late would otherwise
            // send its traffic to the restarted daemon after `waitUntilIdle` let the round go on.
            traffic.begin()
            let generator = Thread { Self.sendTraffic(to: socket, seed: seed, log: traffic) }
            generator.start()
            usleep(UInt32.random(in: 0...150_000, using: &random))
            daemon.signal(SIGKILL)
            _ = try daemon.waitForExit()
            traffic.waitUntilIdle()

            try daemon.start()
            // A kill between a collection's service on and off leaves the machine in service mode.
            _ = try daemon.send(.service(on: false))
            let status = try daemon.status()
            let books = try Books(status)
            let confirmed = traffic.totals
            // Every confirmed coin is in; at most the one coin whose answer the kill cut off is extra.
            #expect(books.coinsIn >= confirmed.coins, "round \(round): coins in \(books.coinsIn) < confirmed \(confirmed.coins)")
            #expect(books.coinsIn <= confirmed.coins + confirmed.unconfirmedCoins, "round \(round): coins counted twice")
            #expect(status.vendInProgress == nil, "round \(round): the interrupted vend was not resolved at start-up")
            #expect(books.coinsIn == books.sales + books.refunds + books.credit, "round \(round): books do not balance")
            let items = status.totalStock + status.books.itemsSold
            #expect(items >= initialItems + confirmed.restocked, "round \(round): stock lost")
            #expect(items <= initialItems + confirmed.restocked + confirmed.unconfirmedRestocked, "round \(round): stock invented")
            // The simulated acceptor's coins all go to the cash box: in it, or collected once.
            let box = try #require(status.cashBox, "round \(round): no cash box in the status")
            let inBox = try #require(Int64(box.total))
            let lastCollection = box.collection ?? 0
            #expect(
                lastCollection == confirmed.lastCollection || (confirmed.collectionUnconfirmed && lastCollection == confirmed.lastCollection + 1),
                "round \(round): collection #\(lastCollection) after #\(confirmed.lastCollection) confirmed")
            if lastCollection == confirmed.lastCollection {
                #expect(books.coinsIn == confirmed.collected + inBox, "round \(round): coins in the box or collected differ from coins in")
            } else {
                #expect(books.coinsIn >= confirmed.collected + inBox, "round \(round): a collection took more than came in")
            }
            traffic.settleUnconfirmed(
                coinsIn: books.coinsIn, items: items - initialItems, collected: books.coinsIn - inBox, lastCollection: lastCollection)
        }
        #expect(try daemon.stop() == 0)

        // No vend number ever started twice across all the runs, and none started without a relay.
        let logs = daemon.allLogs
        let started = logs.matches(of: /vend#(\d+) started/).map { String($0.1) }
        #expect(Set(started).count == started.count, "a vend started twice")
        #expect(!started.isEmpty, "the traffic never bought anything")
        #expect(traffic.totals.lastCollection > 0, "the traffic never collected the cash box")
        let interrupted = logs.matches(of: /was in flight when vendd stopped/).count
        print(
            "crash test: \(Self.kills) kills, \(started.count) vends started, \(interrupted) resolved after a crash, \(traffic.totals.coins) minor units of coins confirmed, \(traffic.totals.lastCollection) collections"
        )
    }

    /// Coins, selections, restocks and now and then a collection (service on, collect, service
    /// off) as fast as the daemon answers, until the connection dies. The caller has called
    /// `log.begin()`; this ends it.
    static func sendTraffic(to socket: String, seed: UInt64, log: TrafficLog) {
        defer { log.end() }
        var random = SplitMix64(seed: seed)
        let slots = ["A1", "A2", "A3", "A4", "A5", "B1", "B2", "B3", "B4", "B5"]
        while true {
            guard let client = try? ControlClient(path: socket) else { return }
            let choice = Int.random(in: 0..<80, using: &random)
            let commands: [ControlCommand]
            switch choice {
            case 0..<40: commands = [.sim(.coin(amount: ["50", "100", "500"].randomElement(using: &random)!))]
            case 40..<64: commands = [.sim(.press(slot: slots.randomElement(using: &random)!))]
            case 64..<72: commands = [.restock(slot: slots.randomElement(using: &random)!, count: 1)]
            case 72..<79: commands = [.sim(.drop(slot: slots.randomElement(using: &random)!, succeeds: Bool.random(using: &random)))]
            default: commands = [.service(on: true), .cashCollect, .service(on: false)]
            }
            for command in commands {
                log.sending(command)
                guard let response = try? client.send(command) else { return }
                log.answered(command, ok: response.ok, collected: response.collection.flatMap { Int64($0.total) })
            }
        }
    }
}

/// What the traffic thread sent and what the daemon confirmed.
final class TrafficLog: Sendable {
    struct Totals {
        var coins: Int64 = 0
        var unconfirmedCoins: Int64 = 0
        var restocked = 0
        var unconfirmedRestocked = 0
        /// What the confirmed collections took, and the last one's number.
        var collected: Int64 = 0
        var lastCollection: UInt64 = 0
        var collectionUnconfirmed = false
    }

    private let state = Mutex((totals: Totals(), running: false, inFlight: ControlCommand?.none))

    var totals: Totals { state.withLock { $0.totals } }

    func begin() { state.withLock { $0.running = true } }
    func end() { state.withLock { $0.running = false } }

    func sending(_ command: ControlCommand) {
        state.withLock { state in
            state.inFlight = command
            switch command {
            case .sim(.coin(let amount)): state.totals.unconfirmedCoins += Int64(amount)!
            case .restock: state.totals.unconfirmedRestocked += 1
            case .cashCollect: state.totals.collectionUnconfirmed = true
            default: break
            }
        }
    }

    func answered(_ command: ControlCommand, ok: Bool, collected: Int64?) {
        state.withLock { state in
            state.inFlight = nil
            switch command {
            case .sim(.coin(let amount)):
                state.totals.unconfirmedCoins -= Int64(amount)!
                if ok { state.totals.coins += Int64(amount)! }
            case .restock:
                state.totals.unconfirmedRestocked -= 1
                if ok { state.totals.restocked += 1 }
            case .cashCollect:
                state.totals.collectionUnconfirmed = false
                if ok, let collected {
                    state.totals.collected += collected
                    state.totals.lastCollection += 1
                }
            default: break
            }
        }
    }

    /// After a restart the daemon's books say what became of the request the kill interrupted:
    /// it is now either counted or gone for good.
    func settleUnconfirmed(coinsIn: Int64, items: Int, collected: Int64, lastCollection: UInt64) {
        state.withLock { state in
            state.totals.collected = collected
            state.totals.lastCollection = lastCollection
            state.totals.collectionUnconfirmed = false
            state.totals.coins = coinsIn
            state.totals.unconfirmedCoins = 0
            state.totals.restocked = items
            state.totals.unconfirmedRestocked = 0
        }
    }

    func waitUntilIdle() {
        while state.withLock({ $0.running }) { usleep(1_000) }
    }
}

/// The status books as numbers.
struct Books {
    let coinsIn: Int64, sales: Int64, refunds: Int64, credit: Int64

    init(_ status: StatusReport) throws {
        func number(_ text: String) throws -> Int64 {
            guard let value = Int64(text) else { throw HarnessError("'\(text)' is not a won amount") }
            return value
        }
        coinsIn = try number(status.books.coinsIn)
        sales = try number(status.books.sales)
        refunds = try number(status.books.refunds)
        credit = try number(status.credit)
    }
}
