import Foundation
import Glibc
import VendPOSIX

/// A datagram socket bound in a temporary directory, standing in for journald or systemd
/// (`$NOTIFY_SOCKET`).
public final class DatagramReceiver {
    public let path: String
    private let descriptor: Int32

    public init(in directory: TemporaryDirectory, name: String) throws {
        path = directory.path + "/" + name
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        let bound = try UnixSocketAddress(path: path).withSocketAddress { bind(descriptor, $0, $1) }
        guard bound == 0 else { throw TestSupportFailure("bind \(path): errno \(errno)") }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// The next datagram, waiting at most 2 s for it.
    public func receive() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw TestSupportFailure("nothing received on \(path)") }
        return Array(buffer[..<count])
    }

    /// Every datagram already waiting, as text, without waiting for more.
    public func waiting() -> [String] {
        var received: [String] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count >= 0 else { return received }
            received.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
    }

    /// How many datagrams saying exactly `text` arrive within `duration` (others are dropped).
    public func count(_ text: String, within duration: Duration) -> Int {
        let deadline = ContinuousClock.now + duration
        var count = 0
        repeat {
            usleep(50_000)
            count += waiting().filter { $0 == text }.count
        } while ContinuousClock.now < deadline
        return count
    }
}

/// A test rig that could not be set up (a socket, a file).
public struct TestSupportFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
