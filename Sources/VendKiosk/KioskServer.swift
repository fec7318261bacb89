import Dispatch
import FoundationEssentials
import Hummingbird
import Synchronization
import VendConfig
import VendControl
import VendDisplay
import VendReports

/// The kiosk: one page, its live state as server-sent events, the customer's taps, the pictures
/// and, with the service key on, the technician's restock and sales chart. Every request that
/// changes anything goes to vendd through the follower; the page itself decides nothing.
public struct KioskServer: Sendable {
    private let config: VenddConfig
    private let kiosk: DisplaySettings.Kiosk
    private let follower: MachineFollower
    private let streams: ViewStreams

    public init(config: VenddConfig, kiosk: DisplaySettings.Kiosk, follower: MachineFollower) {
        self.config = config
        self.kiosk = kiosk
        self.follower = follower
        // Pictures go through this server; a product without one (or whose file is missing) has none.
        let pictured = Set(
            config.productFaces.compactMap { id, face in
                face.picture.flatMap { FileManager.default.isReadableFile(atPath: $0) ? id : nil }
            })
        streams = ViewStreams(style: .kiosk(config) { pictured.contains($0) ? "/pictures/\($0)" : nil })
        follower.observe { [streams] machine in streams.publish(machine) }
    }

    /// Pictures named in the file that cannot be read: the page shows those products without one.
    public var missingPictures: [String] {
        config.productFaces.values.compactMap(\.picture).filter { !FileManager.default.isReadableFile(atPath: $0) }.sorted()
    }

    /// Serves until the process ends; `onRunning` gets the address it listens at ("127.0.0.1:8080").
    public func run(onRunning: @escaping @Sendable (String) -> Void) async throws {
        let app = Application(
            router: router(),
            configuration: .init(address: .hostname(kiosk.address, port: kiosk.port), serverName: "vendd-display"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? kiosk.port
                onRunning(kiosk.address.contains(":") ? "[\(kiosk.address)]:\(port)" : "\(kiosk.address):\(port)")
            })
        try await app.run()
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let page = KioskPage.html(texts: DisplayTexts(config.display.language))
        router.get("/") { _, _ in
            Self.response(page, type: "text/html; charset=utf-8")
        }
        router.get("/events") { [streams] _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(asyncSequence: streams.subscribe()))
        }
        router.post("/select/:slot") { [follower] _, context in
            let slot = try context.parameters.require("slot")
            await Self.offThread { follower.select(slot) }
            return Response(status: .noContent)
        }
        router.post("/coin-return") { [follower] _, _ in
            await Self.offThread { follower.coinReturn() }
            return Response(status: .noContent)
        }
        router.post("/restock/:slot") { [follower] _, context in
            let slot = try context.parameters.require("slot")
            // Only from the technician's screen: the service key must be on now.
            guard follower.current.status?.serviceKey == true else { return Response(status: .forbidden) }
            let result = await Self.offThread { follower.restock(slot) }
            switch result {
            case .done(let message): return Self.response(message, type: "text/plain; charset=utf-8")
            case .refused(let message): return Self.response(message, type: "text/plain; charset=utf-8", status: .conflict)
            case nil: return Response(status: .serviceUnavailable)
            }
        }
        router.get("/pictures/:product") { [config] _, context in
            let product = try context.parameters.require("product")
            guard let path = config.productFaces[product]?.picture, let data = FileManager.default.contents(atPath: path) else {
                return Response(status: .notFound)
            }
            var headers = HTTPFields()
            headers[.contentType] = Self.imageType(path)
            headers[.cacheControl] = "max-age=300"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get("/sales.svg") { [follower, config] _, _ in
            guard let sales = follower.current.sales else { return Response(status: .notFound) }
            let chart = PieChart(
                title: "\(DisplayTexts(config.display.language).sales) — \(sales.machine)",
                slices: sales.products.map {
                    PieChart.Slice(label: $0.name, value: $0.sold.count, detail: "\($0.sold.count) · \($0.sold.amountText)")
                })
            return Self.response(chart.svg, type: "image/svg+xml")
        }
        return router
    }

    static func response(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func imageType(_ path: String) -> String {
        switch path.split(separator: ".").last?.lowercased() {
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "webp": "image/webp"
        default: "image/jpeg"
        }
    }

    /// The follower talks to vendd with blocking socket calls: they run on a dispatch thread, not
    /// on the server's event loop or the concurrency pool.
    static func offThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

/// Every open page's event stream: the view as JSON, once on connect and after every change.
final class ViewStreams: Sendable {
    private let style: MachineView.Style
    private let state = Mutex<(latest: ByteBuffer?, next: Int, streams: [Int: AsyncStream<ByteBuffer>.Continuation])>((nil, 0, [:]))

    init(style: MachineView.Style) {
        self.style = style
    }

    func publish(_ machine: FollowedMachine) {
        let view = MachineView(machine, style: style)
        guard let json = try? JSONEncoder().encode(view) else { return }
        // One SSE message: the JSON has no newlines, so one data line carries it.
        let event = ByteBuffer(string: "data: " + String(decoding: json, as: UTF8.self) + "\n\n")
        state.withLock { state in
            guard state.latest != event else { return }
            state.latest = event
            for stream in state.streams.values { stream.yield(event) }
        }
    }

    func subscribe() -> AsyncStream<ByteBuffer> {
        // A page that stops reading loses old views, never the latest.
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(4))
        let id = state.withLock { state in
            state.next += 1
            state.streams[state.next] = continuation
            if let latest = state.latest { continuation.yield(latest) }
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: id) }
        }
        return stream
    }
}
