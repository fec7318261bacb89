import Testing
import VendConfig
import VendControl
import VendHardware
import VendingCore

@testable import VendDaemon

@Suite(.timeLimit(.minutes(5))) struct HardwareHealthTests {
    @Test func aCoinAcceptorFaultLastsUntilItReportsSomethingElse() {
        var health = HardwareHealth()
        #expect(health.report(gpio: "gpio", coinAcceptor: "acceptor").coinAcceptor.ok)
        health.record(.coinAcceptor("disconnected from /dev/ttyUSB0", isFault: true), at: 10)
        let faulty = health.report(gpio: "gpio", coinAcceptor: "acceptor").coinAcceptor
        #expect(faulty == .init(ok: false, description: "acceptor", notice: "disconnected from /dev/ttyUSB0", noticeAt: 10))
        health.record(.coinAcceptor("reconnected", isFault: false), at: 20)
        #expect(health.report(gpio: "gpio", coinAcceptor: "acceptor").coinAcceptor.ok)
    }

    @Test func hardwareFaultsMakeTheGPIOUnhealthyButRoutineNoticesDoNot() {
        var health = HardwareHealth()
        health.record(.relayReleased("A1", line: .offset(6), after: .milliseconds(600)), at: 1)
        health.record(.noDropWithinWindow("A1", window: .milliseconds(2500)), at: 2)
        #expect(health.report(gpio: "gpio", coinAcceptor: "acceptor").gpio.ok)
        health.record(.relayCutByMaximumOnTime("A1", line: .offset(6), limit: .milliseconds(2000)), at: 3)
        let gpio = health.report(gpio: "gpio", coinAcceptor: "acceptor").gpio
        #expect(!gpio.ok)
        #expect(gpio.notice == "relay of slot A1 had to be cut by its 2000 ms limit")
        health.record(.fault("line 6: I/O error"), at: 4)
        #expect(health.report(gpio: "gpio", coinAcceptor: "acceptor").gpio.notice == "line 6: I/O error")
    }

    @Test func hardwareThatIsNotRunningIsNotHealthy() {
        let report = HardwareHealth().report(gpio: nil, coinAcceptor: nil)
        #expect(!report.gpio.ok && !report.coinAcceptor.ok)
        #expect(report.gpio.description == "stopped")
    }
}
