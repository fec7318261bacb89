import VendSettings
import VendText
import VendYAML
import VendingCore

extension ConfigParser {
    func parseGPIO(_ section: MappingReader) -> GPIOSettings? {
        let chip = section.string("chip")
        let debounce = section.milliseconds("debounce_ms", in: 0...1_000, default: Defaults.debounceMilliseconds)
        section.finish()
        if chip?.isEmpty == true {
            sink.report(
                "name the chip: gpiochip0, /dev/gpiochip0 or its label (see `gpiodetect`)",
                at: section.value("chip"), path: section.path.key("chip"))
        }
        guard let chip, !chip.isEmpty, let debounce else { return nil }
        let chipOrigin = section.value("chip").map { origin(of: $0, path: section.path.key("chip")) }
        return GPIOSettings(chip: chip, chipOrigin: chipOrigin, debounce: debounce)
    }

    /// The valid products, and the ids of every product the file defines (valid or not), so that
    /// a slot naming a product with a mistake in it is not reported a second time.
    func parseProducts(
        _ nodes: [Node], machine: MachineSection, knownLists: [PriceListNumber]
    ) -> (valid: [Product], definedIDs: [String], faces: [String: ProductFace], ages: [String: (age: Int, node: Node, path: ConfigPath)]) {
        let listPath = ConfigPath.root.key("products")
        var products: [Product] = []
        var faces: [String: ProductFace] = [:]
        var ages: [String: (age: Int, node: Node, path: ConfigPath)] = [:]
        var definedIDs: [String] = []
        var seen: [String: Node] = [:]
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "id") } ?? "#\(index + 1)"
            guard let section = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let rawID = section.string("id")
            let id = rawID.flatMap { identifier($0, kind: "product id", key: "id", in: section) }
            if let rawID, id == nil { definedIDs.append(rawID) }
            let name = section.string("name")
            let category = section.list("category").map {
                categoryPath($0, at: section.value("category"), path: section.path.key("category"))
            }
            let hot = section.bool("hot", default: false)
            let shelfLife = section.has("shelf_life_days") ? section.int("shelf_life_days", in: 1...3_650) : nil
            // nil: not given (the default); .some(nil): given and wrong (already reported).
            let expiryPolicy: ExpiryPolicy?? =
                section.has("expired") ? .some(section.choice("expired", default: ExpiryPolicy.refuse)) : nil
            let tags = section.list("tags", required: false).map { strings($0, path: section.path.key("tags")) } ?? []
            // nil: not given; .some(nil): given and wrong (already reported).
            let picture: String?? = section.string("picture", required: false).map { picturePath($0, in: section) }
            let shortName: String?? = section.string("short_name", required: false).map { self.shortName($0, in: section) }
            let priceLines = section.list("prices", required: false).map {
                self.priceLines($0, machine: machine, known: knownLists, path: section.path.key("prices"))
            }
            let age = restriction(section)
            section.finish()
            if let id, let first = seen[id] {
                sink.report(
                    "product '\(id)' is already defined at line \(first.mark.line); product ids must be unique",
                    at: section.value("id"), path: section.path.key("id"))
                continue
            }
            if let id {
                seen[id] = node
                definedIDs.append(id)
            }
            if name?.isEmpty == true {
                sink.report("give the product a name customers can read", at: section.value("name"), path: section.path.key("name"))
            }
            if expiryPolicy != nil, !section.has("shelf_life_days") {
                sink.report(
                    "expired says what happens to items past their shelf life: give the product shelf_life_days too, or remove expired",
                    at: section.value("expired"), path: section.path.key("expired"))
                continue
            }
            guard let id, let name, !name.isEmpty, let category = category ?? nil, let hot,
                section.has("shelf_life_days") == (shelfLife != nil)
            else { continue }
            if case .some(nil) = expiryPolicy { continue }
            if case .some(nil) = priceLines { continue }
            if case .some(nil) = age { continue }
            if let age = age ?? nil, let node = section.value("restricted") { ages[id] = (age, node, section.path.key("restricted")) }
            products.append(
                Product(
                    id: ProductID(id), name: name, category: category, isHot: hot,
                    shelfLifeDays: shelfLife, tags: tags, expiryPolicy: expiryPolicy ?? nil, priceLines: (priceLines ?? []) ?? []))
            if case .some(nil) = picture { continue }
            if case .some(nil) = shortName { continue }
            if picture != nil || shortName != nil { faces[id] = ProductFace(picture: picture ?? nil, shortName: shortName ?? nil) }
        }
        return (products, definedIDs, faces, ages)
    }

    /// `zoneIDs`: every zone the file defines (valid or not), for the slots' `zone`.
    func parseSlots(
        _ nodes: [Node], machine: MachineSection, gpio: GPIOSettings?, motors: MotorsSection?, productIDs: [String], zoneIDs: [String],
        knownLists: [PriceListNumber], productAges: [String: (age: Int, node: Node, path: ConfigPath)]
    ) -> [SlotConfig] {
        let listPath = ConfigPath.root.key("slots")
        var slots: [SlotConfig] = []
        var seen: [String: Node] = [:]
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "id") } ?? "#\(index + 1)"
            guard let section = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let id = section.string("id").flatMap { identifier($0, kind: "slot id", key: "id", in: section) }
            let product = section.string("product")
            let price = section.money("price", currency: machine.currency)
            let priceLines = section.list("prices", required: false).map {
                self.priceLines($0, machine: machine, known: knownLists, path: section.path.key("prices"))
            }
            let capacity = section.int("capacity", in: 1...999)
            let slotID = SlotID(id ?? label)
            let button = section.nested("button").flatMap { inputLine($0, gpio: gpio, purpose: .slotButton(slotID)) }
            let drive = slotDrive(section, slot: slotID, gpio: gpio, motors: motors)
            let dropSensorSection = section.nested("drop_sensor", required: false)
            let dropSensor = dropSensorSection.flatMap { self.dropSensor($0, gpio: gpio, purpose: .dropSensor(slotID)) }
            let zone = section.string("zone", required: false)
            let perishable = section.bool("perishable", default: false)
            // The slot's own restriction overrides its product's.
            let ownAge = restriction(section)
            section.finish()
            if case .some(nil) = ownAge { continue }

            if let id, let first = seen[id] {
                sink.report(
                    "slot '\(id)' is already defined at line \(first.mark.line); slot ids must be unique",
                    at: section.value("id"), path: section.path.key("id"))
                continue
            }
            if let id { seen[id] = node }
            // The rule `vendctl price` follows too.
            if let format = machine.format, let currency = machine.currency, let maximumCredit = machine.maximumCredit, let price,
                let problem = PriceProblem.of(price, currency: currency, maximumCredit: maximumCredit)
            {
                sink.report(problem.describe(price, format: format), at: section.value("price"), path: section.path.key("price"))
            }
            if let product, !productIDs.contains(product) {
                reportUnknown("product", product, among: productIDs, whenNone: "the products list is empty", in: section)
                continue
            }
            if let zone, !zoneIDs.contains(zone) {
                reportUnknown("zone", zone, among: zoneIDs, whenNone: "define it under zones:", in: section)
                continue
            }
            if perishable == true, zone == nil {
                sink.report(
                    "a perishable slot needs the zone that keeps it (zone: …): without one nothing stops its sales when it warms",
                    at: section.value("perishable"), path: section.path.key("perishable"))
                continue
            }
            guard let id, let product, let price, let capacity, let button, let drive,
                dropSensorSection == nil || dropSensor != nil, let perishable
            else { continue }
            if case .some(nil) = priceLines { continue }
            let zoneID = zone.map { ZoneID($0) }
            let restricted: (age: Int, node: Node, path: ConfigPath)? =
                (ownAge ?? nil).flatMap { age in section.value("restricted").map { (age, $0, section.path.key("restricted")) } }
                ?? productAges[product]
            if let restricted {
                restrictions.record(SlotID(id), age: restricted.age, location: sink.location(of: restricted.node), path: restricted.path.description)
            }
            let setup = SlotSetup(
                id: SlotID(id), product: ProductID(product), price: price, capacity: capacity, healthZone: perishable ? zoneID : nil,
                priceLines: (priceLines ?? []) ?? [], minimumAge: restricted?.age)
            slots.append(
                SlotConfig(
                    setup: setup, zone: zoneID,
                    button: button, drive: drive, dropSensor: dropSensor))
        }
        checkVendTimeout(machine, slots: slots)
        checkMatrixPositionsUsedOnce(slots)
        return slots
    }

    /// "unknown zone 'chiled'; did you mean 'chilled'? (zones: chilled)", at the slot's `key`.
    private func reportUnknown(_ key: String, _ name: String, among known: [String], whenNone: String, in section: MappingReader) {
        var message = "unknown \(key) '\(name)'"
        if let suggestion = closestMatch(to: name, among: known) { message += "; did you mean '\(suggestion)'?" }
        message += known.isEmpty ? " (\(whenNone))" : " (\(key)s: \(known.joined(separator: ", ")))"
        sink.report(message, at: section.value(key), path: section.path.key(key))
    }

    /// The vend timeout is the backstop for a vend whose outcome never arrives: it must outlast
    /// the longest the drive and the drop window can legitimately take.
    private func checkVendTimeout(_ machine: MachineSection, slots: [SlotConfig]) {
        guard let vendTimeout = machine.vendTimeout else { return }
        let longest = slots.map { slot in (slot.id, max(slot.longestDrive, slot.dropSensor?.window ?? .zero)) }
        let tooLong = longest.filter { $0.1 >= vendTimeout }
        guard let worst = tooLong.map(\.1).max() else { return }
        sink.report(
            "\(vendTimeout.wholeMilliseconds) ms is not longer than the relay max_on_ms, motors.turn_ms or drop window_ms of slot\(tooLong.count == 1 ? "" : "s") \(tooLong.map(\.0.rawValue).joined(separator: ", ")) (up to \(worst.wholeMilliseconds) ms); raise it or shorten those",
            at: machine.vendTimeoutNode ?? machine.node, path: ConfigPath.root.key("machine").key("vend_timeout_ms"))
    }

    func parseButtons(_ nodes: [Node], gpio: GPIOSettings?) -> [ButtonConfig] {
        let listPath = ConfigPath.root.key("buttons")
        var buttons: [ButtonConfig] = []
        var seen: [ButtonAction: Node] = [:]
        for (index, node) in nodes.enumerated() {
            let label = node.mapping.flatMap { labelValue(in: $0, key: "action") } ?? "#\(index + 1)"
            guard let section = MappingReader(node, path: listPath.element(label), sink: sink) else { continue }
            let action: ButtonAction? = section.choice("action", default: nil)
            let line = inputLine(section, gpio: gpio, purpose: action.map { .action($0) })
            if let action, let first = seen[action] {
                sink.report(
                    "the \(action.rawValue) button is already defined at line \(first.mark.line); define each action once",
                    at: section.value("action"), path: section.path.key("action"))
                continue
            }
            // A raw value `choice` accepts, though `allCases` does not list it.
            if action == .ageVerified {
                sink.report(
                    "the age verifier is configured under age_verification: (verifier: gpio, line: …), not as a button",
                    at: section.value("action"), path: section.path.key("action"))
                continue
            }
            if let action { seen[action] = node }
            guard let action, let line else { continue }
            buttons.append(ButtonConfig(action: action, line: line))
        }
        return buttons
    }

    // MARK: - Lines

    /// `{line: 17, chip: mcp23017-0, active_low: true, bias: pull-up, debounce_ms: 30}`; finishes the section.
    func inputLine(_ section: MappingReader, gpio: GPIOSettings?, purpose: LineUse.Purpose?) -> InputLineConfig? {
        let line = lineReference(section)
        let chip = chipName(section)
        let activeLow = section.bool("active_low", default: false)
        let bias = section.choice("bias", default: Bias.asIs)
        let debounce =
            section.has("debounce_ms")
            ? section.milliseconds("debounce_ms", in: 0...1_000, default: 0)
            : gpio?.debounce ?? .milliseconds(Defaults.debounceMilliseconds)
        section.finish()
        guard let (reference, node) = line, let activeLow, let bias, let debounce, let chip else { return nil }
        let input = InputLineConfig(
            line: reference, activeLow: activeLow, bias: bias, debounce: debounce,
            origin: origin(of: node, path: section.path.key("line")), chip: chip)
        if let purpose { lineUses.record(LineUse(purpose: purpose, line: input)) }
        return input
    }

    /// `{line: 5, chip: /dev/gpiochip2, active_low: false}`; finishes the section.
    func outputLine(_ section: MappingReader, purpose: LineUse.Purpose) -> OutputLineConfig? {
        let line = lineReference(section)
        let chip = chipName(section)
        let activeLow = section.bool("active_low", default: false)
        section.finish()
        guard let (reference, node) = line, let activeLow, let chip else { return nil }
        let output = OutputLineConfig(
            line: reference, activeLow: activeLow, origin: origin(of: node, path: section.path.key("line")), chip: chip)
        lineUses.record(LineUse(purpose: purpose, line: output))
        return output
    }

    func relayLine(_ section: MappingReader, purpose: LineUse.Purpose) -> RelayConfig? {
        let line = lineReference(section)
        let chip = chipName(section)
        let activeLow = section.bool("active_low", default: false)
        let pulse = section.int("pulse_ms", in: 10...10_000, default: Defaults.pulseMilliseconds)
        let maximumOn = section.int("max_on_ms", in: 10...30_000, default: Defaults.maximumOnMilliseconds)
        section.finish()
        if let pulse, let maximumOn, maximumOn < pulse {
            sink.report(
                "\(maximumOn) ms is shorter than the pulse (\(pulse) ms); the limit must allow one full pulse",
                at: section.value("max_on_ms") ?? section.node, path: section.path.key("max_on_ms"))
            return nil
        }
        guard let (reference, node) = line, let activeLow, let pulse, let maximumOn, let chip else { return nil }
        let output = OutputLineConfig(
            line: reference, activeLow: activeLow, origin: origin(of: node, path: section.path.key("line")), chip: chip)
        lineUses.record(LineUse(purpose: purpose, line: output))
        return RelayConfig(line: output, pulse: .milliseconds(pulse), maximumOn: .milliseconds(maximumOn))
    }

    private func dropSensor(_ section: MappingReader, gpio: GPIOSettings?, purpose: LineUse.Purpose) -> DropSensorConfig? {
        let window = section.milliseconds("window_ms", in: 100...30_000, default: Defaults.dropWindowMilliseconds)
        guard let input = inputLine(section, gpio: gpio, purpose: purpose), let window else { return nil }
        return DropSensorConfig(input: input, window: window)
    }

    /// `chip:` beside a line: the chip by name, path or label (an expander's `mcp23017`); absent,
    /// the line is on `gpio.chip` (`.some(nil)`). Nil when given and empty (reported).
    private func chipName(_ section: MappingReader) -> String?? {
        guard let chip = section.string("chip", required: false) else { return .some(nil) }
        guard !chip.isEmpty else {
            sink.report(
                "name the chip: gpiochip2, /dev/gpiochip2 or its label (see `gpiodetect`), or leave 'chip' out for gpio.chip",
                at: section.value("chip"), path: section.path.key("chip"))
            return nil
        }
        return chip
    }

    /// `line: 17` (an offset) or `line: GPIO17` (a name the board gives the line).
    private func lineReference(_ section: MappingReader) -> (LineReference, Node)? {
        guard let node = section.required("line"), let text = ScalarRules.text(node, path: section.path.key("line"), sink: sink)
        else { return nil }
        if text.first?.isNumber == true {
            return ScalarRules.integer(node, in: 0...511, path: section.path.key("line"), sink: sink).map { (.offset($0), node) }
        }
        guard let first = text.first, first.isLetter, !text.contains(where: \.isWhitespace) else {
            sink.report(
                "'\(text)' is not a line: give its offset (17) or its name (GPIO17, see `gpioinfo`)",
                at: node, path: section.path.key("line"))
            return nil
        }
        return (.name(text), node)
    }

    // MARK: - Small values

    /// The value of `key` in a list item, to name the item in messages before it is validated.
    func labelValue(in mapping: Node.Mapping, key: String) -> String? {
        mapping.first { $0.key.scalar?.string == key }?.value.scalar?.string.nonEmpty
    }

    func identifier(_ text: String, kind: String, key: String, in section: MappingReader) -> String? {
        let allowed = text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }
        guard !text.isEmpty, text.count <= 32, allowed else {
            sink.report(
                "'\(text)' is not a valid \(kind) (1 to 32 letters, digits, '-' or '_')",
                at: section.value(key), path: section.path.key(key))
            return nil
        }
        return text
    }

    private func categoryPath(_ nodes: [Node], at listNode: Node?, path: ConfigPath) -> CategoryPath? {
        let names = strings(nodes, path: path)
        guard !names.isEmpty, names.count == nodes.count else {
            if nodes.isEmpty { sink.report("give at least one category, e.g. [beverage, coffee]", at: listNode, path: path) }
            return nil
        }
        return CategoryPath(names)
    }

    private func strings(_ nodes: [Node], path: ConfigPath) -> [String] {
        nodes.enumerated().compactMap { index, node in
            guard let text = ScalarRules.text(node, path: path.element("\(index + 1)"), sink: sink) else { return nil }
            guard !text.isEmpty else {
                sink.report("an empty name is not allowed", at: node, path: path.element("\(index + 1)"))
                return nil
            }
            return text
        }
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
