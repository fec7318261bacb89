import Foundation
import MDB
import SocketPlug
import Synchronization
import VendPOSIX

/// A Qibixx MDB master interface with a changer, a bill validator and card readers behind it, on a Unix
/// socket: the line API (`M,1`, `R,RESET`, `R,xx,yyyy`) as docs.qibixx.com describes it. One
/// host at a time; `unplug()` removes the socket as a pulled USB cable removes /dev/ttyACM0.
public final class MDBSimulator: Sendable {
    public let socketPath: String
    /// The devices, used under this lock by the socket thread and by the test or CLI.
    private let state: Mutex<Devices>
    private let plug: SocketPlug
    private let report: @Sendable (String) -> Void

    public struct Devices: @unchecked Sendable {
        // @unchecked: the classes inside are only touched under the simulator's lock.
        public let changer: SimulatedChanger
        public let bills: SimulatedBillValidator
        /// The card readers present, #1 (10h) first.
        public let readers: [SimulatedCashlessReader]
        public let bus: SimulatedBus
        public var masterMode = false
        public var lines = 0
        /// Bus resets (`R,RESET`) the host sent.
        public var busResets = 0
    }

    public init(
        socketPath: String, changer: Bool = true, billValidator: Bool = true, readers: [SimulatedCashlessReader] = [],
        report: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.socketPath = socketPath
        self.report = report
        let changerDevice = SimulatedChanger(), billDevice = SimulatedBillValidator()
        var present: [SimulatedPeripheral] = []
        if changer { present.append(changerDevice) }
        if billValidator { present.append(billDevice) }
        present += readers as [SimulatedPeripheral]
        state = Mutex(Devices(changer: changerDevice, bills: billDevice, readers: readers, bus: SimulatedBus(present)))
        plug = SocketPlug(socketPath: socketPath, threadName: "mdb-sim", report: report)
        try plug.plug { [weak self] client in self?.serve(client) }
    }

    deinit { unplug() }

    /// Does something to the devices under the lock (insert a coin, set a fault…).
    @discardableResult
    public func with<T>(_ body: (inout Devices) -> T) -> T { state.withLock { body(&$0) } }

    public var connections: Int { plug.connections }
    public var isHostConnected: Bool { plug.isHostConnected }

    /// Waits until `condition` holds; false on timeout.
    public func wait(timeout: Duration = .seconds(10), until condition: (inout Devices) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if with(condition) { return true }
            usleep(10_000)
        }
        return with(condition)
    }

    public func unplug() {
        guard plug.unplug() else { return }
        // A replugged interface boots again: master mode is volatile (QBX-MM).
        with { $0.masterMode = false }
        report("unplugged")
    }

    public func replug() throws { try plug.replug() }

    private func serve(_ client: UnixSocket) {
        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let count = read(client.descriptor, &buffer, buffer.count)
            guard count > 0 else { return }
            for line in splitter.receive(Array(buffer[0..<count])) {
                let answer = respond(to: line)
                _ = Array((answer + "\r\n").utf8).withUnsafeBytes {
                    Foundation.send(client.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
            }
        }
    }

    /// The interface's answer to one line.
    public func respond(to line: String) -> String {
        with { devices -> String in
            devices.lines += 1
            switch QibixxCommand.parse(line) {
            case .masterMode(let on)?:
                devices.masterMode = on
                return QibixxReply.masterMode(accepted: true).line
            case .busReset?:
                devices.busResets += 1
                devices.bus.busReset()
                return QibixxReply.peripheral(.ack).line
            case .transact(let block)?:
                // Outside master mode the interface does not drive the bus.
                guard devices.masterMode else { return QibixxReply.peripheral(.noAnswer).line }
                return QibixxReply.peripheral(devices.bus.transact(block)).line
            case nil:
                return "e,unknown command"
            }
        }
    }
}
