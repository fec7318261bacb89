import MDB
import Testing

@Suite struct BlockAndQibixxTests {
    /// CHK examples from reference §1.1 (cross-checked there against raw frames).
    @Test func checksumsMatchTheSpecExamples() {
        #expect(ChangerCommand.poll.block.wireBytes == [0x0B, 0x0B])
        #expect(
            ChangerCommand.coinType(accept: [0, 1, 2, 3], manualDispense: [0, 1, 2, 3]).block.wireBytes == [0x0C, 0x00, 0x0F, 0x00, 0x0F, 0x2A])
        #expect(BillCommand.escrow(stack: true).block.wireBytes == [0x35, 0x01, 0x36])
        #expect(BillCommand.reset.block.wireBytes == [0x30, 0x30])
        // Carry dropped: 0F + 01 + FF... wraps.
        #expect(MDBBlock(0x0F, [0x01, 0xFF, 0xFF]).checksum == 0x0E)
    }

    @Test func addressByteSplitsIntoPeripheralAndCommand() {
        let block = BillCommand.billType(accept: [0, 1], escrow: [1]).block
        #expect(block.peripheral == 0x30 && block.command == 4)
        #expect(block.data == [0x00, 0x03, 0x00, 0x02])
    }

    @Test func commandLinesAreTheDocumentedForms() {
        #expect(QibixxCommand.masterMode(true).line == "M,1")
        #expect(QibixxCommand.masterMode(false).line == "M,0")
        #expect(QibixxCommand.busReset.line == "R,RESET")
        #expect(QibixxCommand.transact(ChangerCommand.poll.block).line == "R,0B")
        #expect(QibixxCommand.transact(ChangerCommand.coinType(accept: [0, 1, 2, 3], manualDispense: [0, 1, 2, 3]).block).line == "R,0C,000F000F")
        #expect(QibixxCommand.transact(ChangerCommand.dispense(type: 1, count: 2).block).line == "R,0D,21")
        // The QBX-M example: READER ENABLE to the cashless device.
        #expect(QibixxCommand.transact(MDBBlock(peripheral: .cashless1, command: 4, [0x01])).line == "R,14,01")
        #expect(QibixxCommand.transact(ChangerCommand.identification.block).encoded == Array("R,0F,00\n".utf8))
    }

    @Test func commandLinesParseBackCaseInsensitively() {
        #expect(QibixxCommand.parse("R,0c,000f000f") == .transact(MDBBlock(0x0C, [0x00, 0x0F, 0x00, 0x0F])))
        #expect(QibixxCommand.parse("R,reset") == .busReset)
        #expect(QibixxCommand.parse("M,1") == .masterMode(true))
        for bad in ["R", "R,", "R,0", "R,0B,1", "R,0B0C", "M,2", "X,1", "R,0B,zz"] {
            #expect(QibixxCommand.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func repliesDecode() throws {
        #expect(try QibixxReply.parse("m,ACK") == .masterMode(accepted: true))
        #expect(try QibixxReply.parse("m,NACK") == .masterMode(accepted: false))
        #expect(try QibixxReply.parse("p,ACK") == .peripheral(.ack))
        #expect(try QibixxReply.parse("p,NACK") == .peripheral(.noAnswer))
        // The sniffer prints lowercase: accept both.
        #expect(try QibixxReply.parse("p,531f") == .peripheral(.data([0x53, 0x1F])))
        #expect(try QibixxReply.parse("p,0B") == .peripheral(.data([0x0B])))
        #expect(try QibixxReply.parse("v,4.1.0") == .other("v,4.1.0"))
        #expect(try QibixxReply.parse("") == .other(""))
    }

    @Test func garbledRepliesAreErrorsNamingTheLine() {
        for bad in ["p,", "p,5", "p,5G", "m,MAYBE", "p,ACKK", "p," + String(repeating: "00", count: 37)] {
            #expect(throws: QibixxLineError.self, "\(bad)") { try QibixxReply.parse(bad) }
        }
        do {
            _ = try QibixxReply.parse("p,5G")
            Issue.record("p,5G parsed")
        } catch {
            #expect(error.description == "garbled line from the MDB interface 'p,5G': p, data is not whole hex bytes")
        }
    }

    /// Found by fuzz-mdb's property that a line starting `p,` or `m,` is never chatter: a
    /// combining mark (or zero-width joiner) after the comma joins it into one Character, and the
    /// garbled answer to a POLL was logged as the interface's talk, without the lost-coin warning.
    @Test func aMarkAfterTheCommaIsAGarbledAnswerNotChatter() throws {
        for bad in ["p,\u{301}ACK", "p,\u{301}531F", "m,\u{200D}ACK", "p,ACK\u{301}", "p,\u{FFFD}0B"] {
            #expect(throws: QibixxLineError.self, "\(bad.unicodeScalars.map { String($0.value, radix: 16) })") { try QibixxReply.parse(bad) }
        }
        #expect(try QibixxReply.parse("p\u{301},ACK") == .other("p\u{301},ACK"), "not a p, line: the p itself is garbled")
        #expect(try QibixxReply.parse("p,nAcK") == .peripheral(.noAnswer))
    }

    @Test func linesSplitOnNewlineWithOrWithoutCarriageReturn() {
        var splitter = LineSplitter()
        #expect(splitter.receive(Array("p,A".utf8)).isEmpty)
        #expect(splitter.receive(Array("CK\r\nm,ACK\np,0".utf8)) == ["p,ACK", "m,ACK"])
        #expect(splitter.receive(Array("B\n".utf8)) == ["p,0B"])
        let noise = [UInt8](repeating: 0x55, count: LineSplitter.limit * 2 + 5)
        #expect(splitter.receive(noise + Array("\np,ACK\n".utf8)).last == "p,ACK")
        #expect(splitter.overlongLines == 2)
    }
}
