import FoundationEssentials
import VendSettings
import VendYAML
import VendingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The errno that stopped reading the configuration file.
struct ConfigReadErrno: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}

/// Reads and validates the technician's file. Every problem is collected and reported together,
/// each with its line, column and key; a `VenddConfig` exists only for a file without problems.
public enum ConfigLoader {
    public static func load(file: String) throws(ConfigError) -> VenddConfig {
        try parse(readText(file, example: "/etc/vendd/vendd.yaml", reader: "vendd"), file: file)
    }

    /// The file as UTF-8 text, or an error a technician can act on. `example` is the usual
    /// path of such a file, `reader` the program that reads it.
    static func readText(_ file: String, example: String, reader: String) throws(ConfigError) -> String {
        let bytes: [UInt8]
        switch readBytes(file) {
        case .success(let read): bytes = read
        case .failure(let failure):
            let reason =
                switch failure.code {
                case ENOENT: "the file does not exist (pass the path of the configuration file, e.g. \(example))"
                case EISDIR: "cannot read the file: it is a directory (pass the path of the configuration file, e.g. \(example))"
                case EACCES: "cannot read the file: permission denied (\(reader) reads it as its own user: check `ls -l \(file)`)"
                default: "cannot read the file: \(String(cString: strerror(failure.code)))"
                }
            throw ConfigError(
                file: file, diagnostics: [ConfigDiagnostic(location: SourceLocation(file: file, line: 1, column: 1), path: "", message: reason)])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let (offset, line, column) = firstInvalidUTF8(bytes)
            throw ConfigError(
                file: file,
                diagnostics: [
                    ConfigDiagnostic(
                        location: SourceLocation(file: file, line: line, column: column), path: "",
                        message: "the file is not UTF-8 text here (byte 0x\(hex(bytes[offset]))); save it as UTF-8")
                ])
        }
        return text
    }

