import CGPIOShim
import FoundationEssentials
import Glibc
import VendHardware
import VendPOSIX
import VendSettings
import VendingCore

/// A real GPIO chip through libgpiod (v1 or v2, chosen when the shim was compiled). Line
/// references from the config are resolved to offsets here, so the errors can name the key.
public struct LibgpiodChip: GPIOChipBackend {
    public let name: String
    public let path: String
    public let label: String
    let lineCount: Int

    /// "libgpiod 1.6.3 (API v1)": for the start-up log.
    public static var libraryDescription: String {
        "libgpiod \(String(cString: vgpio_library_version())) (API v\(vgpio_api_major()))"
    }

    /// The chip `gpio.chip` names: `gpiochip0`, `/dev/gpiochip0` or a label.
    public init(_ wanted: String, devices: String = "/dev") throws(GPIOError) {
        let found = try GPIOChipLocator.locate(wanted, devices: devices)
        name = found.name.isEmpty ? wanted : found.name
        path = found.path
        label = found.label
        lineCount = found.lineCount
    }

    public func requestInputs(_ lines: [InputLineConfig], consumer: String) throws(GPIOError) -> any GPIOInputGroup {
        let offsets = try resolve(lines.map { ($0.line, $0.origin) })
        let settings = zip(lines, offsets).map { line, offset in
            vgpio_input(
                offset: UInt32(offset), active_low: line.activeLow ? 1 : 0, bias: Int32(line.bias.shimValue),
                debounce_us: UInt32(clamping: line.debounce.wholeMicroseconds))
        }
        let request = try withChip { chip throws(GPIOError) in
            try check(
                settings.withUnsafeBufferPointer { vgpio_request_inputs(chip, $0.baseAddress, $0.count, consumer) },
                lines: zip(lines.map { ($0.line, $0.origin) }, offsets), chip: chip)
        }
        return try LibgpiodInputGroup(request: request, device: path, lineCount: lines.count)
    }

    public func requestOutputs(_ lines: [OutputLineConfig], consumer: String) throws(GPIOError) -> any GPIOOutputGroup {
        let offsets = try resolve(lines.map { ($0.line, $0.origin) })
        let activeLow = lines.map { Int32($0.activeLow ? 1 : 0) }
        let request = try withChip { chip throws(GPIOError) in
            let shimOffsets = offsets.map { UInt32($0) }
            return try check(
                vgpio_request_outputs(chip, shimOffsets, activeLow, lines.count, consumer),
                lines: zip(lines.map { ($0.line, $0.origin) }, offsets), chip: chip)
        }
        return LibgpiodOutputGroup(request: request, lines: lines)
    }

    /// Every line of the config resolved to an offset, and no offset used for two purposes under
    /// different spellings (`17` and `GPIO17`), which the config check alone cannot see.
    public func checkDistinct(_ uses: [LineUse]) throws(GPIOError) {
        let offsets = try resolve(uses.map { ($0.line, $0.origin) })
        var first: [Int: LineUse] = [:]
        for (use, offset) in zip(uses, offsets) {
            if let earlier = first[offset], earlier.line != use.line {
                throw .sameLine(
                    use.line, origin: use.origin, offset: offset, chip: name,
                    other: earlier.line, otherOrigin: earlier.origin)
            }
            first[offset] = first[offset] ?? use
        }
    }

    private func resolve(_ lines: [(LineReference, ConfigOrigin)]) throws(GPIOError) -> [Int] {
        try withChip { chip throws(GPIOError) in
            var offsets: [Int] = []
            for (line, origin) in lines {
                let offset: Int =
                    switch line {
                    case .offset(let offset): offset
                    case .name(let lineName): Int(vgpio_chip_find_line(chip, lineName))
                    }
                guard (0..<lineCount).contains(offset) else {
                    throw .lineNotFound(line, origin: origin, chip: name, lineCount: lineCount)
                }
                offsets.append(offset)
            }
            return offsets
        }
    }

    private func withChip<T>(_ body: (OpaquePointer) throws(GPIOError) -> T) throws(GPIOError) -> T {
        let chip = try GPIOChipLocator.open(path)
        defer { vgpio_chip_close(chip) }
        return try body(chip)
    }

    /// Turns a failed request into the error a technician can act on: for a busy line, the
    /// kernel knows who holds it.
    private func check(
        _ request: OpaquePointer?, lines: some Sequence<((LineReference, ConfigOrigin), Int)>,
        chip: OpaquePointer
    ) throws(GPIOError) -> OpaquePointer {
        if let request { return request }
        let code = errno
        if code == EBUSY {
            for ((line, origin), offset) in lines {
                var buffer = [CChar](repeating: 0, count: 64)
                if vgpio_line_consumer(chip, UInt32(offset), &buffer, buffer.count) == 1 {
                    let consumer = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    throw .lineBusy(line, origin: origin, consumer: consumer)
                }
            }
        }
        if code == EACCES || code == EPERM { throw .permissionDenied(device: path) }
        throw .ioFailure("cannot request lines on \(name): \(SystemError.text(code))", origin: nil)
    }
}

extension Bias {
    var shimValue: UInt32 {
        switch self {
        case .asIs: VGPIO_BIAS_AS_IS.rawValue
        case .disabled: VGPIO_BIAS_DISABLED.rawValue
        case .pullUp: VGPIO_BIAS_PULL_UP.rawValue
        case .pullDown: VGPIO_BIAS_PULL_DOWN.rawValue
        }
    }
}
