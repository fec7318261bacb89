import VendSettings
import VendText
import VendYAML
import VendingCore

/// `pricing:` as read, before the products and slots whose `prices` name its lists.
struct PricingSection {
    var lists: [PriceListNumber: String] = [:]
    var bands: [TimeBand] = []
    var cardLists: [CardReader: [UInt8: PriceListNumber]] = [:]
    /// Where each reader's card lists were given, for the check that the reader exists.
    var cardListNodes: [CardReader: Node] = [:]
    var timeZone: TimeZoneRules = .utc
}

extension ConfigParser {
    static let zoneDirectory = "/usr/share/zoneinfo"
    static let systemZoneFile = "/etc/localtime"

    func parsePricing(_ section: MappingReader) -> PricingSection {
        var pricing = PricingSection()
        let listNodes = section.list("lists", required: false) ?? []
        let bandNodes = section.list("bands", required: false) ?? []
        let cardNodes = section.list("card_lists", required: false) ?? []
        let zoneName = section.string("time_zone", required: false)
        section.finish()
        pricing.lists = priceLists(listNodes, path: section.path.key("lists"))
        let known = [PriceListNumber.standardList] + pricing.lists.keys.sorted()
        pricing.bands = timeBands(bandNodes, known: known, path: section.path.key("bands"))
        (pricing.cardLists, pricing.cardListNodes) = cardLists(cardNodes, known: known, path: section.path.key("card_lists"))
        if zoneName != nil || !pricing.bands.isEmpty {
            pricing.timeZone = timeZone(zoneName, at: section.value("time_zone") ?? section.node, path: section.path.key("time_zone")) ?? .utc
        }
        return pricing
    }

