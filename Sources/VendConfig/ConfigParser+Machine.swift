import VendYAML
import VendingCore

/// What was read of the machine section; other sections need its parts (the currency above all)
/// even when some other machine key is wrong.
struct MachineSection {
    var currency: Currency?
    var format: MoneyFormat?
    var maximumCredit: Money?
    var vendTimeout: Duration?
    var settings: MachineSettings?
    /// Where the vend timeout was given (or the section, when it is the default), for messages.
    var node: Node?
    var vendTimeoutNode: Node?
    var payoutNode: Node?
}

extension ConfigParser {
    func parseMachine(_ section: MappingReader) -> MachineSection {
        let name = section.string("name", required: false) ?? "vending machine"
        let currencySection = section.nested("currency")
        let money = currencySection.flatMap(parseCurrency)
        let maximumCredit = section.money("maximum_credit", currency: money?.currency)
        let vendTimeout = section.milliseconds("vend_timeout_ms", in: 1_000...600_000, default: Defaults.vendTimeoutMilliseconds)
        let unknownOutcome = section.choice("unknown_outcome", default: UnknownOutcomePolicy.refundCredit)
        let failedVend = section.choice("failed_vend", default: FailedVendPolicy.keepCredit)
        let payout = section.choice("payout", default: PayoutPolicy.none)
        let historyLimit = section.int("history_limit", in: 0...1_000_000, default: Defaults.historyLimit)
        let temperatureUnit = section.choice("temperature_unit", default: TemperatureUnit.celsius)
        section.finish()

        let payOutImpossible = failedVend == .payOut && payout == PayoutPolicy.none
        if payOutImpossible {
            sink.report(
                "'pay-out' needs a way to pay out; set machine.payout to 'manual' or use 'keep-credit'",
                at: section.value("failed_vend"), path: section.path.key("failed_vend"))
        }
        if name.isEmpty {
            sink.report("give the machine a name, or leave the key out", at: section.value("name"), path: section.path.key("name"))
        }
        var result = MachineSection(
            currency: money?.currency, format: money?.format, maximumCredit: maximumCredit,
            vendTimeout: vendTimeout, node: section.node, vendTimeoutNode: section.value("vend_timeout_ms"),
            payoutNode: section.value("payout"))
        guard let money, let maximumCredit, let vendTimeout, let unknownOutcome, let failedVend, let payout, let historyLimit,
            let temperatureUnit, !payOutImpossible, !name.isEmpty
        else { return result }
        result.settings = MachineSettings(
            name: name, currency: money.currency, moneyFormat: money.format, maximumCredit: maximumCredit,
            vendTimeout: vendTimeout, unknownOutcomePolicy: unknownOutcome, failedVendPolicy: failedVend,
            payout: payout, historyLimit: historyLimit)
        result.settings?.temperatureUnit = temperatureUnit
        return result
    }

    private func parseCurrency(_ section: MappingReader) -> (currency: Currency, format: MoneyFormat)? {
        let code = section.string("code")
        let minorDigits = section.int("minor_digits", in: Currency.minorDigitsRange)
        let template = section.string("format")
        let grouping = section.string("grouping_separator", required: false) ?? ","
        let decimal = section.string("decimal_separator", required: false) ?? "."
        section.finish()

        if let code, code.count != 3 || !code.allSatisfy({ $0.isASCII && $0.isUppercase }) {
            sink.report(
                "'\(code)' is not a currency code (three capital letters, such as KRW, EUR or USD)",
                at: section.value("code"), path: section.path.key("code"))
        } else if let code, !ISO4217.codes.contains(code) {
            sink.report(
                "'\(code)' is not an ISO 4217 currency code (KRW for the won, EUR, USD, JPY…; DEX audits and telemetry carry it)",
                at: section.value("code"), path: section.path.key("code"))
        }
        if let template, MoneyFormat(template: template) == nil {
            sink.report(
                "'\(template)' must contain {amount} exactly once, e.g. \"{amount}원\" or \"€{amount}\"",
                at: section.value("format"), path: section.path.key("format"))
        }
        if let minorDigits, minorDigits > 0, decimal.isEmpty || decimal == grouping {
            sink.report(
                "the decimal separator must be set and differ from the grouping separator",
                at: section.value("decimal_separator") ?? section.node, path: section.path.key("decimal_separator"))
        }
        guard let code, let minorDigits, let template,
            let format = MoneyFormat(template: template, groupingSeparator: grouping, decimalSeparator: decimal),
            ISO4217.codes.contains(code)
        else { return nil }
        return (Currency(code: code, minorDigits: minorDigits), format)
    }

    func parseState(_ section: MappingReader) -> String? {
        let directory = section.string("directory", required: false) ?? Defaults.stateDirectory
        section.finish()
        return absolutePath(directory, key: "directory", in: section)
    }

    func parseControl(_ section: MappingReader) -> ControlSettings? {
        let socket = section.string("socket", required: false) ?? Defaults.control.socketPath
        let group = section.string("group", required: false) ?? Defaults.control.group
        let customerGroup = section.string("customer_group", required: false) ?? Defaults.control.customerGroup
        section.finish()
        var valid = true
        for (key, name) in [("group", group), ("customer_group", customerGroup)]
        where name.isEmpty || !name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) }) {
            sink.report(
                "'\(name)' is not a group name (letters, digits, '-' and '_')",
                at: section.value(key), path: section.path.key(key))
            valid = false
        }
        if valid, group == customerGroup {
            sink.report(
                "the customer group must differ from the technician group '\(group)': its members may only select and return coins",
                at: section.value("customer_group"), path: section.path.key("customer_group"))
            valid = false
        }
        guard valid, let socketPath = absolutePath(socket, key: "socket", in: section) else { return nil }
        var settings = ControlSettings(socketPath: socketPath, group: group, customerGroup: customerGroup)
        for key in ["group", "customer_group"] {
            if let node = section.value(key) { settings.groupLocations[key] = sink.location(of: node) }
        }
        return settings
    }

    func absolutePath(_ path: String, key: String, in section: MappingReader) -> String? {
        guard path.hasPrefix("/") else {
            sink.report("'\(path)' must be an absolute path (starting with /)", at: section.value(key), path: section.path.key(key))
            return nil
        }
        return path
    }
}
