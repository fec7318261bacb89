import Synchronization
import VendSettings

/// Several GPIO chips as one: the SoC's and the expanders' (an MCP23017 is one more 16-line
/// chip). Each line goes to the chip it names, or to the default chip (`gpio.chip`); a request
/// spanning chips becomes one request per chip behind one group, in the caller's order. Chips
/// are opened once, when a line first needs them.
public final class GPIOChipSet: GPIOChipBackend {
    public typealias Opener = @Sendable (String) throws(GPIOError) -> any GPIOChipBackend

    public let name: String
    /// Where the file says `gpio.chip`: a default chip that is not there is reported at it.
    private let defaultChipOrigin: ConfigOrigin?
    private let open: Opener
    private let chips = Mutex<[String: any GPIOChipBackend]>([:])

    /// `defaultChip` serves lines that name none; `open` opens a chip by its name in the file.
    public init(defaultChip: String, origin: ConfigOrigin? = nil, open: @escaping Opener) {
        name = defaultChip
        defaultChipOrigin = origin
        self.open = open
    }

    /// The chip a line is on, opened if it was not yet.
    public func chip(_ wanted: String?) throws(GPIOError) -> any GPIOChipBackend {
        let chipName = wanted ?? name
        do {
            return try chips.withLock { chips throws(GPIOError) in
                if let chip = chips[chipName] { return chip }
                let chip = try open(chipName)
                chips[chipName] = chip
                return chip
            }
        } catch .chipNotFound(_, let available, nil) where wanted == nil && defaultChipOrigin != nil {
            throw .chipNotFound(chipName, available: available, origin: defaultChipOrigin)
        }
    }

    /// Every chip opened so far, by the name the file gives it.
    public var openedChips: [String: any GPIOChipBackend] { chips.withLock { $0 } }

    public func requestInputs(_ lines: [InputLineConfig], consumer: String) throws(GPIOError) -> any GPIOInputGroup {
        var parts: [(group: any GPIOInputGroup, indices: [Int])] = []
        do throws(GPIOError) {
            for (chipName, indices) in Self.byChip(lines.map(\.chip)) {
                let group = try chip(chipName, for: lines[indices[0]].origin).requestInputs(indices.map { lines[$0] }, consumer: consumer)
                parts.append((group, indices))
            }
        } catch {
            for part in parts { part.group.release() }
            throw error
        }
        return parts.count == 1 && parts[0].indices == Array(lines.indices) ? parts[0].group : CombinedInputGroup(parts: parts, count: lines.count)
    }

    public func requestOutputs(_ lines: [OutputLineConfig], consumer: String) throws(GPIOError) -> any GPIOOutputGroup {
        var parts: [(group: any GPIOOutputGroup, indices: [Int])] = []
        do throws(GPIOError) {
            for (chipName, indices) in Self.byChip(lines.map(\.chip)) {
                let group = try chip(chipName, for: lines[indices[0]].origin).requestOutputs(indices.map { lines[$0] }, consumer: consumer)
                parts.append((group, indices))
            }
        } catch {
            for part in parts { part.group.release() }
            throw error
        }
        return parts.count == 1 && parts[0].indices == Array(lines.indices) ? parts[0].group : CombinedOutputGroup(parts: parts)
    }

    /// A chip a line names that is not there is reported at that line; `gpio.chip` as itself.
    public func chip(_ wanted: String?, for origin: ConfigOrigin) throws(GPIOError) -> any GPIOChipBackend {
        do {
            return try chip(wanted)
        } catch .chipNotFound(let name, let available, nil) where wanted != nil {
            throw .chipNotFound(name, available: available, origin: origin)
        }
    }

    /// The positions of the lines on each chip, chips in order of first appearance.
    private static func byChip(_ chips: [String?]) -> [(String?, [Int])] {
        var order: [String?] = []
        var indices: [String?: [Int]] = [:]
        for (index, chip) in chips.enumerated() {
            if indices[chip] == nil { order.append(chip) }
            indices[chip, default: []].append(index)
        }
        return order.map { ($0, indices[$0] ?? []) }
    }
}

/// Input groups on several chips as one: indices are the caller's, edges of each chip arrive
/// through its own group's thread.
final class CombinedInputGroup: GPIOInputGroup {
    private let parts: [(group: any GPIOInputGroup, indices: [Int])]
    private let count: Int

    init(parts: [(group: any GPIOInputGroup, indices: [Int])], count: Int) {
        self.parts = parts
        self.count = count
    }

    func start(deliver: @escaping @Sendable ([LineEvent]) -> Void, lost: @escaping @Sendable () -> Void) {
        for part in parts {
            let indices = part.indices
            part.group.start(
                deliver: { edges in deliver(edges.map { LineEvent(index: indices[$0.index], isActive: $0.isActive, at: $0.at) }) },
                lost: lost)
        }
    }

    func currentValues() throws(GPIOError) -> [Bool] {
        var values = Array(repeating: false, count: count)
        for part in parts {
            for (value, index) in zip(try part.group.currentValues(), part.indices) { values[index] = value }
        }
        return values
    }

    /// Software debouncing is skipped only if every chip debounces in the kernel.
    var isDebouncedByBackend: Bool { parts.allSatisfy(\.group.isDebouncedByBackend) }

    func release() {
        for part in parts { part.group.release() }
    }
}

/// Output groups on several chips as one.
final class CombinedOutputGroup: GPIOOutputGroup {
    private let route: [(group: any GPIOOutputGroup, index: Int)]
    private let groups: [any GPIOOutputGroup]

    init(parts: [(group: any GPIOOutputGroup, indices: [Int])]) {
        var route: [Int: (any GPIOOutputGroup, Int)] = [:]
        for part in parts {
            for (position, index) in part.indices.enumerated() { route[index] = (part.group, position) }
        }
        self.route = route.keys.sorted().compactMap { route[$0] }
        groups = parts.map(\.group)
    }

    func set(_ index: Int, active: Bool) throws(GPIOError) {
        try route[index].group.set(route[index].index, active: active)
    }

    func release() {
        for group in groups { group.release() }
    }
}
