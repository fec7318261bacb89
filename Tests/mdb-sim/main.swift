import Foundation
import MDB
import MDBSocketSimulator
import SimulatedMDB
import SocketPlug
import VendPOSIX

/// `mdb-sim --socket PATH [--no-changer] [--no-bills] [--cashless 1|2|1,2] [--card-first] [--level 2|3] [--tubes N,N,N,N] [--coin-interval MS]`
/// A simulated Qibixx MDB interface with a coin changer, a bill validator and card readers, driven by commands
/// on stdin (one per line); every action is printed on stdout. `help` lists the commands.
let usage = """
    usage: mdb-sim --socket PATH [--no-changer] [--no-bills] [--cashless 1|2|1,2] [--card-first] [--level 2|3] [--tubes N,N,N,N] [--coin-interval MS]
      --cashless 1,2      card readers at 10h (#1) and/or 60h (#2): level 3, 10 won per unit, 30 s
                          maximum response time, refunds and counts cash sales
      --card-first        the readers do not offer "always idle": a card comes before a selection
      --coin-interval 500 each coin of a payout takes 500 ms to leave its tube, as a motor pays
                          coin by coin ("payout busy" until the last; coins leave only while the
                          master talks to the changer, and a reset stops the payout)
    commands (stdin, one per line):
      coin T [N]          insert N coins (default 1) of changer type T (0=10 1=50 2=100 3=500 won)
      bill T              insert a bill of type T (0=1000 1=5000 2=10000 3=50000 won)
      manual T N          the changer's payout button: N coins of type T
      fill T N            N coins of type T loaded into its tube by hand (nothing reported)
      fault NAME on|off   changer-silent | bills-silent | payout-busy | slow-payout | tube-jam | dispense-ack-lost | bill-jam
      clear-jam           the jammed bill comes back to the customer, the jammed tube reads again
      stacker-full        the stacker is full (capacity = bills in it)
      empty-stacker       the technician empties the stacker
      cashbox out|in      remove / put back the bill validator's cash box
      reset changer|bills the device resets itself (JUST RESET on its next POLL)
      card R tap [UNITS]  a card on reader R (1 or 2), with UNITS × 10 won of funds (default: not told)
      card R remove       the customer takes the card away (SESSION CANCEL REQUEST)
      card R deny         the next vend is denied
      card R slow POLLS   the next approval comes after POLLS polls (an online authorisation)
      card R refund-fail  the next VEND FAILURE's refund fails (MALFUNCTION C0)
      card R lose-end-session on|off
      card R silent on|off
      card R reset        the reader resets itself
      card R age N        the customer shows the age prompt an ID of age N (DRAVS: approved if N is at
                          least the age set by DRAVP, else too young)
      card R age-unreadable
                          the customer shows a card whose age cannot be read (DRAVS: 00 00)
      card R age-back     the customer presses the back button on the age prompt (DRAVS: not approved)
      card R age-slow POLLS
                          the next age answer (DRAVP, or DRAVS once the customer acted) comes POLLS polls late
      card R age-lose     the next DRAVS answer is lost once on the bus (sent again on the next POLL)
      card R age-support on|off
                          whether the reader answers DRAVP and DRAVS at all (default on)
      card R wait-enabled [S]
                          wait up to S seconds (default 30) until the master has enabled reader R
                          (READER ENABLE, no session or vend open), as a customer waits for the
                          reader to light up before tapping; commands after it wait too
      unplug | replug     remove / restore the interface (USB cable pulled / plugged)
      wait-enabled [S]    wait up to S seconds (default 30) until the master has put the interface
                          in master mode and enabled every present device, as a customer waits for
                          the acceptors to light up; commands after it wait too
      status | help | quit
    """

let hasChanger = !CommandLine.arguments.contains("--no-changer")
let readerFeatures: CashlessFeatures = CommandLine.arguments.contains("--card-first") ? [] : [.alwaysIdle]
let readers = (SimulatorConsole.value(after: "--cashless") ?? "").split(separator: ",").compactMap { number -> SimulatedCashlessReader? in
    switch number {
    case "1": SimulatedCashlessReader(address: .cashless1, features: readerFeatures)
    case "2": SimulatedCashlessReader(address: .cashless2, features: readerFeatures)
    default: nil
    }
}
let hasBills = !CommandLine.arguments.contains("--no-bills")

guard let socketPath = SimulatorConsole.value(after: "--socket") else {
    StandardError.write(usage + "\n")
    exit(64)
}