    /// The whole file, or the errno that stopped reading it.
    static func readBytes(_ file: String) -> Result<[UInt8], ConfigReadErrno> {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(ConfigReadErrno(errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(bytes) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ConfigReadErrno(errno))
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Where the first byte that is not UTF-8 sits: its offset, and its 1-based line and column
    /// (a column counts characters before it on its line, as an editor shows it).
    private static func firstInvalidUTF8(_ bytes: [UInt8]) -> (offset: Int, line: Int, column: Int) {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0, line = 1, column = 1
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            offset += UTF8.width(scalar)
            if scalar == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (min(offset, bytes.count - 1), line, column)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }

    public static func parse(_ text: String, file: String) throws(ConfigError) -> VenddConfig {
        try parseDocument(text, file: file, template: "config/vendd.yaml") { root, sink in ConfigParser(sink: sink).parse(root) }
    }

    /// Composes the YAML and reads it with `read`; every diagnostic in file order, or the value.
    static func parseDocument<Value>(
        _ text: String, file: String, template: String, read: (Node, DiagnosticSink) -> Value?
    ) throws(ConfigError) -> Value {
        let sink = DiagnosticSink(file: file)
        let root: Node?
        do {
            root = try YAMLDocument.compose(text)
        } catch {
            sink.reportSyntax(error)
            throw ConfigError(file: file, diagnostics: sink.diagnostics)
        }
        guard let root else {
            sink.report("the file is empty; start from \(template)", at: nil as Mark?, path: .root)
            throw ConfigError(file: file, diagnostics: sink.diagnostics)
        }
        let config = read(root, sink)
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
    /// YAML syntax errors in the technician's words, at the place the parser stopped.
    func reportSyntax(_ error: YAMLError) {
        let (message, mark): (String, Mark) =
            switch error {
            case .syntax(let problem, let mark):
                ("YAML syntax: \(problem) (check the indentation and the ':' after each key; use spaces, not tabs)", mark)
            case .undefinedAlias(let name, let mark):
                ("'*\(name)' refers to no anchor; define '&\(name)' before it", mark)
            case .duplicateKey(let key, let first, let second):
                ("'\(key)' appears twice in the same mapping (first at line \(first.line)); keep one", second)
            case .severalDocuments(let mark):
                ("a second YAML document ('---') starts here; keep the whole configuration in one", mark)
            }
        report(message, at: SourceLocation(file: file, line: mark.line, column: mark.column), path: "")
    }
}

/// Walks the node tree section by section.
struct ConfigParser {
    let sink: DiagnosticSink
    /// Every line as it is read, valid item or not, for the check that each serves one purpose.
    let lineUses = LineUseLog()
    /// Every restricted slot, for the warning when no verifier is configured.
    let restrictions = RestrictionLog()

    func parse(_ root: Node) -> VenddConfig? {
        guard let top = MappingReader(root, path: .root, sink: sink) else { return nil }
        let machineSection = top.nested("machine").map(parseMachine) ?? MachineSection()
        let gpio = top.nested("gpio").flatMap(parseGPIO)
        let pricing = top.nested("pricing", required: false).map(parsePricing) ?? PricingSection()
        let knownLists = [PriceListNumber.standardList] + pricing.lists.keys.sorted()
        // Bound whole, then taken apart: Swift 6.0.3 cannot infer the labelled tuple through `??`
        // into a destructuring pattern.
        let parsedProducts =
            top.list("products").map { parseProducts($0, machine: machineSection, knownLists: knownLists) }
            ?? (valid: [], definedIDs: [], faces: [:], ages: [:])
        let (products, productIDs, faces, productAges) = (
            parsedProducts.valid, parsedProducts.definedIDs, parsedProducts.faces, parsedProducts.ages
        )
        let zoneNodes = top.list("zones", required: false)
        let zones = zoneNodes.map(parseZones) ?? []
        let zoneIDs = zoneNodes?.compactMap { $0.mapping.flatMap { labelValue(in: $0, key: "id") } } ?? []
        let motors = top.nested("motors", required: false).map { parseMotors($0, gpio: gpio) }
        let slots =
            top.list("slots").map {
                parseSlots(
                    $0, machine: machineSection, gpio: gpio, motors: motors, productIDs: productIDs, zoneIDs: zoneIDs, knownLists: knownLists,
                    productAges: productAges)
            } ?? []
        let ageSection = top.nested("age_verification", required: false)
        let ageVerification = ageSection.flatMap { parseAgeVerification($0, gpio: gpio) }
        // The verifier's input is a panel input like the buttons: read and debounced the same way.
        let buttons =
            (top.list("buttons", required: false).map { parseButtons($0, gpio: gpio) } ?? [])
            + (ageVerification?.line.map { [ButtonConfig(action: .ageVerified, line: $0)] } ?? [])
        let coinAcceptor = top.nested("coin_acceptor", required: false).flatMap { parseCoinAcceptor($0, currency: machineSection.currency) }
        let payoutList = top.value("payout_devices")
        let payoutDevices =
            top.list("payout_devices", required: false).map {
                parsePayoutDevices($0, currency: machineSection.currency, path: ConfigPath.root.key("payout_devices"))
            } ?? []
        let mdb = top.nested("mdb", required: false).flatMap { parseMDB($0, currency: machineSection.currency, format: machineSection.format) }
        let stateDirectory = top.nested("state", required: false).map(parseState) ?? .some(Defaults.stateDirectory)
        let control = top.nested("control", required: false).map(parseControl) ?? .some(Defaults.control)
        let display = top.nested("display", required: false).map(parseDisplay) ?? .some(Defaults.display)
        let mqttSection = top.nested("mqtt", required: false)
        let mqtt = mqttSection.flatMap(parseMQTT)
        let dexSection = top.nested("dex", required: false)
        let dex = dexSection.flatMap(parseDEX)
        top.finish()
        if slots.isEmpty, let slotList = top.value("slots"), slotList.sequence?.isEmpty == true {
            sink.report("a machine needs at least one slot", at: slotList, path: ConfigPath.root.key("slots"))
        }

        checkLinesUsedOnce(defaultChip: gpio?.chip)
        checkCardLists(pricing, readers: mdb?.cashless.map(\.reader) ?? [])
        if let ageSection, let ageVerification { checkAgeVerifier(ageVerification, in: ageSection, readers: mdb?.cashless.map(\.reader) ?? []) }
        checkPayout(payoutDevices, listNode: payoutList, machine: machineSection, coinAcceptor: coinAcceptor, mdbChanger: mdb?.changer != nil)

        guard sink.diagnostics.isEmpty, motors?.isValid ?? true, let machine = machineSection.settings, let gpio, let stateDirectory, let control,
            let display,
            (mqttSection == nil) == (mqtt == nil), (dexSection == nil) == (dex == nil), (ageSection == nil) == (ageVerification == nil)
        else { return nil }
        let setup: MachineSetup
        do {
            setup = try MachineSetup(
                currency: machine.currency, catalog: Catalog(products), slots: slots.map(\.setup),
                maximumCredit: machine.maximumCredit, vendTimeout: machine.vendTimeout,
                unknownOutcomePolicy: machine.unknownOutcomePolicy, failedVendPolicy: machine.failedVendPolicy,
                payoutPolicy: machine.payout, historyLimit: machine.historyLimit,
                machineLockZones: Set(zones.filter { $0.lock == .machine }.map(\.settings.id)),
                pricing: PricingSetup(
                    lists: pricing.lists, bands: pricing.bands, cardLists: pricing.cardLists, timeZone: pricing.timeZone,
                    roundingUnit: Self.roundingUnit(coinAcceptor: coinAcceptor, payoutDevices: payoutDevices, mdb: mdb)),
                ageVerification: ageVerification.map { AgeVerificationSetup(timeout: $0.timeout) })
        } catch {
            // Every rule MachineSetup checks is checked above with a position; reaching this is a bug.
            sink.report("internal check failed: \(error)", at: root, path: .root)
            return nil
        }
        return VenddConfig(
            file: sink.file, machine: machine, gpio: gpio, products: products, slots: slots, motorMatrix: motors?.matrix, buttons: buttons,
            coinAcceptor: coinAcceptor, payoutDevices: payoutDevices, mdb: mdb, stateDirectory: stateDirectory, control: control, display: display,
            productFaces: faces, machineSetup: setup, mqtt: mqtt, dex: dex, zones: zones, ageVerification: ageVerification,
            warnings: restrictionWarnings(verifier: ageVerification))
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
    /// A spiral's home switch leaves home within 1 s and is back within 5 s (Crane's limits).
    static let departureMilliseconds = 1_000
    static let turnMilliseconds = 5_000
    static let camDebounceMilliseconds = 20
    static let baudRate = 9_600
    static let dexCommunicationID = "VDD0000001"
    static let ccTalkAddress = 2
    static let ccTalkHostAddress = 1
    static let pollIntervalMilliseconds = 200
    /// Within the 125–200 ms the MDB spec recommends (§A3).
    static let mdbPollIntervalMilliseconds = 150
    static let mdbPayoutStallMilliseconds = Int(MDBChangerSettings.defaultPayoutStallLimit / .milliseconds(1))
    static let mqttTopicPrefix = "vendd"
    static let mqttOutboxDays = 30
    /// How long an age check waits for the verifier, and an approval for the customer.
    static let ageCheckTimeoutSeconds = 60
}

final class LineUseLog {
    private(set) var uses: [LineUse] = []
    func record(_ use: LineUse) { uses.append(use) }
}
