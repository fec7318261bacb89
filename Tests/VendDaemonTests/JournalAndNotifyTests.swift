import Foundation
import Glibc
import Logging
import Testing
import VendPOSIX
import VenddTestSupport

@testable import VendDaemon
@testable import VendSystemd

@Suite(.timeLimit(.minutes(5))) struct JournalTests {
    @Test func entriesCarryStructuredFieldsInTheNativeFormat() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journald = try DatagramReceiver(in: directory, name: "journal.sock")
        let journal = try #require(JournalSocket(path: journald.path))
        #expect(journal.send(message: "vend#3 sold cola", priority: 5, fields: ["SLOT": "A4", "coin-channel": "2"]))
        let text = String(decoding: try journald.receive(), as: UTF8.self)
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.isSuperset(of: ["MESSAGE=vend#3 sold cola", "PRIORITY=5", "SYSLOG_IDENTIFIER=vendd", "SLOT=A4", "COIN_CHANNEL=2"]))
    }

    @Test func aMultiLineValueUsesTheLengthPrefixedForm() {
        var datagram: [UInt8] = []
        JournalSocket.append("MESSAGE", "two\nlines", to: &datagram)
        #expect(datagram == Array("MESSAGE\n".utf8) + [9, 0, 0, 0, 0, 0, 0, 0] + Array("two\nlines\n".utf8))
    }

    @Test func fieldNamesAreMadeValid() {
        #expect(JournalSocket.fieldName("slot") == "SLOT")
        #expect(JournalSocket.fieldName("coin.channel") == "COIN_CHANNEL")
        #expect(JournalSocket.fieldName("_hidden") == "HIDDEN")
        #expect(JournalSocket.fieldName("1x") == "X")
    }

    @Test func levelsMapToSyslogPriorities() {
        #expect(Logger.Level.critical.syslogPriority == 2)
        #expect(Logger.Level.warning.syslogPriority == 4)
        #expect(Logger.Level.info.syslogPriority == 6)
    }
}

@Suite(.timeLimit(.minutes(5))) struct NotifyTests {
    @Test func sendsStateToTheNotifySocketAndHalvesTheWatchdog() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let systemd = try DatagramReceiver(in: directory, name: "notify.sock")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "30000000"])
        #expect(notifier.watchdogInterval == .seconds(15))
        notifier.ready(status: "in-service")
        #expect(String(decoding: try systemd.receive(), as: UTF8.self) == "READY=1\nSTATUS=in-service")
        notifier.watchdog()
        #expect(String(decoding: try systemd.receive(), as: UTF8.self) == "WATCHDOG=1")
    }

    @Test func doesNothingOutsideSystemd() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isActive)
        #expect(notifier.watchdogInterval == nil)
        notifier.ready(status: "no one listens")
    }

    @Test func ignoresAWatchdogMeantForAnotherProcess() {
        let notifier = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"])
        #expect(notifier.watchdogInterval == nil)
    }
}
