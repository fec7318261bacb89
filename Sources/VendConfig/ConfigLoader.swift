import Foundation
import VendSettings
import VendingCore
import Yams

/// Reads and validates the technician's file. Every problem is collected and reported together,
/// each with its line, column and key; a `VenddConfig` exists only for a file without problems.
public enum ConfigLoader {
    public static func load(file: String) throws(ConfigError) -> VenddConfig {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: file)
                ? "cannot be read as UTF-8 text (check its permissions and encoding)"
                : "does not exist (pass the path of the configuration file, e.g. /etc/vendd/vendd.yaml)"
            throw ConfigError(file: file, diagnostics: [
                ConfigDiagnostic(location: SourceLocation(file: file, line: 1, column: 1), path: "", message: "the file \(reason)"),
            ])
        }
        return try parse(text, file: file)
    }

    public static func parse(_ text: String, file: String) throws(ConfigError) -> VenddConfig {
        let sink = DiagnosticSink(file: file)
        let root: Node?
        do {
            // The basic resolver tags every scalar a string: the validator types values itself
            // (with positions), and the default resolver's regular expressions would pull ICU's
            // data into the daemon's memory for nothing.
            root = try Yams.compose(yaml: text, .basic)
        } catch {
            sink.reportSyntax(error)
            throw ConfigError(file: file, diagnostics: sink.diagnostics)
        }
        guard let root else {
            sink.report("the file is empty; start from config/vendd.yaml", at: nil as Mark?, path: .root)
            throw ConfigError(file: file, diagnostics: sink.diagnostics)
        }
        let config = ConfigParser(sink: sink).parse(root)
        guard sink.diagnostics.isEmpty, let config else {
            let ordered = sink.diagnostics.sorted {
                ($0.location.line, $0.location.column) < ($1.location.line, $1.location.column)
            }
            throw ConfigError(file: file, diagnostics: ordered)
        }
        return config
    }
}

extension DiagnosticSink {
    /// Where `key` appears again after its first occurrence at `first`: later on the same line (a
    /// flow mapping) or at the same column on a later line (a block mapping). Nil if not found.
    static func repeatedKey(_ key: String, after first: (line: Int, column: Int), in text: String) -> (line: Int, column: Int)? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard first.line >= 1, first.line <= lines.count else { return nil }
        let column = first.column - 1
        for number in first.line...lines.count {
            let line = Array(lines[number - 1])
            let from = number == first.line ? column + key.count : 0
            var index = from
            while index + key.count <= line.count {
                let startsKey = String(line[index..<(index + key.count)]) == key
                let before = index == 0 ? " " : line[index - 1]
                let rest = line[(index + key.count)...].drop { $0 == " " }
                let atColumn = number == first.line || index == column
                if startsKey, atColumn, before == " " || before == "{" || before == ",", rest.first == ":" {
                    return (number, index + 1)
                }
                index += 1
            }
        }
        return nil
    }

    /// YAML syntax errors, reworded: Yams's own text repeats the whole document.
    func reportSyntax(_ error: any Error) {
        guard let yamlError = error as? YamlError else {
            report("cannot be read as YAML: \(error)", at: nil as Mark?, path: .root)
            return
        }
        switch yamlError {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            report("YAML syntax: \(problem) (check the indentation and the ':' after each key; use spaces, not tabs)",
                   at: mark, path: .root)
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams marks the first occurrence; the technician's mistake is the later one.
            let first = context.mark
            let second = duplicates.first.flatMap { Self.repeatedKey($0, after: (first.line, first.column), in: context.text) }
            report("\(listing(duplicates, conjunction: "and")) appear\(duplicates.count == 1 ? "s" : "") twice in the same mapping (first at line \(first.line)); keep one",
                   at: SourceLocation(file: file, line: second?.line ?? first.line, column: second?.column ?? first.column), path: "")
        case .reader(let problem, _, _, _):
            report("the file is not valid UTF-8 text: \(problem)", at: nil as Mark?, path: .root)
        default:
            report("cannot be read as YAML: \(yamlError)", at: nil as Mark?, path: .root)
        }
    }
}

/// Walks the node tree section by section.
struct ConfigParser {
    let sink: DiagnosticSink
    /// Every line as it is read, valid item or not, for the check that each serves one purpose.
    let lineUses = LineUseLog()

