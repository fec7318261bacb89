#!/usr/bin/env python3
"""Idle CPU of vendd while its ccTalk host polls the simulated acceptor at 5 Hz.

Starts `cctalk-sim` on a Unix socket and `vendd run --simulate` with the ccTalk sample
(config/examples/cctalk-coins.yaml), its coin_acceptor.port pointed at that socket (poll_interval_ms: 200). After start-up, measures
vendd's CPU time (utime + stime from /proc) over the idle period and the polls the simulator
answered. Prints figures; never fails on a timing.

Usage: scripts/bench/coin-idle.py [bin-dir] [seconds]   (default .build/release, 60 s)
Build first (one product per command: swift build keeps only the last --product):
    for product in vendd cctalk-sim; do swift build -c release --product "$product"; done
"""
import os, re, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release")
SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 60


def clock_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def polls(simulator):
    simulator.stdin.write("status\n")
    simulator.stdin.flush()
    while True:
        line = simulator.stdout.readline()
        match = re.search(r"(\d+) polls", line)
        if match:
            return int(match.group(1))


def main():
    vendd, sim = os.path.join(BIN, "vendd"), os.path.join(BIN, "cctalk-sim")
    for binary in (vendd, sim):
        if not os.path.exists(binary):
            sys.exit(f"{binary} not found: build it with swift build -c release --product {os.path.basename(binary)}")
    with tempfile.TemporaryDirectory() as work:
        socket_path = os.path.join(work, "acceptor.sock")
        with open(os.path.join(ROOT, "config/examples/cctalk-coins.yaml")) as f:
            config = re.sub(r"port: /dev/serial/by-id/\S+", f"port: unix:{socket_path}", f.read())
        config_path = os.path.join(work, "vendd.yaml")
        with open(config_path, "w") as f:
            f.write(config)
        simulator = subprocess.Popen([sim, "--socket", socket_path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        simulator.stdout.readline()  # "listening on …"
        process = subprocess.Popen(
            [vendd, "run", "--config", config_path, "--simulate", "--state-dir", os.path.join(work, "state"),
             "--socket", os.path.join(work, "control.sock")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)
        ticks_before, wall_before, polls_before = clock_ticks(process.pid), time.monotonic(), polls(simulator)
        time.sleep(SECONDS)
        ticks = clock_ticks(process.pid) - ticks_before
        wall = time.monotonic() - wall_before
        answered = polls(simulator) - polls_before
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        simulator.stdin.write("quit\n")
        simulator.stdin.flush()
        simulator.wait(10)
    cpu = ticks / os.sysconf("SC_CLK_TCK") / wall * 100
    print(f"vendd: {vendd}, polling cctalk-sim over a Unix socket ({SECONDS} s)")
    print(f"polls answered     {answered} ({answered / wall:.2f} per second)")
    print(f"idle CPU           {cpu:.3f} % of one core ({ticks} clock ticks in {wall:.1f} s)")


if __name__ == "__main__":
    main()