    /// `- { list: 2, name: "happy hour" }`: the lists besides list 1, each numbered once.
    private func priceLists(_ nodes: [Node], path: ConfigPath) -> [PriceListNumber: String] {
        var lists: [PriceListNumber: String] = [:]
        var seen: [PriceListNumber: Node] = [:]
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "list") } ?? "#\(index + 1)"
            guard let entry = MappingReader(node, path: path.element(label), sink: sink) else { continue }
            let number = entry.int("list", in: 2...PriceListNumber.listRange.upperBound)
            let name = entry.string("name")
            entry.finish()
            if name?.isEmpty == true {
                sink.report("give the list a name people read in reports", at: entry.value("name"), path: entry.path.key("name"))
            }
            guard let number, let name, !name.isEmpty else { continue }
            if let first = seen[number] {
                sink.report(
                    "list \(number) is already defined at line \(first.mark.line); number each list once",
                    at: entry.value("list"), path: entry.path.key("list"))
                continue
            }
            seen[number] = node
            lists[number] = name
        }
        return lists
    }

    /// A list a band, a card or a price names: 1 or one of `pricing.lists`.
    private func listNumber(_ entry: MappingReader, known: [PriceListNumber], required: Bool) -> PriceListNumber? {
        guard entry.has("list") || required else { return .standardList }
        guard let number = entry.int("list", in: PriceListNumber.listRange) else { return nil }
        guard known.contains(number) else {
            sink.report(
                "unknown price list \(number) (lists: \(known.map(String.init).joined(separator: ", ")); define it under pricing.lists)",
                at: entry.value("list"), path: entry.path.key("list"))
            return nil
        }
        return number
    }

    /// `- { list: 2, days: [mon, fri], from: "15:00", to: "17:00" }`; no minute of the week in two.
    private func timeBands(_ nodes: [Node], known: [PriceListNumber], path: ConfigPath) -> [TimeBand] {
        var bands: [(band: TimeBand, node: Node, label: String)] = []
        for (index, node) in nodes.enumerated() {
            let label = "#\(index + 1)"
            guard let entry = MappingReader(node, path: path.element(label), sink: sink) else { continue }
            let list = listNumber(entry, known: known, required: true)
            let days = entry.list("days", required: false).map { weekdays($0, path: entry.path.key("days")) } ?? Set(Weekday.allCases)
            let from = entry.string("from").flatMap { clock($0, at: entry.value("from"), path: entry.path.key("from"), allowsMidnightEnd: false) }
            let to = entry.string("to").flatMap { clock($0, at: entry.value("to"), path: entry.path.key("to"), allowsMidnightEnd: true) }
            entry.finish()
            if list == .standardList {
                sink.report(
                    "list 1 is the normal prices, in force outside every band: a band names another list",
                    at: entry.value("list"), path: entry.path.key("list"))
                continue
            }
            if let from, let to, from == to {
                sink.report(
                    "the band is empty: from and to are both \(LocalTime.clock(from)) (a band across midnight ends on the next day)",
                    at: entry.value("to"), path: entry.path.key("to"))
                continue
            }
            guard let list, let days, !days.isEmpty, let from, let to else { continue }
            let band = TimeBand(list: list, days: days, from: from, to: to)
            if let (other, minute) = bands.lazy.compactMap({ earlier in Self.firstShared(earlier.band, band).map { (earlier, $0) } }).first {
                sink.report(
                    "overlaps band \(other.label) (line \(other.node.mark.line), \(other.band)) at \(Self.weekMinute(minute)); a minute can be in one band only",
                    at: node, path: entry.path)
                continue
            }
            bands.append((band, node, label))
        }
        return bands.map(\.band)
    }

    /// The first minute of the week both bands cover, if any.
    static func firstShared(_ first: TimeBand, _ second: TimeBand) -> Int? {
        var shared: Int?
        for one in first.weekMinutes {
            for other in second.weekMinutes where one.overlaps(other) {
                let start = max(one.lowerBound, other.lowerBound)
                shared = min(shared ?? start, start)
            }
        }
        return shared
    }

    static func weekMinute(_ minute: Int) -> String {
        "\(Weekday(rawValue: minute / 1_440)!) \(LocalTime.clock(minute % 1_440))"
    }

    private func weekdays(_ nodes: [Node], path: ConfigPath) -> Set<Weekday>? {
        var days: Set<Weekday> = []
        let names = Weekday.allCases.map(\.description)
        var valid = true
        for node in nodes {
            guard let text = ScalarRules.text(node, path: path, sink: sink) else {
                valid = false
                continue
            }
            guard let index = names.firstIndex(of: text), let day = Weekday(rawValue: index) else {
                var message = "'\(text)' is not a day (write \(names.joined(separator: ", ")))"
                if let suggestion = closestMatch(to: text, among: names) { message += "; did you mean '\(suggestion)'?" }
                sink.report(message, at: node, path: path)
                valid = false
                continue
            }
            if !days.insert(day).inserted {
                sink.report("'\(text)' is listed twice", at: node, path: path)
                valid = false
            }
        }
        if valid, days.isEmpty, let first = nodes.first {
            sink.report("name at least one day, or leave days out for every day", at: first, path: path)
        }
        return valid && !days.isEmpty ? days : nil
    }

    /// `HH:MM`, 00:00 to 23:59; `24:00` too for the end of a band.
    private func clock(_ text: String, at node: Node?, path: ConfigPath, allowsMidnightEnd: Bool) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let hours = Int(parts[0]), let minutes = Int(parts[1]), minutes < 60,
            hours < 24 || (allowsMidnightEnd && hours == 24 && minutes == 0)
        {
            return hours * 60 + minutes
        }
        sink.report(
            "'\(text)' is not a time of day (write HH:MM in 24 hours, quoted: \"07:30\"\(allowsMidnightEnd ? ", up to \"24:00\"" : ""))",
            at: node, path: path)
        return nil
    }

    /// `- { reader: 1, card: 0, list: 1 }`: the map from a card's price list to the machine's
    /// (EVA-DTS 6.1.1 §5.1.7); a card list not given is list 1.
    private func cardLists(
        _ nodes: [Node], known: [PriceListNumber], path: ConfigPath
    ) -> ([CardReader: [UInt8: PriceListNumber]], [CardReader: Node]) {
        var lists: [CardReader: [UInt8: PriceListNumber]] = [:]
        var nodesByReader: [CardReader: Node] = [:]
        var seen: [String: Node] = [:]
        for (index, node) in nodes.enumerated() {
            guard let entry = MappingReader(node, path: path.element("#\(index + 1)"), sink: sink) else { continue }
            let reader = entry.int("reader", in: 1...2).flatMap(CardReader.init(rawValue:))
            let card = entry.int("card", in: 0...255)
            let list = listNumber(entry, known: known, required: true)
            entry.finish()
            guard let reader, let card, let list else { continue }
            let key = "\(reader.rawValue)/\(card)"
            if let first = seen[key] {
                sink.report(
                    "card list \(card) of reader \(reader.rawValue) is already mapped at line \(first.mark.line); map each card list once",
                    at: entry.value("card"), path: entry.path.key("card"))
                continue
            }
            seen[key] = node
            lists[reader, default: [:]][UInt8(card)] = list
            nodesByReader[reader] = nodesByReader[reader] ?? entry.value("reader")
        }
        return (lists, nodesByReader)
    }

    /// The zone's rules from the system's tz database; without a name, the system's own zone.
    private func timeZone(_ name: String?, at node: Node, path: ConfigPath) -> TimeZoneRules? {
        let file: String
        if let name {
            let allowed = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/_+-".contains($0)) }
            guard !name.isEmpty, allowed, !name.hasPrefix("/"), !name.split(separator: "/").contains("..") else {
                sink.report("'\(name)' is not a time zone name (write one like Europe/Berlin or Asia/Seoul)", at: node, path: path)
                return nil
            }
            file = "\(Self.zoneDirectory)/\(name)"
        } else {
            file = Self.systemZoneFile
        }
        let described = name.map { "time zone '\($0)'" } ?? "the system's time zone (\(file); set pricing.time_zone)"
        switch ConfigLoader.readBytes(file) {
        case .failure:
            sink.report(
                name == nil
                    ? "\(described) cannot be read: name the machine's zone"
                    : "unknown \(described): no \(file) (see `timedatectl list-timezones`)",
                at: node, path: path)
            return nil
        case .success(let bytes):
            do {
                return try TZif.rules(name: name ?? file, bytes: bytes)
            } catch {
                sink.report("\(file) \(error)", at: node, path: path)
                return nil
            }
        }
    }

    /// A slot's or product's `prices:` `- { list: 2, payment: cashless, price: "1.20" }`: list 1
    /// and every payment by default; each (list, payment) once; a price cash may pay follows the
    /// rule of `price` (at most `machine.maximum_credit`). List 1 for every payment is the
    /// slot's own `price`.
    func priceLines(_ nodes: [Node], machine: MachineSection, known: [PriceListNumber], path: ConfigPath) -> [PriceLine]? {
        var lines: [PriceLine] = []
        var seen: [String: Node] = [:]
        var valid = true
        for (index, node) in nodes.enumerated() {
            guard let entry = MappingReader(node, path: path.element("#\(index + 1)"), sink: sink) else {
                valid = false
                continue
            }
            let list = listNumber(entry, known: known, required: false)
            let scope = entry.choice("payment", default: PriceScope.any)
            let price = entry.money("price", currency: machine.currency)
            entry.finish()
            guard let list, let scope, let price else {
                valid = false
                continue
            }
            if list == .standardList, scope == .any {
                sink.report(
                    "list 1 for every payment is each slot's own price (slots[].price): name another list or a payment here",
                    at: node, path: entry.path)
                valid = false
                continue
            }
            let key = "\(list)/\(scope.rawValue)"
            if let first = seen[key] {
                sink.report(
                    "list \(list) for \(scope.rawValue) is already priced at line \(first.mark.line); give each list and payment one price",
                    at: node, path: entry.path)
                valid = false
                continue
            }
            seen[key] = node
            if [.any, .cash].contains(scope), let format = machine.format, let currency = machine.currency,
                let maximumCredit = machine.maximumCredit, let problem = PriceProblem.of(price, currency: currency, maximumCredit: maximumCredit)
            {
                sink.report(problem.describe(price, format: format), at: entry.value("price"), path: entry.path.key("price"))
                valid = false
                continue
            }
            lines.append(PriceLine(list: list, scope: scope, price: price))
        }
        return valid ? lines : nil
    }

    /// Card lists for a reader the file does not have would never be used: a mistake.
    func checkCardLists(_ pricing: PricingSection, readers: [CardReader]) {
        for (reader, node) in pricing.cardListNodes.sorted(by: { $0.key < $1.key }) where !readers.contains(reader) {
            sink.report(
                "there is no \(reader) in mdb.cashless: its card lists would never be used",
                at: node, path: ConfigPath.root.key("pricing").key("card_lists"))
        }
    }

    /// The smallest coin the machine takes or pays, in minor units (1 when it has none).
    static func roundingUnit(coinAcceptor: CoinAcceptorConfig?, payoutDevices: [PayoutDeviceConfig], mdb: MDBSettings?) -> Int64 {
        let coins =
            (coinAcceptor?.channels.filter(\.enabled).map(\.value) ?? []) + payoutDevices.map(\.coin)
            + (mdb?.changer?.coins.map(\.value) ?? [])
        return coins.map(\.minorUnits).min() ?? 1
    }
}
