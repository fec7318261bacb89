#!/usr/bin/env python3
"""Relay pulse lengths while vendd's storage is slow: a pulse's end must never wait on a journal
fsync (issue 36). Measured on this machine, outside qemu, whose TCG guest cannot show 2 ms.

Runs `vendd run --simulate --line-log FILE` on the HIL latency bench's machine
(scripts/hil/bench.yaml: one slot, 10원, a 50 ms pulse, no debounce) with a simulated ccTalk
acceptor, twice: on the storage as it is, then with every fsync slowed by at least FSYNC_MS
(scripts/bench/slow-fsync.c, built here with cc and preloaded into vendd alone). Each time:
`vendctl sim press B1` VENDS times, one after the other's pulse and button release and a 100 ms
gap, while a 10원 coin arrives every second (`vendctl sim coin 10`: an fsync'd journal record that
holds the machine's lane while a relay may be pulsing). Each vend's intent and end is journaled
too. The simulated chip stamps every line change with CLOCK_MONOTONIC in vendd's own threads
(the log file is written on a lane of its own); from those stamps:
  - pulse length error: |relay active -> inactive - pulse_ms|
  - press -> relay: the button's edge -> relay active (the vend's intent is fsync'd between)
Beside each run, cyclictest (rt-tests) measures this machine's own floor: a thread at the relay
lane's priority (SCHED_FIFO 1) sleeping 50 ms, a pulse's length, and stamping how late it woke.
A pulse's end is one such wake-up, so vendd cannot do better than the machine does. On a virtual
machine, the hypervisor's steal time (/proc/stat) during the run says how often it ran something else.
Prints figures and never fails on a timing; exits 1 only when vendd could not be run.

Usage: scripts/bench/relay-pulse.py [bin-dir] [vends] [fsync-ms]   (.build/release, 500, 100)
Build first (one product per command: swift build keeps only the last --product):
    for product in vendd vendctl; do swift build -c release --product "$product"; done
"""
import json, math, os, signal, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release")
VENDS = int(sys.argv[2]) if len(sys.argv) > 2 else 500
FSYNC_MS = int(sys.argv[3]) if len(sys.argv) > 3 else 100
GAP_S = 0.1
COIN_INTERVAL_S = 1.0
# The bench machine's lines (scripts/hil/bench.yaml): B1's button and relay.
BUTTON, RELAY = "0", "1"
ACCEPTOR = """coin_acceptor:
  port: /dev/ttyS1
  protocol: cctalk
  channels:
    - { channel: 1, value: "10" }
    - { channel: 4, value: "500" }
"""


def percentile(sorted_values, p):
    """Nearest rank: the smallest value with at least p % of the values at or below it."""
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


def spread(values_ns):
    values = sorted(v / 1e6 for v in values_ns)
    if not values:
        return "none measured"
    return (f"p50 {percentile(values, 50):6.2f} ms   p99 {percentile(values, 99):6.2f} ms   "
            f"max {values[-1]:6.2f} ms   ({len(values)})")


class LineLog:
    """Follows the file vendd's --line-log appends to: (ns, line, direction, active) tuples."""

    def __init__(self, path):
        self.path, self.changes, self.partial, self.file = path, [], "", None
        self.counts = {}

    def read(self):
        if self.file is None:
            if not os.path.exists(self.path):
                return
            self.file = open(self.path)
        text = self.partial + self.file.read()
        lines = text.split("\n")
        self.partial = lines.pop()
        for line in lines:
            ns, _chip, name, direction, level = line.split()
            self.changes.append((int(ns), name, direction, level == "1"))
            key = (name, direction, level == "1")
            self.counts[key] = self.counts.get(key, 0) + 1

    def count(self, name, direction, active):
        """How many such changes were read so far."""
        self.read()
        return self.counts.get((name, direction, active), 0)


