import Synchronization
import Testing
import VendControl
import VendPOSIX
import VendingCore

@testable import VendDisplay

#if canImport(Glibc)
    import Glibc
#endif

/// The follower against a control socket that behaves as vendd's does: connections that say
/// nothing for a while are hung up, vendd goes away and comes back. What the customer sees must
/// follow vendd all the same, and never show a credit vendd does not hold.
@Suite struct FollowerConnectionTests {
    static func socketPath(_ name: String) -> String {
        "/tmp/vendd-display-test-\(getpid())-\(name).sock"
    }

    /// Waits up to `seconds` for `condition`; false when it never held.
    static func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.now + .milliseconds(Int64(seconds * 1000))
        while MonotonicClock.now < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// The issue: vendd hangs up a connection idle for 60 s; the follower's query connection was
    /// one, and the next coin's status refresh failed without a word, leaving the page on the
    /// old credit for good.
    @Test func aCoinAfterTheIdleTimeIsFollowed() throws {
        let path = Self.socketPath("idle")
        let vendd = try FakeVendd(path: path, status: MachineViewTests.status(credit: "0"), idleTimeout: .milliseconds(300))
        defer { vendd.stop() }
        let follower = MachineFollower(socketPath: path, currency: MachineViewTests.won)
        follower.start()
        #expect(Self.eventually { follower.current.status?.credit == "0" && vendd.watching == 1 })

        vendd.set(credit: "500")
        vendd.emit("coin")
        #expect(Self.eventually { follower.current.status?.credit == "500" }, "a coin before the idle time")

        usleep(700_000)  // past the idle time: vendd has hung up every connection but the watch
        vendd.set(credit: "1000")
        vendd.emit("coin")
        #expect(
            Self.eventually { follower.current.status?.credit == "1000" },
            "a coin after the idle time: the follower shows \(follower.current.status?.credit ?? "out of order")")
    }

    /// A time band begins: vendd sends no event, but its status said when; the follower asks
    /// again then, and the page shows the band's prices.
    @Test func aBandsStartIsFollowedWithoutAnEvent() throws {
        let path = Self.socketPath("band")
        var before = MachineViewTests.status(credit: "0")
        before.nextPriceChange = WallClock.milliseconds + 1_500
        let vendd = try FakeVendd(path: path, status: before, idleTimeout: .seconds(60))
        defer { vendd.stop() }
        let follower = MachineFollower(socketPath: path, currency: MachineViewTests.won)
        follower.start()
        #expect(Self.eventually { follower.current.status?.nextPriceChange != nil && vendd.watching == 1 })
        var during = PriceViewTests.status()
        during.nextPriceChange = WallClock.milliseconds + 3_600_000
        vendd.set(during)
        #expect(Self.eventually(5) { follower.current.status?.priceBand?.list == 2 }, "asked again when the band began")
        #expect(follower.current.status?.slots.first?.price == "1000")
    }

    final class Log: Sendable {
        private let lines = Mutex<[String]>([])
        func write(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
        func count(_ part: String) -> Int { all.filter { $0.contains(part) }.count }
    }

    /// vendd goes away: the page says out of order (never the last credit it had), the log says
    /// so once however long it lasts, and the follower finds vendd again by itself.
    @Test func aLostVenddIsLoggedOnceShownOutOfOrderAndFoundAgain() throws {
        let path = Self.socketPath("lost")
        let log = Log()
        var vendd = try FakeVendd(path: path, status: MachineViewTests.status(credit: "1500"), idleTimeout: .seconds(60))
        let follower = MachineFollower(socketPath: path, currency: MachineViewTests.won, log: log.write)
        follower.start()
        #expect(Self.eventually { follower.current.status?.credit == "1500" })
        // The log line follows the status it is about.
        #expect(Self.eventually { log.all == ["following vendd at \(path)"] }, "\(log.all)")

        vendd.stop()
        #expect(Self.eventually { follower.current.status == nil }, "out of order once vendd is gone")
        usleep(1_200_000)  // several attempts to reconnect
        #expect(follower.current.status == nil)
        #expect(log.count("out of order") == 1, "\(log.all)")
        #expect(log.all.last?.contains("tries again every 300 ms") == true, "\(log.all)")

        vendd = try FakeVendd(path: path, status: MachineViewTests.status(credit: "700"), idleTimeout: .seconds(60))
        defer { vendd.stop() }
        #expect(Self.eventually { follower.current.status?.credit == "700" }, "back by itself, with vendd's credit")
        #expect(Self.eventually { log.all.last == "vendd answers at \(path) again: the display follows it" }, "\(log.all)")
    }

    /// A query whose connection vendd hangs up is asked again on a new one (and said in the log),
    /// so the coin it was about still shows.
    @Test func aFailedQueryIsAskedAgainOnAFreshConnection() throws {
        let path = Self.socketPath("retry")
        let log = Log()
        let vendd = try FakeVendd(path: path, status: MachineViewTests.status(credit: "0"), idleTimeout: .seconds(60))
        defer { vendd.stop() }
        let follower = MachineFollower(socketPath: path, currency: MachineViewTests.won, log: log.write)
        follower.start()
        #expect(Self.eventually { follower.current.status?.credit == "0" && vendd.watching == 1 })
        vendd.dropNextQueries(1)
        vendd.set(credit: "500")
        vendd.emit("coin")
        #expect(Self.eventually { follower.current.status?.credit == "500" })
        #expect(log.count("asking again on a new connection") == 1, "\(log.all)")
        #expect(log.count("out of order") == 0, "\(log.all)")
        #expect(vendd.watching == 1, "the event stream was kept")
    }
}