    func parse(_ root: Node) -> VenddConfig? {
        guard let top = MappingReader(root, path: .root, sink: sink) else { return nil }
        let machineSection = top.nested("machine").map(parseMachine) ?? MachineSection()
        let gpio = top.nested("gpio").flatMap(parseGPIO)
        let (products, productIDs, faces) = top.list("products").map(parseProducts) ?? ([], [], [:])
        let slots = top.list("slots").map { parseSlots($0, machine: machineSection, gpio: gpio, productIDs: productIDs) } ?? []
        let buttons = top.list("buttons", required: false).map { parseButtons($0, gpio: gpio) } ?? []
        let coinAcceptor = top.nested("coin_acceptor", required: false).flatMap { parseCoinAcceptor($0, currency: machineSection.currency) }
        let payoutList = top.value("payout_devices")
        let payoutDevices = top.list("payout_devices", required: false).map {
            parsePayoutDevices($0, currency: machineSection.currency, path: ConfigPath.root.key("payout_devices"))
        } ?? []
        let mdb = top.nested("mdb", required: false).flatMap { parseMDB($0, currency: machineSection.currency) }
        let stateDirectory = top.nested("state", required: false).map(parseState) ?? .some(Defaults.stateDirectory)
        let control = top.nested("control", required: false).map(parseControl) ?? .some(Defaults.control)
        let display = top.nested("display", required: false).map(parseDisplay) ?? .some(Defaults.display)
        top.finish()
        if slots.isEmpty, let slotList = top.value("slots"), slotList.sequence?.isEmpty == true {
            sink.report("a machine needs at least one slot", at: slotList, path: ConfigPath.root.key("slots"))
        }

        checkLinesUsedOnce()
        checkPayout(payoutDevices, listNode: payoutList, machine: machineSection, coinAcceptor: coinAcceptor, mdbChanger: mdb?.changer != nil)

        guard sink.diagnostics.isEmpty, let machine = machineSection.settings, let gpio, let stateDirectory, let control, let display
        else { return nil }
        let setup: MachineSetup
        do {
            setup = try MachineSetup(
                currency: machine.currency, catalog: Catalog(products), slots: slots.map(\.setup),
                maximumCredit: machine.maximumCredit, vendTimeout: machine.vendTimeout,
                unknownOutcomePolicy: machine.unknownOutcomePolicy, failedVendPolicy: machine.failedVendPolicy,
                payoutPolicy: machine.payout, historyLimit: machine.historyLimit)
        } catch {
            // Every rule MachineSetup checks is checked above with a position; reaching this is a bug.
            sink.report("internal check failed: \(error)", at: root, path: .root)
            return nil
        }
        return VenddConfig(
            file: sink.file, machine: machine, gpio: gpio, products: products, slots: slots, buttons: buttons,
            coinAcceptor: coinAcceptor, payoutDevices: payoutDevices, mdb: mdb, stateDirectory: stateDirectory, control: control, display: display,
            productFaces: faces, machineSetup: setup)
    }

    func origin(of node: Node, path: ConfigPath) -> ConfigOrigin {
        ConfigOrigin(location: sink.location(of: node), path: path.description)
    }
}

/// Values used when the file leaves a key out; `docs/config-reference.md` lists each one.
enum Defaults {
    static let stateDirectory = "/var/lib/vendd"
    static let control = ControlSettings(socketPath: "/run/vendd/control.sock", group: "vendtech", customerGroup: "vendcustomer")
    static let kiosk = DisplaySettings.Kiosk(address: "127.0.0.1", port: 8080)
    static let display = DisplaySettings(language: .en, kiosk: kiosk, lcd: nil)
    static let lcdAddress = 0x27
    static let vendTimeoutMilliseconds = 30_000
    static let historyLimit = 10_000
    /// A ccTalk hopper's factory address.
    static let hopperAddress = 3
    static let debounceMilliseconds = 20
    static let pulseMilliseconds = 500
    static let maximumOnMilliseconds = 3_000
    static let dropWindowMilliseconds = 2_000
    static let baudRate = 9_600
    static let ccTalkAddress = 2
    static let ccTalkHostAddress = 1
    static let pollIntervalMilliseconds = 200
    /// Within the 125–200 ms the MDB spec recommends (§A3).
    static let mdbPollIntervalMilliseconds = 150
}

final class LineUseLog {
    private(set) var uses: [LineUse] = []
    func record(_ use: LineUse) { uses.append(use) }
}
