/// Why a port could not be used. Each message names the port and what to do about it.
public enum LinkError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(port: String, reason: String)
    /// The device went away (USB adapter unplugged, socket closed by the peer).
    case disconnected(port: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let port, let reason): "cannot open \(port): \(reason)"
        case .disconnected(let port, let reason): "\(port) lost: \(reason)"
        }
    }
}

/// A bidirectional byte pipe to a device: a serial port, or a Unix socket bridged to one.
/// Non-blocking; a reader waits for `fileDescriptor` with `Waiter`. Used by one thread.
public protocol ByteStream: AnyObject {
    var name: String { get }
    var fileDescriptor: Int32 { get }
    /// The bytes waiting now; empty when none. Throws when the device has gone away.
    func readAvailable() throws(LinkError) -> [UInt8]
    /// Writes every byte (a ccTalk packet fits any driver buffer, so this does not wait long).
    func write(_ bytes: [UInt8]) throws(LinkError)
    /// Throws away received bytes nobody read.
    func discardInput()
    func close()
}

/// Where the acceptor is, as written in the configuration's `port`.
public enum PortAddress: Sendable, Equatable, CustomStringConvertible {
    case serial(path: String, baudRate: Int)
    case unixSocket(path: String)

    public static let unixPrefix = "unix:"

    public init(_ port: String, baudRate: Int) {
        if port.hasPrefix(Self.unixPrefix) {
            self = .unixSocket(path: String(port.dropFirst(Self.unixPrefix.count)))
        } else {
            self = .serial(path: port, baudRate: baudRate)
        }
    }

    public var description: String {
        switch self {
        case .serial(let path, let baud): "\(path) (\(baud) 8N1)"
        case .unixSocket(let path): "\(Self.unixPrefix)\(path)"
        }
    }

    public func open() throws(LinkError) -> ByteStream {
        switch self {
        case .serial(let path, let baudRate): try SerialPort.open(path: path, baudRate: baudRate)
        case .unixSocket(let path): try SocketStream.connect(path: path)
        }
    }
}