class WakeUpFloor:
    """cyclictest at the relay lane's priority, waking every pulse length, while a run goes on;
    its histogram (1 µs buckets, up to 20 ms) gives the machine's own wake-up latency."""

    def __init__(self, interval_ms):
        self.process = None
        try:
            # --laptop: leave /dev/cpu_dma_latency alone, as vendd does.
            self.process = subprocess.Popen(
                ["cyclictest", "--laptop", "-m", "-q", "-p", "1", "-i", str(interval_ms * 1000), "-h", "20000"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except FileNotFoundError:
            pass

    def stop(self):
        """The wake-up latencies (ns), overflows counted at 20 ms, or None without cyclictest."""
        if self.process is None:
            return None
        self.process.send_signal(signal.SIGINT)
        output, _ = self.process.communicate(timeout=30)
        latencies, overflows = [], 0
        for line in output.splitlines():
            fields = line.split()
            if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
                latencies += [int(fields[0]) * 1000] * int(fields[1])
            elif line.startswith("# Histogram Overflows:"):
                overflows = int(line.split(":")[1].split()[0])
        return latencies + [20_000_000] * overflows


def cpu_times():
    """/proc/stat's whole-machine line: (steal, total) in clock ticks. Steal is the time the
    hypervisor ran something else while this machine's CPUs had work: a wake-up due then is late."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:9]]
    return fields[7], sum(fields)


def above(values_ns, limit_ms):
    if not values_ns:
        return "none measured"
    late = sum(1 for v in values_ns if v > limit_ms * 1_000_000)
    return f"{late} of {len(values_ns)} ({100 * late / len(values_ns):.2f} %) over {limit_ms} ms"


def wait_until(condition, timeout, step=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def build_shim(work):
    shim = os.path.join(work, "slow-fsync.so")
    subprocess.run(["cc", "-O2", "-Wall", "-shared", "-fPIC", "-o", shim,
                    os.path.join(ROOT, "scripts/bench/slow-fsync.c"), "-ldl"], check=True)
    return shim


def coin_feeder(vendctl, stop, counts):
    """A 10원 coin every second until stopped; each answer comes once it is journaled."""
    while not stop.wait(COIN_INTERVAL_S):
        counts["sent"] += 1
        if vendctl("sim", "coin", "10").returncode == 0:
            counts["accepted"] += 1


def one_run(work, label, preload):
    config = os.path.join(work, "bench.yaml")
    with open(os.path.join(ROOT, "scripts/hil/bench.yaml")) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text + ACCEPTOR)
    sock, log_path, report = (os.path.join(work, name) for name in ("control.sock", "lines.log", "fsync-report"))
    env = dict(os.environ)
    if preload:
        env.update(LD_PRELOAD=preload, SLOW_FSYNC_MS=str(FSYNC_MS), SLOW_FSYNC_REPORT=report)
    vendd_log = open(os.path.join(work, "vendd.log"), "w")
    floor = WakeUpFloor(pulse_ms())
    steal_before, total_before = cpu_times()
    process = subprocess.Popen(
        [os.path.join(BIN, "vendd"), "run", "--config", config, "--simulate", "--state-dir",
         os.path.join(work, "state"), "--socket", sock, "--line-log", log_path],
        env=env, stdout=vendd_log, stderr=subprocess.STDOUT)
    try:
        vendctl = lambda *a: subprocess.run([os.path.join(BIN, "vendctl"), "--socket", sock, *a],
                                            capture_output=True, text=True)
        if not wait_until(lambda: vendctl("status").returncode == 0, 30, 0.1):
            sys.exit(f"vendd did not answer within 30 s ({label}); its log: {vendd_log.name}")
        vendctl("restock", "all")
        for _ in range(VENDS // 50 + 1):  # the credit for every vend, 500원 a coin
            vendctl("sim", "coin", "500")
        log = LineLog(log_path)
        stop, coins = threading.Event(), {"sent": 0, "accepted": 0}
        feeder = threading.Thread(target=coin_feeder, args=(vendctl, stop, coins), daemon=True)
        feeder.start()
        missed = 0
        for _ in range(VENDS):
            released, ended = log.count(BUTTON, "in", False), log.count(RELAY, "out", False)
            vendctl("sim", "press", "B1")
            # This vend's pulse over and the finger off the button, then the gap.
            if not wait_until(lambda: log.count(BUTTON, "in", False) > released and log.count(RELAY, "out", False) > ended, 5):
                missed += 1
            time.sleep(GAP_S)
        stop.set()
        feeder.join()
        wait_until(lambda: json.loads(vendctl("--json", "status").stdout)["status"]["books"]["itemsSold"] >= VENDS - missed, 30, 0.2)
        books = json.loads(vendctl("--json", "status").stdout)["status"]["books"]
        process.send_signal(signal.SIGTERM)
        status = process.wait(60)
    finally:
        if process.poll() is None:  # the run broke off: vendd is not left running
            process.kill()
            process.wait()
        wake_ups = floor.stop()
        steal_after, total_after = cpu_times()
        steal = (steal_after - steal_before) / max(1, total_after - total_before)
    vendd_log.close()
    log.count(RELAY, "out", False)  # what was written up to the exit
    fsyncs = open(report).read().strip() if preload and os.path.exists(report) else None
    for name in (log_path, report, sock):
        if os.path.exists(name):
            os.unlink(name)
    subprocess.run(["rm", "-rf", os.path.join(work, "state")], check=True)
    return analyse(log.changes), books, coins, missed, status, fsyncs, wake_ups, steal


def analyse(changes):
    """Pulse length errors against pulse_ms, and press -> relay, in nanoseconds."""
    pulse_ns = pulse_ms() * 1_000_000
    errors, lengths, latencies = [], [], []
    pressed = on = None
    for ns, name, direction, active in changes:
        if (name, direction) == (BUTTON, "in") and active:
            pressed = ns
        elif (name, direction) == (RELAY, "out") and active:
            on = ns
            if pressed is not None:
                latencies.append(ns - pressed)
                pressed = None
        elif (name, direction) == (RELAY, "out") and on is not None:
            lengths.append(ns - on)
            errors.append(abs(ns - on - pulse_ns))
            on = None
    return errors, lengths, latencies


def pulse_ms():
    with open(os.path.join(ROOT, "scripts/hil/bench.yaml")) as f:
        for line in f:
            if "pulse_ms:" in line:
                return int(line.split("pulse_ms:")[1].split(",")[0])
    sys.exit("scripts/hil/bench.yaml names no pulse_ms")


def main():
    for product in ("vendd", "vendctl"):
        if not os.path.exists(os.path.join(BIN, product)):
            sys.exit(f"{BIN}/{product} not found: build it with swift build -c release --product {product}")
    print(f"vendd: {BIN}/vendd, {VENDS} vends of a {pulse_ms()} ms pulse (scripts/hil/bench.yaml, simulated chip), "
          f"a 10원 coin every {COIN_INTERVAL_S:g} s; load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory() as work:
        shim = build_shim(work)
        for label, preload in (("storage as it is", None), (f"every fsync slowed by {FSYNC_MS} ms", shim)):
            (errors, lengths, latencies), books, coins, missed, status, fsyncs, wake_ups, steal = one_run(work, label, preload)
            print(f"{label}:")
            if fsyncs:
                print(f"  slow-fsync.so        {fsyncs}")
            print(f"  pulse length error   {spread(errors)}")
            print(f"                       {above(errors, 2)}")
            if wake_ups is None:
                print("  machine's wake-up    cyclictest not found: apt-get install rt-tests for the floor")
            else:
                print(f"  machine's wake-up    {spread(wake_ups)}")
                print(f"                       {above(wake_ups, 2)}")
            print(f"  hypervisor steal     {steal * 100:.2f} % of the CPU time (/proc/stat)")
            if lengths:
                print(f"  pulse lengths        {min(lengths) / 1e6:.2f} to {max(lengths) / 1e6:.2f} ms")
            print(f"  press -> relay       {spread(latencies)}")
            print(f"  books                sold {books['itemsSold']}, failed {books['failedVends']}, unknown "
                  f"{books['unknownOutcomes']}; coins sent {coins['sent']}, accepted {coins['accepted']}; "
                  f"vends without a pulse {missed}; vendd exit status {status}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
