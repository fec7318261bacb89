import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// A Unix stream socket standing in for a serial line: socat or ser2net bridges, and the ccTalk
/// simulator in tests. vendd is the connecting side.
public final class SocketStream: ByteStream {
    public let name: String
    private var socket: UnixSocket?
    public let fileDescriptor: Int32

    public init(name: String, socket: UnixSocket) {
        self.name = name
        self.socket = socket
        fileDescriptor = socket.descriptor
        _ = fcntl(fileDescriptor, F_SETFL, fcntl(fileDescriptor, F_GETFL) | O_NONBLOCK)
    }

    public static func connect(path: String) throws(LinkError) -> SocketStream {
        let name = PortAddress.unixPrefix + path
        do {
            return SocketStream(name: name, socket: try UnixSocket.connect(to: path))
        } catch {
            let hint = error.errno == ENOENT || error.errno == ECONNREFUSED ? " (is the bridge or simulator running?)" : ""
            throw .cannotOpen(port: name, reason: "\(error)\(hint)")
        }
    }

    public func readAvailable() throws(LinkError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count: Int
        do {
            count = try systemCall("recv") { recv(fileDescriptor, &buffer, buffer.count, 0) }
        } catch  where error.errno == EAGAIN {
            return []
        } catch {
            throw .disconnected(port: name, reason: error.reason)
        }
        guard count > 0 else { throw .disconnected(port: name, reason: "closed by the other end") }
        return Array(buffer[0..<count])
    }

    public func write(_ bytes: [UInt8]) throws(LinkError) {
        var offset = 0
        var waits = 0
        while offset < bytes.count {
            do {
                offset += try systemCall("send") {
                    bytes.withUnsafeBytes { send(fileDescriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
                }
            } catch  where error.errno == EAGAIN {
                // The peer is not reading: after 1 s it counts as gone, as a stuck tty would.
                waits += 1
                guard waits <= 10 else { throw .disconnected(port: name, reason: "the other end stopped reading") }
                var ready = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, 100)
            } catch {
                throw .disconnected(port: name, reason: error.reason)
            }
        }
    }

    public func discardInput() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while recv(fileDescriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    public func close() {
        socket?.shutDown()
        socket = nil
    }
}
