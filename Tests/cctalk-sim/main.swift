import CcTalk
import CcTalkSimulator
import Foundation
import SocketPlug
import VendPOSIX

/// `cctalk-sim --socket PATH [--serial N] [--crc16] [--echo] [--address N] [--hopper ADDRESS:COINS[:TURNS]] [--hopper-low N]`
/// A simulated ccTalk coin acceptor listening on PATH, driven by commands on stdin (one per
/// line); every action is printed on stdout. `help` lists the commands.
let usage = """
    usage: cctalk-sim --socket PATH [--serial N] [--address N] [--crc16] [--echo] [--hopper ADDRESS:COINS[:TURNS]] [--hopper-low N]
      --hopper 3:50       a hopper at address 3 with 50 coins on the same bus (8-bit checksums;
                          its motor turns once per status request, a coin every TURNS turns, default 1)
      --hopper-low 10     the hopper has a low level sensor, triggered below 10 coins (header 217)
    commands (stdin, one per line):
      coin P [N]          insert N coins (default 1) of position P (1-16)
      burst P N           N coins of position P accepted at once, between two polls
      error CODE          an error event (1 reject coin, 14 credit sensor blocked, ...)
      trickle on|off      release at most 2 events per poll
      fault NAME          none | silence | bad-checksum | garbage | partial
      reset               power cycle: event counter 0, inhibits on
      serial N            answer with another serial number
      unplug | replug     remove / restore the socket (USB adapter pulled / plugged)
      hopper-jam N        the hopper's next payout stops after N coins
      hopper-power-cut    the hopper loses power: event counter 0, last payout forgotten
      hopper-refill N     N coins put into the hopper by hand
      status | help | quit
    """

guard let socketPath = SimulatorConsole.value(after: "--socket") else {
    StandardError.write(usage + "\n")
    exit(64)
}
var settings = DeviceSettings()
if let serial = SimulatorConsole.value(after: "--serial").flatMap(UInt32.init) { settings.serialNumber = serial }
if let address = SimulatorConsole.value(after: "--address").flatMap(UInt8.init) { settings.address = address }
if CommandLine.arguments.contains("--crc16") { settings.checksum = .crc16 }

var hopper: SimulatedHopperDevice.Settings?
if let spec = SimulatorConsole.value(after: "--hopper") {
    let parts = spec.split(separator: ":").compactMap { Int($0) }
    guard (2...3).contains(parts.count), (2...255).contains(parts[0]), parts[1] >= 0, parts.count == 2 || parts[2] >= 1 else {
        StandardError.write("cctalk-sim: --hopper wants ADDRESS:COINS[:TURNS], e.g. 3:50 or 3:50:5\n")
        exit(64)
    }
    var settings = SimulatedHopperDevice.Settings()
    settings.address = UInt8(parts[0])
    settings.coins = parts[1]
    if parts.count == 3 { settings.turnsPerCoin = parts[2] }
    hopper = settings
}
if let low = SimulatorConsole.value(after: "--hopper-low") {
    guard hopper != nil, let trigger = Int(low), trigger >= 1 else {
        StandardError.write("cctalk-sim: --hopper-low wants a number of coins (1 or more) and a --hopper\n")
        exit(64)
    }
    hopper?.lowLevelTrigger = trigger
}

let simulator: CcTalkSimulator
do {
    simulator = try CcTalkSimulator(
        socketPath: socketPath, settings: settings,
        echo: CommandLine.arguments.contains("--echo"), hopper: hopper, report: SimulatorConsole.say)
} catch {
    StandardError.write("cctalk-sim: cannot listen on \(socketPath): \(error)\n")
    exit(71)
}

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first else { continue }
    let numbers = words.dropFirst().compactMap { Int($0) }
    switch (command, numbers.count) {
    case ("coin", 1...2) where (1...16).contains(numbers[0]):
        for _ in 0..<(numbers.count == 2 ? numbers[1] : 1) { simulator.insert(numbers[0]) }
    case ("burst", 2): simulator.burst(numbers[0], count: numbers[1])
    case ("error", 1) where (0...255).contains(numbers[0]): simulator.error(UInt8(numbers[0]))
    case ("trickle", 0) where words.count == 2: simulator.setReleasesTwoPerPoll(words[1] == "on")
    case ("fault", 0) where words.count == 2:
        if let fault = WireFault(rawValue: words[1]) {
            simulator.setFault(fault)
        } else {
            SimulatorConsole.say("unknown fault '\(words[1])': \(WireFault.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    case ("reset", 0): simulator.reset()
    case ("serial", 1) where numbers[0] >= 0 && numbers[0] < 1 << 24: simulator.setSerialNumber(UInt32(numbers[0]))
    case ("unplug", 0): simulator.unplug()
    case ("replug", 0):
        do { try simulator.replug() } catch { SimulatorConsole.say("replug failed: \(error)") }
    case ("hopper-jam", 1): simulator.jamHopper(after: numbers[0])
    case ("hopper-power-cut", 0): simulator.cutHopperPower()
    case ("hopper-refill", 1) where numbers[0] >= 1: simulator.refillHopper(numbers[0])
    case ("status", 0): SimulatorConsole.say(simulator.status + (simulator.hopperCoins.map { ", hopper: \($0) coins" } ?? ""))
    case ("help", _): SimulatorConsole.say(usage)
    case ("quit", _): exit(0)
    default: SimulatorConsole.say("? \(line) (try help)")
    }
}
simulator.unplug()
