import Testing

@testable import VendConfig
@testable import VendControl
@testable import VendDaemon
@testable import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

/// Who may send what: the customer group (the display) selects and returns coins, restocks only
/// with the service key on, and changes nothing else; anyone may look.
@Suite(.timeLimit(.minutes(5))) struct CustomerPermissionTests {
    /// dialout stands in for the customer group: it exists on Debian, and a stranger with it as
    /// primary group is what SO_PEERCRED reports for vendd-display.
    static let control = ControlSettings(socketPath: "/run/vendd/control.sock", group: "vendd-no-such-group", customerGroup: "dialout")
    static let display = UnixSocket.PeerCredentials(pid: 1, uid: 65_534, gid: getgrnam("dialout")!.pointee.gr_gid)
    static let stranger = UnixSocket.PeerCredentials(pid: 1, uid: 65_534, gid: 65_534)

    static func refusal(_ peer: UnixSocket.PeerCredentials, _ command: ControlCommand, key: Bool = false) -> ControlError.Code? {
        CommandHandler.refusal(for: peer, of: command, control: control, serviceKeyOn: { key })?.code
    }

    @Test func theCustomerGroupSelectsAndReturnsCoins() {
        #expect(Self.refusal(Self.display, .select(slot: "A1")) == nil)
        #expect(Self.refusal(Self.display, .coinReturn) == nil)
        #expect(Self.refusal(Self.stranger, .select(slot: "A1")) == .forbidden)
        #expect(Self.refusal(Self.stranger, .coinReturn) == .forbidden)
        #expect(Self.refusal(Self.stranger, .status) == nil)
    }

    @Test func restockNeedsTheServiceKey() {
        #expect(Self.refusal(Self.display, .restock(slot: "A1", count: nil), key: false) == .forbidden)
        #expect(Self.refusal(Self.display, .restock(slot: "A1", count: nil), key: true) == nil)
        #expect(Self.refusal(Self.stranger, .restock(slot: "A1", count: nil), key: true) == .forbidden)
        let message = CommandHandler.refusal(
            for: Self.display, of: .restock(slot: "A1", count: nil), control: Self.control,
            serviceKeyOn: { false })?.message
        #expect(message == "restock from the 'dialout' group needs the service key turned on")
    }

    @Test func everythingElseStaysWithTheTechnicians() {
        for command in [
            ControlCommand.price(slot: "A1", amount: "100"), .service(on: true), .sim(.coin(amount: "500")),
            .sim(.press(slot: "A1")), .sim(.key(on: true)),
        ] {
            #expect(Self.refusal(Self.display, command, key: true) == .forbidden, "\(command.op)")
        }
    }
}
