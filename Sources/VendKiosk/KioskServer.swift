import FoundationEssentials
import VendConfig
import VendControl
import VendDisplay
import VendHTTP
import VendPOSIX
import VendReports

#if canImport(Glibc)
    import Glibc
#endif

/// The kiosk: one page, its live state as server-sent events, the customer's taps, the pictures
/// and, with the service key on, the technician's restock and sales chart. Every request that
/// changes anything goes to vendd through the follower; the page itself decides nothing.
public struct KioskServer: Sendable {
    private let config: VenddConfig
    private let kiosk: DisplaySettings.Kiosk
    private let follower: MachineFollower
    private let views: HTTPEventBroadcast
    private let limits: HTTPServer.Limits

    /// What a kiosk takes: small bodies (a tap has none), a browser or two, and a hostile local
    /// program. libmicrohttpd has no eviction: a newcomer gets in only while there is room, so
    /// the room is what the unit's descriptors allow (1,024, less 64 for vendd's socket, the
    /// pictures, epoll and the journal), at 16 KiB of memory at most each. With 256, a wave of
    /// 300 hostile connections kept the page from a visitor for seconds (README, the figures).
    public static var limits: HTTPServer.Limits {
        var limits = HTTPServer.Limits()
        limits.maxBody = 1024
        limits.connections = 960
        limits.timeoutSeconds = 10
        limits.connectionMemory = 16 * 1024
        return limits
    }

    public init(config: VenddConfig, kiosk: DisplaySettings.Kiosk, follower: MachineFollower, limits: HTTPServer.Limits = KioskServer.limits) {
        self.config = config
        self.kiosk = kiosk
        self.follower = follower
        self.limits = limits
        // Pictures go through this server; a product without one (or whose file is missing) has none.
        let pictured = Set(config.productFaces.compactMap { id, face in face.picture.flatMap { Self.isReadable($0) ? id : nil } })
        let style = MachineView.Style.kiosk(config) { pictured.contains($0) ? "/pictures/\($0)" : nil }
        let views = HTTPEventBroadcast()
        self.views = views
        follower.observe { machine in
            // One SSE message: the view as JSON on one data line, sent only when it changed.
            guard let json = try? JSONEncoder().encode(MachineView(machine, style: style)) else { return }
            views.publish(HTTPEventBroadcast.message(data: String(decoding: json, as: UTF8.self)))
        }
    }

    /// Pictures named in the file that cannot be read: the page shows those products without one.
    public var missingPictures: [String] {
        config.productFaces.values.compactMap(\.picture).filter { !Self.isReadable($0) }.sorted()
    }

    /// Listens at the configured address and port and serves, each request on a thread of its
    /// own (a tap waits on vendd): `server.address` says where (the real port when 0 was asked for).
    public func start() throws(HTTPServer.Failure) -> HTTPServer {
        try HTTPServer(address: kiosk.address, port: kiosk.port, limits: limits, dispatch: .threadPerRequest, router: router())
    }

    func router() -> HTTPRouter {
        var router = HTTPRouter()
        let page = HTTPResponse(text: KioskPage.html(texts: DisplayTexts(config.display.language)), type: "text/html; charset=utf-8")
        let (follower, config, views) = (follower, config, views)
        router.get("/") { _, _ in .response(page) }
        router.get("/events") { _, _ in .events(views) }
        router.post("/select/:slot") { _, parameters in
            follower.select(parameters["slot"]!)
            return .response(HTTPResponse(status: 204))
        }
        router.post("/coin-return") { _, _ in
            follower.coinReturn()
            return .response(HTTPResponse(status: 204))
        }
        router.post("/restock/:slot") { _, parameters in
            // Only from the technician's screen: the service key must be on now.
            guard follower.current.status?.serviceKey == true else { return .response(.error(403, "the service key is off")) }
            switch follower.restock(parameters["slot"]!) {
            case .done(let message): return .response(HTTPResponse(text: message, type: "text/plain; charset=utf-8"))
            case .refused(let message): return .response(HTTPResponse(status: 409, text: message, type: "text/plain; charset=utf-8"))
            case nil: return .response(.error(503, "vendd did not answer"))
            }
        }
        router.get("/pictures/:product") { _, parameters in
            guard let path = config.productFaces[parameters["product"]!]?.picture, let data = Self.contents(of: path) else {
                return .response(.error(404))
            }
            return .response(
                HTTPResponse(status: 200, headers: [("Content-Type", Self.imageType(path)), ("Cache-Control", "max-age=300")], body: data))
        }
        router.get("/sales.svg") { _, _ in
            guard let sales = follower.current.sales else { return .response(.error(404)) }
            // The page draws the title and the legend (`MachineView.salesLegend`) in its own type.
            let chart = MachineView.salesChart(sales, texts: DisplayTexts(config.display.language))
            return .response(HTTPResponse(text: chart.svgWithoutLegend, type: "image/svg+xml"))
        }
        return router
    }

    static func imageType(_ path: String) -> String {
        switch path.split(separator: ".").last?.lowercased() {
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "webp": "image/webp"
        default: "image/jpeg"
        }
    }

    static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// A picture's bytes; nil when it cannot be read or is over 4 MiB (not a picture for a kiosk).
    static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let limit = 4 << 20
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = try? systemCall("read", path) { chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } }
            guard let count else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { return nil }
        }
    }
}
