import Foundation
import Testing
import VendControl
import VenddTestSupport

/// Every vendctl command's text output against a real `vendd --simulate` with the sample
/// configuration. Dates come from --loaded/--at/--since (TZ=UTC); wall-clock times are normalised.
@Suite(.oneRealProcessTestAtATime) struct VendctlCommandTests {
    static let header = "Corridor B, 2nd floor: in service"

    @Test func statusShowsStateCreditHealthAndEverySlot() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.stockAndSell([("A4", ["500", "500", "500"])])
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "500"))
        let run = try daemon.vendctl("status")
        #expect(run.status == 0)
        #expect(
            run.output == """
                Corridor B, 2nd floor: in service
                credit   500원
                vend     none in progress
                coins    ok: simulated cctalk acceptor (4 channels)
                gpio     ok: simulated (24 lines)
                cash box 2,000원 since vendd began counting (no collection yet)

                slot  product             price  stock  free  earliest expiry
                A1    Banana Milk       1,200원    8/8     8  2025-03-11 09:00
                A2    Strawberry Milk   1,200원    8/8     8  2025-03-11 09:00
                A3    White Milk        1,000원    8/8     8  2025-03-08 09:00
                A4    Cola              1,500원   9/10     9  2025-11-26 09:00
                A5    Zero Cola         1,500원  10/10    10  2025-11-26 09:00
                B1    Lemon-Lime Cider  1,400원  10/10    10  2025-11-26 09:00
                B2    Canned Coffee     1,000원  12/12    12  2026-03-01 09:00
                B3    Hot Americano     1,300원    6/6     6  2025-03-15 09:00
                B4    Hot Café Latte    1,500원    6/6     6  2025-03-15 09:00
                B5    Barley Tea        1,100원  10/10    10  2026-03-01 09:00

                """)
    }

    @Test func stockAddsUpEachProductOverItsSlots() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "A1", "3"))
        try daemon.requireSuccess(daemon.vendctl("restock", "B3"))
        let run = try daemon.vendctl("stock")
        #expect(run.status == 0)
        #expect(
            run.output == """
                product           id               available  capacity  slots
                Banana Milk       banana-milk              3         8  A1
                Strawberry Milk   strawberry-milk          0         8  A2
                White Milk        white-milk               0         8  A3
                Cola              cola                     0        10  A4
                Zero Cola         zero-cola                0        10  A5
                Lemon-Lime Cider  cider                    0        10  B1
                Canned Coffee     canned-coffee            0        12  B2
                Hot Americano     hot-americano            6         6  B3
                Hot Café Latte    hot-latte                0         6  B4
                Barley Tea        barley-tea               0        10  B5

                """)
    }

    @Test func purchasableFollowsTheCredit() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all"))
        #expect(try daemon.vendctl("purchasable").output == "credit 0원 buys nothing\n")
        for coin in ["500", "500", "100"] { try daemon.requireSuccess(daemon.vendctl("sim", "coin", coin)) }
        let run = try daemon.vendctl("purchasable")
        #expect(run.status == 0)
        #expect(
            run.output == """
                credit 1,100원 buys from:
                slot  product          price  free
                A3    White Milk     1,000원     8
                B2    Canned Coffee  1,000원    12
                B5    Barley Tea     1,100원    10

                """)
    }

    @Test func expiredJudgesAtTheGivenDate() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all", "--loaded", "2025-03-01T09:00"))
        #expect(try daemon.vendctl("expired", "--at", "2025-03-08T08:59").output == "nothing has expired at 2025-03-08 08:59\n")
        let run = try daemon.vendctl("expired", "--at", "2025-03-12")
        #expect(run.status == 0)
        #expect(
            run.output == """
                expired at 2025-03-12 00:00:
                slot  product          items  expired since
                A1    Banana Milk          8  2025-03-11 09:00
                A2    Strawberry Milk      8  2025-03-11 09:00
                A3    White Milk           8  2025-03-08 09:00

                """)
    }

    @Test func hotListsTheHeatedProducts() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let run = try daemon.vendctl("hot")
        #expect(run.status == 0)
        #expect(
            run.output == """
                product         id             slots  shelf life
                Hot Americano   hot-americano  B3        14 days
                Hot Café Latte  hot-latte      B4        14 days

                """)
    }

    @Test func productsShowsTheCategoryTree() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let run = try daemon.vendctl("products")
        #expect(run.status == 0)
        #expect(
            run.output == """
                beverage/
                  coffee/
                    canned/
                      Canned Coffee     canned-coffee    B2
                      Hot Americano     hot-americano    B3  hot
                      Hot Café Latte    hot-latte        B4  hot
                  milk/
                    flavoured/
                      Banana Milk       banana-milk      A1  chilled
                      Strawberry Milk   strawberry-milk  A2  chilled
                    plain/
                      White Milk        white-milk       A3  chilled
                  soda/
                    cola/
                      Cola              cola             A4
                      Zero Cola         zero-cola        A5  sugar-free
                    lemon-lime/
                      Lemon-Lime Cider  cider            B1
                  tea/
                    Barley Tea          barley-tea       B5

                """)
    }

    @Test func restockFillsCountsAndDatesTheLoad() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let some = try daemon.vendctl("restock", "A1", "3", "--loaded", "2025-03-01T09:00")
        #expect(some.status == 0)
        #expect(some.output == "restocked A1 0→3\n")
        #expect(
            try daemon.vendctl("restock", "all").output
                == "restocked A1 3→8, A2 0→8, A3 0→8, A4 0→10, A5 0→10, B1 0→10, B2 0→12, B3 0→6, B4 0→6, B5 0→10\n")
        #expect(try daemon.vendctl("restock", "all").output == "every slot was already full\n")
        let full = try daemon.vendctl("restock", "A1", "1")
        #expect(full.status == 1)
        #expect(full.errors == "vendctl: slot A1 holds 8 items and has room for 0 more\n")
        // The first lot keeps its load date: the slot's earliest expiry is 10 days after it.
        #expect(try daemon.status().slot("A1")?.earliestExpiry == 1_741_683_600_000)
    }

    @Test func priceSetsAndRestoresASlotsPrice() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let set = try daemon.vendctl("price", "A1", "1300")
        #expect(set.status == 0)
        #expect(set.output == "slot A1 price 1,200원 → 1,300원\n")
        #expect(try daemon.status().slot("A1")?.priceText == "1,300원")
        #expect(try daemon.vendctl("price", "A1", "1300").output == "slot A1 already costs 1,300원\n")
        #expect(try daemon.vendctl("price", "A1", "default").output == "slot A1 price 1,300원 → 1,200원\n")
        let bad = try daemon.vendctl("price", "A1", "12.5")
        #expect(bad.status == 64)
        #expect(bad.errors == "vendctl: '12.5' has fraction digits, but the currency has no minor unit (or say default for the configured price)\n")
    }

    @Test func serviceStopsAndResumesSales() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let on = try daemon.vendctl("service", "on")
        #expect(on.output == "service mode on: sales stopped\n")
        #expect(try daemon.vendctl("status").output.hasPrefix("Corridor B, 2nd floor: service mode (switched on by a technician)\n"))
        let off = try daemon.vendctl("service", "off")
        #expect(off.status == 0)
        #expect(off.output == "service mode off: back in service\n")
        #expect(try daemon.status().state == "in-service")
    }

    @Test func historyListsSalesFilteredByDateAndLimit() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.stockAndSell(sampleSales)
        let run = try daemon.vendctl("history")
        #expect(run.status == 0)
        #expect(
            run.normalisedOutput == """
                time              vend  slot  product          price  paid  confirmed by
                <time>    #1  A4    Cola           1,500원  cash  drop-sensor
                <time>    #2  B2    Canned Coffee  1,000원  cash  drop-sensor
                <time>    #3  A4    Cola           1,500원  cash  drop-sensor
                <time>    #4  A1    Banana Milk    1,200원  cash  drop-sensor

                """)
        #expect(
            try daemon.vendctl("history", "--limit", "1").normalisedOutput == """
                time              vend  slot  product        price  paid  confirmed by
                <time>    #4  A1    Banana Milk  1,200원  cash  drop-sensor

                """)
        #expect(try daemon.vendctl("history", "--since", "2999-01-01").output == "no sales since 2999-01-01 00:00\n")
        #expect(try daemon.vendctl("history", "--since", "2000-01-01").output == run.output)
    }

    @Test func coinsCountsTheCashBoxPerDenomination() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.stockAndSell(sampleSales)
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "50"))
        let run = try daemon.vendctl("coins")
        #expect(run.status == 0)
        #expect(
            run.output == """
                coin   count   amount
                50원       1     50원
                100원      2    200원
                500원     10  5,000원
                total     13  5,250원

                """)
    }

    @Test func reportChartsSalesByProduct() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.stockAndSell(sampleSales)
        let run = try daemon.vendctl("report")
        #expect(run.status == 0)
        #expect(
            run.output == """
                Sales by product, all time — Corridor B, 2nd floor
                Cola           ██████████████████████████████  2  3,000원
                Banana Milk    ███████████████                 1  1,200원
                Canned Coffee  ███████████████                 1  1,000원
                total                                          4  5,200원

                """)
        let future = try daemon.vendctl("report", "--since", "2999-01-01")
        #expect(future.output == "Sales by product, since 2999-01-01 00:00 — Corridor B, 2nd floor\nno sales\n")
        #expect(future.errors == "")
    }

    @Test func watchPrintsOneLinePerEventUntilInterrupted() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: builtProduct("vendctl"))
        watch.arguments = ["--socket", daemon.socketPath, "watch"]
        let output = Pipe()
        watch.standardOutput = output
        try watch.run()
        defer { if watch.isRunning { watch.terminate() } }
        // The subscription is in place once the daemon has answered it; a restock shows it is.
        var lines: [String] = []
        var reader = LineReader(output.fileHandleForReading)
        let deadline = Date().addingTimeInterval(10)
        while lines.isEmpty, Date() < deadline {
            try daemon.requireSuccess(daemon.vendctl("restock", "A4", "1"))
            if let line = reader.next(timeout: 0.5) { lines.append(line) }
        }
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "500"))
        while lines.count < 4, let line = reader.next(timeout: 5) { lines.append(line) }
        watch.interrupt()
        watch.waitUntilExit()
        let texts = lines.map { ProcessRun(status: 0, output: $0, errors: "").normalisedOutput }
        #expect(texts.first?.hasPrefix("<time>  slot A4 (cola): ") == true)
        #expect(texts.suffix(2) == ["<time>  coin of 500원 credited", "<time>  credit 0원 → 500원"])
    }
}

/// Lines from a pipe, with a timeout, for a process that keeps running.
struct LineReader {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next(timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard remaining > 0, poll(&descriptor, 1, remaining) > 0 else { return nil }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}
