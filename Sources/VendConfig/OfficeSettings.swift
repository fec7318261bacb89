import VendYAML
import VendingCore

/// vendstore's `office:` section (docs/office.md): where the back office listens, how it is
/// reached, and how amounts are shown. Without the section vendstore serves no back office.
public struct OfficeSettings: Sendable, Equatable {
    /// An IPv4 or IPv6 literal (no brackets).
    public let address: String
    public let port: Int
    /// A TLS reverse proxy on this host forwards to the office: cookies are marked `Secure`, and
    /// the client address is the proxy's `X-Forwarded-For` when the peer is loopback.
    public let tlsProxy: Bool
    /// The operator accepted plain HTTP on an address beyond loopback (logged at every start).
    public let plainHTTPBeyondLoopback: Bool
    public let sessionHours: Int
    /// How amounts are shown per currency code; others as "1,200 KRW".
    public let currencies: [String: MoneyFormat]
    /// A machine online with this many events or more waiting in its outbox has an alert.
    public let outboxAlertEvents: Int
    /// A machine with a DEX port whose audit no handheld read for this many days has an alert.
    public let dexAlertDays: Int

    public init(
        address: String = "127.0.0.1", port: Int = 8090, tlsProxy: Bool = false, plainHTTPBeyondLoopback: Bool = false, sessionHours: Int = 12,
        currencies: [String: MoneyFormat] = [:], outboxAlertEvents: Int = 100, dexAlertDays: Int = 14
    ) {
        self.address = address
        self.port = port
        self.tlsProxy = tlsProxy
        self.plainHTTPBeyondLoopback = plainHTTPBeyondLoopback
        self.sessionHours = sessionHours
        self.currencies = currencies
        self.outboxAlertEvents = outboxAlertEvents
        self.dexAlertDays = dexAlertDays
    }

    /// 127.0.0.0/8 and ::1: only this host reaches it.
    public var isLoopback: Bool { address == "::1" || address.hasPrefix("127.") }
}

extension ConfigParser {
    func parseOffice(_ section: MappingReader) -> OfficeSettings? {
        let listen = section.string("listen", required: false) ?? "127.0.0.1:8090"
        let tlsProxy = section.bool("tls_proxy", default: false)
        let plain = section.bool("plain_http_beyond_loopback", default: false)
        let sessionHours = section.int("session_hours", in: 1...720, default: 12)
        let currencies = section.list("currencies", required: false).map { parseOfficeCurrencies($0, path: section.path.key("currencies")) }
        let outboxAlert = section.int("outbox_alert_events", in: 1...1_000_000, default: 100)
        let dexAlert = section.int("dex_alert_days", in: 1...366, default: 14)
        section.finish()

        let endpoint = Self.listenAddress(listen)
        if endpoint == nil {
            sink.report(
                "'\(listen)' is not an address and port: write 127.0.0.1:8090, [::1]:8090 or 0.0.0.0:8090", at: section.value("listen"),
                path: section.path.key("listen"))
        }
        if let endpoint, let plain, !plain, !OfficeSettings(address: endpoint.address).isLoopback {
            sink.report(
                "\(listen) is beyond loopback and the office speaks plain HTTP: put a TLS reverse proxy in front and listen on 127.0.0.1 (docs/office.md), or say 'plain_http_beyond_loopback: true' to accept passwords and cookies in clear on that network",
                at: section.value("listen"), path: section.path.key("listen"))
        }
        guard sink.diagnostics.isEmpty, let endpoint, let tlsProxy, let plain, let sessionHours, let outboxAlert, let dexAlert else { return nil }
        return OfficeSettings(
            address: endpoint.address, port: endpoint.port, tlsProxy: tlsProxy, plainHTTPBeyondLoopback: plain, sessionHours: sessionHours,
            currencies: currencies ?? [:], outboxAlertEvents: outboxAlert, dexAlertDays: dexAlert)
    }

    /// `- code: KRW` with `format` and the separators, as vendd's `currency:` section spells them.
    private func parseOfficeCurrencies(_ nodes: [Node], path listPath: ConfigPath) -> [String: MoneyFormat] {
        var formats: [String: MoneyFormat] = [:]
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "code") } ?? "#\(index + 1)"
            guard let section = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let code = section.string("code")
            let template = section.string("format")
            let grouping = section.string("grouping_separator", required: false) ?? ","
            let decimal = section.string("decimal_separator", required: false) ?? "."
            section.finish()
            if let code, !ISO4217.codes.contains(code) {
                sink.report(
                    "'\(code)' is not an ISO 4217 currency code (KRW, EUR, USD…: the code the machines send)", at: section.value("code"),
                    path: section.path.key("code"))
            }
            if let template, MoneyFormat(template: template) == nil {
                sink.report(
                    "'\(template)' must contain {amount} exactly once, e.g. \"{amount}원\" or \"€{amount}\"", at: section.value("format"),
                    path: section.path.key("format"))
            }
            if decimal.isEmpty || decimal == grouping {
                sink.report(
                    "the decimal separator must be set and differ from the grouping separator",
                    at: section.value("decimal_separator") ?? section.node, path: section.path.key("decimal_separator"))
            }
            if let code, formats[code] != nil {
                sink.report("\(code) is listed twice: list each currency once", at: section.value("code"), path: section.path.key("code"))
            }
            if let code, let template, let format = MoneyFormat(template: template, groupingSeparator: grouping, decimalSeparator: decimal) {
                formats[code] = format
            }
        }
        return formats
    }

    /// `host:port` with an IPv4 literal or `[v6]:port`; nil when it is not one.
    static func listenAddress(_ text: String) -> (address: String, port: Int)? {
        let address: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            address = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
            guard !address.isEmpty, address.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            address = parts[0]
            port = parts[1]
            let octets = address.split(separator: ".", omittingEmptySubsequences: false)
            guard octets.count == 4, octets.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCIIDigit) && Int($0)! <= 255 })
            else { return nil }
        }
        guard let number = Int(port), (1...65_535).contains(number) else { return nil }
        return (String(address), number)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
