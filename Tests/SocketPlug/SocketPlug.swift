import Foundation
import Synchronization
import VendPOSIX

/// The device end of a simulated serial link on a Unix socket: one host at a time, hosts that
/// disconnect and come back, and `unplug()` / `replug()` as a USB adapter's device node
/// disappears and returns. The simulators (ccTalk, MDB) say what a connected host is served.
public final class SocketPlug: Sendable {
    public let socketPath: String
    private struct Link {
        var listener: UnixSocket?
        var client: UnixSocket?
        var connections = 0
        var serve: (@Sendable (UnixSocket) -> Void)?
    }
    private let link = Mutex(Link())
    private let threadName: String
    private let report: @Sendable (String) -> Void

    public init(socketPath: String, threadName: String, report: @escaping @Sendable (String) -> Void) {
        self.socketPath = socketPath
        self.threadName = threadName
        self.report = report
    }

    /// Listens, and hands each host that connects to `serve` until it disconnects.
    public func plug(serving serve: @escaping @Sendable (UnixSocket) -> Void) throws {
        link.withLock { $0.serve = serve }
        try replug()
    }

    public var connections: Int { link.withLock { $0.connections } }
    public var isHostConnected: Bool { link.withLock { $0.client != nil } }
    public var isPlugged: Bool { link.withLock { $0.listener != nil } }

    /// The socket disappears and the host's connection drops. False if it was unplugged already.
    @discardableResult
    public func unplug() -> Bool {
        let (listener, client) = link.withLock { link in
            defer {
                link.listener = nil
                link.client = nil
            }
            return (link.listener, link.client)
        }
        guard listener != nil || client != nil else { return false }
        client?.shutDown()
        listener?.shutDown()
        unlink(socketPath)
        return true
    }

    /// Listens again (at start, and after `unplug`).
    public func replug() throws {
        let listener = try UnixSocket.listen(at: socketPath, mode: 0o600)
        link.withLock { $0.listener = listener }
        let thread = Thread { [self] in acceptHosts(on: listener) }
        thread.name = threadName
        thread.start()
        report("listening on \(socketPath)")
    }

    private func acceptHosts(on listener: UnixSocket) {
        while let client = listener.accept() {
            let serve = link.withLock { link -> (@Sendable (UnixSocket) -> Void)? in
                guard link.listener === listener else { return nil }
                link.client?.shutDown()
                link.client = client
                link.connections += 1
                return link.serve
            }
            guard let serve else {
                client.shutDown()
                return
            }
            report("host connected")
            serve(client)
            link.withLock { if $0.client === client { $0.client = nil } }
            report("host disconnected")
        }
    }
}