let simulator: MDBSocketSimulator
do {
    simulator = try MDBSocketSimulator(
        socketPath: socketPath, changer: hasChanger, billValidator: hasBills, readers: readers, report: SimulatorConsole.say)
} catch {
    StandardError.write("mdb-sim: cannot listen on \(socketPath): \(error)\n")
    exit(71)
}
if let level = SimulatorConsole.value(after: "--level").flatMap(UInt8.init) { simulator.with { $0.changer.level = level } }
if let tubes = SimulatorConsole.value(after: "--tubes") {
    let counts = tubes.split(separator: ",").compactMap { Int($0) }
    simulator.with { devices in for (type, count) in counts.enumerated() { devices.changer.tubes[type] = count } }
}
if let interval = SimulatorConsole.value(after: "--coin-interval") {
    guard let milliseconds = Int(interval), milliseconds >= 1 else {
        StandardError.write("mdb-sim: --coin-interval wants milliseconds (1 or more), e.g. 500\n")
        exit(64)
    }
    simulator.with { devices in
        devices.changer.clock = { ContinuousClock.now }
        devices.changer.faults.coinInterval = .milliseconds(milliseconds)
    }
}

func status() -> String {
    simulator.with { devices in
        let changer = devices.changer, bills = devices.bills
        return
            "changer: tubes \(changer.tubes.prefix(4).map(String.init).joined(separator: ",")), accepting \(changer.acceptMask), taken \(changer.coinsTaken.map { changer.value(ofType: $0) }.reduce(0, +)), paid \(changer.coinsPaid.map { changer.value(ofType: $0) }.reduce(0, +)), faults \(changer.faults); bills: accepting \(bills.acceptMask), escrow \(bills.inEscrow.map(String.init) ?? "empty"), high security \(bills.highSecurity.map { "\($0)" } ?? "not set"), stacked \(bills.stacked.map { Int(bills.setup.value(ofType: $0) ?? 0) }.reduce(0, +)), stacker \(bills.stackerCount)/\(bills.stackerCapacity), returned \(bills.returned.count); \(devices.readers.map { "reader \($0.address == .cashless1 ? 1 : 2): \($0.state), charged \($0.charged.map { Int($0) * 10 }), refunded \($0.refunded.map { Int($0) * 10 }), cash sales \($0.cashSales.count), age \($0.requiredAge.map(String.init) ?? "off")\($0.isAwaitingAgeVerification ? " (verifying)" : ""), age verifications [\($0.verificationOutcomes.map(String.init(describing:)).joined(separator: ", "))]; " }.joined())master mode \(devices.masterMode)"
    }
}

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first else { continue }
    let numbers = words.dropFirst().compactMap { Int($0) }
    let flag = words.count == 3 ? words[2] == "on" : false
    switch (command, words.count) {
    case ("coin", 2...3) where numbers.count == words.count - 1 && (0..<16).contains(numbers[0]):
        for _ in 0..<(numbers.count == 2 ? numbers[1] : 1) {
            let routing = simulator.with { $0.changer.insert(type: numbers[0]) }
            SimulatorConsole.say("coin type \(numbers[0]): \(routing)")
        }
    case ("bill", 2) where numbers.count == 1 && (0..<16).contains(numbers[0]):
        simulator.with { $0.bills.insert(type: numbers[0]) }
        SimulatorConsole.say("bill type \(numbers[0]) inserted")
    case ("manual", 3) where numbers.count == 2:
        simulator.with { $0.changer.manualDispense(type: numbers[0], count: numbers[1]) }
        SimulatorConsole.say("manual dispense \(numbers[1]) × type \(numbers[0])")
    case ("fill", 3) where numbers.count == 2 && (0..<16).contains(numbers[0]) && numbers[1] >= 1:
        simulator.with { $0.changer.fillByHand(type: numbers[0], count: numbers[1]) }
        SimulatorConsole.say("filled by hand: \(numbers[1]) × type \(numbers[0])")
    case ("fault", 3):
        let known = simulator.with { devices -> Bool in
            switch words[1] {
            case "changer-silent": devices.changer.faults.silent = flag
            case "bills-silent": devices.bills.faults.silent = flag
            case "payout-busy": devices.changer.faults.payoutBusyPolls = flag ? 20 : 0
            case "slow-payout": devices.changer.faults.slowPayout = flag
            case "tube-jam": devices.changer.faults.tubeJam = flag
            case "dispense-ack-lost": devices.changer.faults.dropDispenseAck = flag
            case "bill-jam": devices.bills.faults.billJam = flag
            default: return false
            }
            return true
        }
        SimulatorConsole.say(known ? "fault \(words[1]) \(flag ? "on" : "off")" : "unknown fault '\(words[1])' (see help)")
    case ("clear-jam", 1):
        simulator.with {
            $0.bills.clearJam()
            $0.changer.clearJam()
        }
        SimulatorConsole.say("jams cleared")
    case ("stacker-full", 1):
        simulator.with { $0.bills.stackerCapacity = $0.bills.stackerCount }
        SimulatorConsole.say("stacker full")
    case ("empty-stacker", 1):
        simulator.with { $0.bills.emptyStacker() }
        SimulatorConsole.say("stacker emptied")
    case ("cashbox", 2):
        simulator.with { words[1] == "out" ? $0.bills.removeCashBox() : $0.bills.replaceCashBox() }
        SimulatorConsole.say("cash box \(words[1])")
    case ("reset", 2) where words[1] == "changer" || words[1] == "bills":
        simulator.with { words[1] == "changer" ? $0.changer.resetItself() : $0.bills.resetItself() }
        SimulatorConsole.say("\(words[1]) reset itself")
    case ("card", 3...4) where (words[1] == "1" || words[1] == "2") && words[2] == "wait-enabled" && numbers.count == words.count - 2:
        let address: MDBPeripheral = words[1] == "1" ? .cashless1 : .cashless2
        let seconds = numbers.count == 2 ? numbers[1] : 30
        let enabled = simulator.wait(timeout: .seconds(seconds)) { devices in
            devices.readers.first { $0.address == address }?.state == .enabled
        }
        SimulatorConsole.say(enabled ? "card reader \(words[1]): enabled" : "card reader \(words[1]): NOT enabled after \(seconds) s: \(status())")
    case ("card", 3...4) where words[1] == "1" || words[1] == "2":
        let address: MDBPeripheral = words[1] == "1" ? .cashless1 : .cashless2
        // nil: no such reader or command; false: an age action while the reader is not prompting.
        let done = simulator.with { devices -> Bool? in
            guard let reader = devices.readers.first(where: { $0.address == address }) else { return nil }
            let argument = words.count == 4 ? words[3] : nil
            switch (words[2], argument) {
            case ("tap", let units): reader.presentCard(funds: units.flatMap(UInt32.init))
            case ("remove", nil): reader.removeCard()
            case ("deny", nil): reader.faults.deny = true
            case ("slow", let polls?): reader.faults.approvalPolls = Int(polls) ?? 0
            case ("refund-fail", nil): reader.faults.refundFails = true
            case ("lose-end-session", let on?): reader.faults.loseEndSession = on == "on"
            case ("silent", let on?): reader.faults.silent = on == "on"
            case ("reset", nil): reader.resetItself()
            case ("age", let age?) where Int(age) != nil: return reader.presentID(age: Int(age) ?? 0)
            case ("age-unreadable", nil): return reader.presentIDWithoutAge()
            case ("age-back", nil): return reader.pressBack()
            case ("age-slow", let polls?): reader.faults.ageAnswerPolls = Int(polls) ?? 0
            case ("age-lose", nil): reader.faults.loseAgeAnswer = true
            case ("age-support", let on?): reader.supportsAgeVerification = on == "on"
            default: return nil
            }
            return true
        }
        switch done {
        case true?: SimulatorConsole.say("card reader \(words[1]): \(words.dropFirst(2).joined(separator: " "))")
        case false?: SimulatorConsole.say("card reader \(words[1]): not prompting for an age (no DRAVS awaited): \(line) ignored")
        case nil: SimulatorConsole.say("? \(line): no such reader (--cashless) or command (try help)")
        }
    case ("unplug", 1): simulator.unplug()
    case ("replug", 1):
        do { try simulator.replug() } catch { SimulatorConsole.say("replug failed: \(error)") }
    case ("wait-enabled", 1...2) where numbers.count == words.count - 1:
        let enabled = simulator.wait(timeout: .seconds(numbers.first ?? 30)) { devices in
            devices.masterMode && (!hasChanger || !devices.changer.acceptMask.isEmpty) && (!hasBills || !devices.bills.acceptMask.isEmpty)
        }
        SimulatorConsole.say(enabled ? "enabled: \(status())" : "NOT enabled after \(numbers.first ?? 30) s: \(status())")
    case ("status", 1): SimulatorConsole.say(status())
    case ("help", _): SimulatorConsole.say(usage)
    case ("quit", _): exit(0)
    default: SimulatorConsole.say("? \(line) (try help)")
    }
}
simulator.unplug()
