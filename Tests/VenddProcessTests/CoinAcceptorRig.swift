import CcTalkSimulator
import Foundation
import VendControl
import VenddTestSupport

/// The real vendd against the ccTalk simulator on a Unix socket: the sample configuration with
/// `coin_acceptor.port: unix:…`, so the real ccTalk host runs while the GPIO side is simulated.
/// Sample channels: 1 = 10 (disabled), 2 = 50, 3 = 100, 4 = 500 won.
final class CoinAcceptorRig: @unchecked Sendable {
    // @unchecked: used from one test at a time.
    let socketDirectory: TemporaryDirectory
    var socketPath: String { socketDirectory.path + "/acceptor.sock" }
    let simulator: CcTalkSimulator
    let daemon: DaemonHarness

    init(
        settings: DeviceSettings = DeviceSettings(), simulatorEcho: Bool = false,
        editCcTalk: @escaping (String) -> String = { $0 }
    ) throws {
        socketDirectory = try TemporaryDirectory()
        let socketPath = socketDirectory.path + "/acceptor.sock"
        simulator = try CcTalkSimulator(socketPath: socketPath, settings: settings, echo: simulatorEcho)
        daemon = try DaemonHarness { sample in
            editCcTalk(
                sample.replacingOccurrences(
                    of: "port: /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A10KQ1XZ-if00-port0",
                    with: "port: unix:\(socketPath)"))
        }
    }

    /// vendd running, every slot stocked, and the acceptor enabled by it.
    func startSelling() throws {
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        try waitUntilAccepting()
    }

    func waitUntilAccepting() throws {
        guard simulator.wait(until: { $0.isAccepting }) else {
            throw HarnessError("vendd never enabled the acceptor; simulator: \(simulator.status); log:\n\(daemon.log)")
        }
    }

    /// Inserts coins, each of which the acceptor must take.
    func insert(_ positions: [Int]) throws {
        for position in positions {
            let outcome = simulator.insert(position)
            guard outcome == .accepted else { throw HarnessError("coin \(position) not accepted: \(outcome)") }
        }
    }

    /// Waits until coins worth `total` are in the books, then checks nothing more arrives.
    @discardableResult
    func expectCoinsIn(_ total: Int, timeout: TimeInterval = 10) throws -> StatusReport {
        _ = try daemon.waitUntil("coins in = \(total)", timeout: timeout) { $0.books.coinsIn == "\(total)" }
        // Two more polls: nothing may be credited twice.
        usleep(450_000)
        let status = try daemon.status()
        guard status.books.coinsIn == "\(total)" else {
            throw HarnessError("coins in went on to \(status.books.coinsIn) (expected \(total)); log:\n\(daemon.allLogs)")
        }
        return status
    }

    func waitForLog(_ text: String, count: Int = 1, timeout: TimeInterval = 10) throws {
        try daemon.waitForLog(text, count: count, timeout: timeout)
    }

    func tearDown() {
        daemon.tearDown()
        simulator.unplug()
        socketDirectory.remove()
    }
}
