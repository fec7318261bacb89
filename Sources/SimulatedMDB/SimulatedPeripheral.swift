import MDB

/// A peripheral as the bus sees it: it answers a block addressed to it, or stays silent.
public protocol SimulatedPeripheral: AnyObject {
    var address: MDBPeripheral { get }
    func respond(to block: MDBBlock) -> MDBAnswer
    /// The bus was held in break (§2.2): back to power-on state, JUST RESET pending.
    func busReset()
}

/// Peripherals on one bus, answering by address; nobody at an address is silence.
public final class SimulatedBus {
    public private(set) var peripherals: [SimulatedPeripheral]
    public private(set) var transactions: [MDBBlock] = []

    public init(_ peripherals: [SimulatedPeripheral]) { self.peripherals = peripherals }

    public func transact(_ block: MDBBlock) -> MDBAnswer {
        transactions.append(block)
        return peripherals.first { $0.address.rawValue == block.peripheral }?.respond(to: block) ?? .noAnswer
    }

    public func busReset() {
        for peripheral in peripherals { peripheral.busReset() }
    }

    /// How many times a command went out (the address byte, and the sub-command when given).
    public func count(_ addressByte: UInt8, sub: UInt8? = nil) -> Int {
        transactions.filter { $0.addressByte == addressByte && (sub == nil || $0.data.first == sub) }.count
    }
}

/// Activities waiting for the next POLL. The Qibixx interface ACKs the data at once, so what a
/// POLL answer held is gone from the device after it (at most 16 bytes per answer, §5.3).
struct ActivityQueue<Activity> {
    private(set) var items: [Activity] = []

    mutating func append(_ activity: Activity) { items.append(activity) }

    mutating func take(maxBytes: Int = 16, size: (Activity) -> Int) -> [Activity] {
        var taken: [Activity] = []
        var bytes = 0
        while let first = items.first, bytes + size(first) <= maxBytes {
            bytes += size(first)
            taken.append(items.removeFirst())
        }
        return taken
    }

    mutating func clear() { items.removeAll() }
}
