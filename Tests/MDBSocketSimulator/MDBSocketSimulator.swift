import Foundation
import MDB
import SimulatedMDB
import SocketPlug

/// The simulated MDB devices of SimulatedMDB (`SimulatedQibixxInterface`: a Qibixx MDB master
/// interface with a changer, a bill validator and card readers behind it) on a Unix socket file,
/// for the tests and `mdb-sim`. One host at a time; `unplug()` removes the socket as a pulled USB
/// cable removes /dev/ttyACM0.
public final class MDBSocketSimulator: Sendable {
    public let socketPath: String
    public let interface: SimulatedQibixxInterface
    private let plug: SocketPlug
    private let report: @Sendable (String) -> Void

    public typealias Devices = SimulatedQibixxInterface.Devices

    public init(
        socketPath: String, changer: Bool = true, billValidator: Bool = true, readers: [SimulatedCashlessReader] = [],
        report: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.socketPath = socketPath
        self.report = report
        let interface = SimulatedQibixxInterface(readers: readers, present: (changer, billValidator))
        self.interface = interface
        plug = SocketPlug(socketPath: socketPath, threadName: "mdb-sim", report: report)
        try plug.plug { client in interface.serve(client) }
    }

    deinit { unplug() }

    /// Does something to the devices under the lock (insert a coin, set a fault…).
    @discardableResult
    public func with<T>(_ body: (inout Devices) -> T) -> T { interface.with(body) }

    public var connections: Int { plug.connections }
    public var isHostConnected: Bool { plug.isHostConnected }

    /// Waits (woken by every line answered and every change made, never polling) until
    /// `condition` holds; false on timeout.
    public func wait(timeout: Duration = .seconds(10), until condition: (Devices) -> Bool) -> Bool {
        interface.wait(until: condition, deadline: .now + timeout)
    }

    public func unplug() {
        guard plug.unplug() else { return }
        // A replugged interface boots again: master mode is volatile (QBX-MM).
        with { $0.masterMode = false }
        report("unplugged")
    }

    public func replug() throws { try plug.replug() }

    /// The interface's answer to one line.
    public func respond(to line: String) -> String { interface.respond(to: line) }
}
