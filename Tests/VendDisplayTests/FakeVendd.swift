import FoundationEssentials
import Synchronization
import VendControl
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// A control socket that answers as vendd does, as far as the display asks: `status`, `history`,
/// `sales` and `watch`. Like vendd's control server it hangs up a connection that has sent
/// nothing for `idleTimeout` (vendd: 60 s), except a `watch` stream. Tests change the machine
/// with `set(credit:)` and push events with `emit`.
final class FakeVendd: Sendable {
    let path: String
    private let listener: UnixSocket
    private let idleTimeout: Duration
    private let machine: Mutex<StatusReport>
    private let watchers = Mutex<[UnixSocket]>([])
    private let clients = Mutex<[UnixSocket]>([])
    /// How many query connections to hang up, unanswered, at their next request.
    private let dropping = Mutex(0)
    /// Every connection accepted so far.
    private let accepted = Atomic(0)

    init(path: String, status: StatusReport, idleTimeout: Duration) throws {
        self.path = path
        self.idleTimeout = idleTimeout
        machine = Mutex(status)
        listener = try UnixSocket.listen(at: path, mode: 0o600)
        PosixThread.start(name: "fake-vendd") { [self] in
            while let client = listener.accept() {
                accepted.add(1, ordering: .relaxed)
                clients.withLock { $0.append(client) }
                PosixThread.start(name: "fake-vendd-c") { [self] in serve(client) }
            }
        }
    }

    var connections: Int { accepted.load(ordering: .relaxed) }
    var watching: Int { watchers.withLock { $0.count } }

    func set(credit: String) {
        machine.withLock { status in
            status = MachineViewTests.status(credit: credit, slots: status.slots)
        }
    }

    /// The machine changes without an event (a time band begins).
    func set(_ status: StatusReport) {
        machine.withLock { $0 = status }
    }

    /// The next `count` queries find their connection hung up without an answer (as a vendd
    /// that is full or going away does).
    func dropNextQueries(_ count: Int) {
        dropping.withLock { $0 = count }
    }

    func emit(_ kind: String, _ text: String = "") {
        let line = String(decoding: try! JSONEncoder().encode(EventLine(at: 0, kind: kind, text: text)), as: UTF8.self) + "\n"
        watchers.withLock { watchers in
            watchers = watchers.filter { (try? $0.write(line)) != nil }
        }
    }

    /// vendd stops: every connection hung up, nobody listens any more.
    func stop() {
        listener.shutDown()
        unlink(path)
        for client in clients.withLock({ $0 }) { client.shutDown() }
    }

    private func serve(_ client: UnixSocket) {
        client.setTimeout(idleTimeout)
        while true {
            // A read that times out is the idle hang-up.
            guard let line = try? client.readLine(limit: 1 << 20), let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
            else {
                client.shutDown()
                return
            }
            let drop = dropping.withLock { count in
                defer { count = max(0, count - 1) }
                return count > 0
            }
            if drop, request.command != .watch {
                client.shutDown()
                return
            }
            let response: ControlResponse
            switch request.command {
            case .status: response = .answer(.status(machine.withLock { $0 }))
            case .history: response = .answer(.history(HistoryReport(since: nil, historyLimit: 100, sales: [])))
            case .watch: response = .success()
            default: response = .failure(ControlError(.badRequest, "the fake vendd does not do that"))
            }
            guard (try? client.write(String(decoding: try! JSONEncoder().encode(response), as: UTF8.self) + "\n")) != nil else { return }
            if request.command == .watch {
                client.setTimeout(nil)
                watchers.withLock { $0.append(client) }
                return
            }
        }
    }
}
