import Foundation
import Testing
import VenddTestSupport
import VendingCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The files vendctl writes: the SVG pie chart and the EVA-DTS DEX audit.
@Suite(.oneRealProcessTestAtATime) struct VendctlFileTests {
    @Test func reportWritesAnSVGPieWithOneSliceProportionalToEachProductsSales() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.stockAndSell(sampleSales)
        let path = daemon.directory.path + "/sales.svg"
        let run = try daemon.vendctl("report", "--svg", path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.hasSuffix("pie chart written to \(path)\n"))

        let document = try XMLDocument(contentsOf: URL(fileURLWithPath: path), options: [])
        #expect(document.rootElement()?.name == "svg")
        let slices = try document.nodes(forXPath: "//*[@class='slice']").compactMap { $0 as? XMLElement }
        let labels = try document.nodes(forXPath: "//*[@class='label']").compactMap { $0 as? XMLElement }
        #expect(slices.count == 3)
        #expect(labels.count == 3)
        // Sold: cola 2, banana milk 1, canned coffee 1 — in that order, from 12 o'clock clockwise.
        let expected = [("Cola", 2.0), ("Banana Milk", 1.0), ("Canned Coffee", 1.0)]
        var start = -Double.pi / 2
        for ((name, sold), (slice, label)) in zip(expected, zip(slices, labels)) {
            let geometry = try Wedge(slice.attributes?.first { $0.name == "d" }?.stringValue ?? "")
            #expect(abs(geometry.sweep - 2 * .pi * sold / 4) < 1e-3, "\(name)")
            #expect(abs(geometry.startAngle - start) < 1e-3 || abs(abs(geometry.startAngle - start) - 2 * .pi) < 1e-3, "\(name)")
            start += geometry.sweep
            // The label names the product and sits inside its slice.
            let spans = label.children?.compactMap { $0 as? XMLElement } ?? []
            #expect(spans.first?.stringValue == name)
            let x = Double(spans.first?.attributes?.first { $0.name == "x" }?.stringValue ?? "") ?? .nan
            let y = Double(spans.first?.attributes?.first { $0.name == "y" }?.stringValue ?? "") ?? .nan
            #expect(geometry.contains(x: x, y: y), "\(name) label at \(x),\(y)")
        }
    }

    @Test func auditWritesADEXFileWhoseChecksumVerifiesAndWhoseTotalsMatchTheLedger() throws {
        // The test's own CRC must agree with the catalogue's check value first.
        #expect(BitwiseCRC16ARC.checksum(Array("123456789".utf8)) == 0xBB3D)

        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.stockAndSell(sampleSales)
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "100"))
        let path = daemon.directory.path + "/audit.dex"
        let run = try daemon.vendctl("audit", "--dex", path, "--comm-id", "VDD1234567", "--asset", "CORRIDOR-B2")
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output == "\(path): 10 selections, 4 paid vends for 5,200원, cash in (CA3): 5,300원 in coins\n")

        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x0D || $0 == 0x0A })
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasSuffix("\r\n"))
        let segments = text.components(separatedBy: "\r\n").dropLast()
        #expect(!segments.contains { $0.contains("\n") || $0.contains("\r") }, "every line ends in CRLF")
        #expect(segments.first == "DXS*VDD1234567*VA*V0/6*1")
        #expect(segments.last == "DXE*1*1")
        #expect(segments.contains("ID1*VDD1234567*VENDD*1*Corridor B, 2nd floor**CORRIDOR-B2"))

        // G85: CRC-16/ARC from the S of ST through the CRLF before G85, four hex digits MSB first.
        // (On bytes: Swift counts "\r\n" as one Character.)
        let all = [UInt8](bytes)
        let start = try #require(Self.firstIndex(of: Array("\r\nST*".utf8), in: all)) + 2
        let end = try #require(Self.firstIndex(of: Array("\r\nG85*".utf8), in: all)) + 2
        let covered = Array(all[start..<end])
        let written = try #require(segments.first { $0.hasPrefix("G85*") }).dropFirst(4)
        #expect(written.count == 4)
        #expect(UInt16(written, radix: 16) == BitwiseCRC16ARC.checksum(covered))
        // SE01 counts ST through SE.
        let stIndex = try #require(segments.firstIndex { $0.hasPrefix("ST*") })
        let seIndex = try #require(segments.firstIndex { $0.hasPrefix("SE*") })
        #expect(segments[seIndex] == "SE*\(seIndex - stIndex + 1)*0001")

        #expect(try daemon.stop() == 0)
        let ledger = try StateFile.machine(in: daemon.stateDirectory).ledger
        var selections: [String: (count: Int, value: Int64)] = [:]
        for (index, segment) in segments.enumerated() where segment.hasPrefix("PA1*") {
            let slot = segment.split(separator: "*")[1]
            let pa2 = segments[index + 1].split(separator: "*")
            #expect(pa2[0] == "PA2" && pa2[1] == pa2[3] && pa2[2] == pa2[4])
            selections[String(slot)] = (Int(pa2[1]) ?? -1, Int64(pa2[2]) ?? -1)
        }
        #expect(selections.count == 10)
        for (slot, figure) in selections {
            let booked = ledger.salesBySlot[SlotID(slot)]
            #expect(figure.count == booked?.count ?? 0, "\(slot)")
            #expect(figure.value == booked?.amount.minorUnits ?? 0, "\(slot)")
        }
        #expect(segments.contains("VA1*\(ledger.sales.minorUnits)*4*\(ledger.sales.minorUnits)*4"))
        #expect(
            segments.contains(
                "CA3*\(ledger.coinsIn.minorUnits)*\(ledger.coinsIn.minorUnits)*0*0*\(ledger.coinsIn.minorUnits)*\(ledger.coinsIn.minorUnits)*0*0"))
        #expect(ledger.coinsIn.minorUnits == 5_300)
    }
}

extension VendctlFileTests {
    static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        haystack.indices.first { haystack[$0...].starts(with: needle) }
    }
}

/// A slice's geometry read back from its path: "M cx cy L x0 y0 A r r 0 large sweep x1 y1 Z".
struct Wedge {
    let cx, cy, r, startAngle, sweep: Double

    init(_ d: String) throws {
        let numbers = d.split(separator: " ").compactMap { Double($0) }
        guard numbers.count == 11, d.hasPrefix("M "), d.hasSuffix(" Z") else { throw HarnessError("not a wedge: \(d)") }
        (cx, cy, r) = (numbers[0], numbers[1], numbers[4])
        startAngle = atan2(numbers[3] - cy, numbers[2] - cx)
        var sweep = atan2(numbers[10] - cy, numbers[9] - cx) - startAngle
        if sweep <= 0 { sweep += 2 * .pi }
        // The large-arc flag must agree with the endpoints, or a renderer draws another arc.
        guard (numbers[7] == 1) == (sweep > .pi), numbers[8] == 1 else { throw HarnessError("inconsistent arc flags: \(d)") }
        self.sweep = sweep
    }

    func contains(x: Double, y: Double) -> Bool {
        let distance = ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot()
        var angle = atan2(y - cy, x - cx) - startAngle
        while angle < 0 { angle += 2 * .pi }
        return distance < r && angle <= sweep
    }
}

/// CRC-16/ARC bit by bit (poly 0x8005 reflected = 0xA001, init 0, no final XOR), written apart
/// from vendctl's table-driven one.
enum BitwiseCRC16ARC {
    static func checksum(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}
