import MDB
import Synchronization
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// A Qibixx MDB master interface with peripherals behind it, as the line API (`M,1`,
/// `R,RESET`, `R,xx,yyyy`) of docs.qibixx.com describes it. It answers one line at a time;
/// `serve` runs that over a connected socket, so the driver on the other end is vendd's real
/// one. The test simulator (`mdb-sim`) puts it behind a socket file; `vendd --simulate` behind
/// an in-process socket pair.
public final class SimulatedQibixxInterface: Sendable {
    /// The devices, used under this lock by the serving thread and by whoever drives them (and
    /// waits for them).
    private let state: Watched<Devices>

    public struct Devices: @unchecked Sendable {
        // @unchecked: the classes inside are only touched under the interface's lock.
        /// The changer and the validator exist even when absent from the bus (`present`), so a
        /// test can look at them either way.
        public let changer: SimulatedChanger
        public let bills: SimulatedBillValidator
        /// The card readers present, #1 (10h) first.
        public let readers: [SimulatedCashlessReader]
        public let bus: SimulatedBus
        public var masterMode = false
        public var lines = 0
        /// Bus resets (`R,RESET`) the host sent.
        public var busResets = 0

        public func reader(_ address: MDBPeripheral) -> SimulatedCashlessReader? { readers.first { $0.address == address } }
    }

    public init(
        changer: SimulatedChanger = SimulatedChanger(), bills: SimulatedBillValidator = SimulatedBillValidator(),
        readers: [SimulatedCashlessReader] = [], present: (changer: Bool, bills: Bool) = (true, true)
    ) {
        var peripherals: [SimulatedPeripheral] = []
        if present.changer { peripherals.append(changer) }
        if present.bills { peripherals.append(bills) }
        peripherals += readers as [SimulatedPeripheral]
        state = Watched(Devices(changer: changer, bills: bills, readers: readers, bus: SimulatedBus(peripherals)))
    }

    /// Does something to the devices under the lock (insert a coin, set a fault…).
    @discardableResult
    public func with<T>(_ body: (inout Devices) -> T) -> T { state.withValue(body) }

    /// Waits (woken by every line answered and every change made) until `satisfied` holds for
    /// the devices; false if it still does not at `deadline`.
    public func wait(until satisfied: (Devices) -> Bool, deadline: ContinuousClock.Instant) -> Bool {
        state.wait(until: satisfied, deadline: deadline)
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

    /// Answers each line the host sends on `host` until it hangs up; `afterEachLine` sees the
    /// devices after each answer, under the lock (to keep what a real device would remember).
    public func serve(_ host: UnixSocket, afterEachLine: (Devices) -> Void = { _ in }) {
        var splitter = LineSplitter()
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let count = read(host.descriptor, &buffer, buffer.count)
            guard count > 0 else { return }
            for line in splitter.receive(Array(buffer[0..<count])) {
                let answer = Array((respond(to: line) + "\r\n").utf8)
                with { afterEachLine($0) }
                let sent = answer.withUnsafeBytes { send(host.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent == answer.count else { return }
            }
        }
    }
}
