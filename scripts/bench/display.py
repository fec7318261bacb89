#!/usr/bin/env python3
"""Memory and CPU of vendd-display: idle, then while events stream.

Starts `vendd run --simulate` and `vendd-display` with the ccTalk sample (config/examples/cctalk-coins.yaml), opens the
kiosk's event stream (/events) as a browser would, and measures vendd-display's resident memory
(VmRSS, VmHWM) and CPU time (utime + stime from /proc):
  - idle: IDLE seconds with one page connected and nothing happening
  - streaming: COINS coins inserted in a loop with `vendctl sim coin` (each one a `coin`,
    `credit` and status round trip, and a view pushed to the page); the stream must deliver the
    final credit.
Prints figures; never fails on a timing.

Usage: scripts/bench/display.py [bin-dir] [coins] [idle-seconds]   (default .build/release, 50, 30)
Build first (one product per command: swift build keeps only the last --product):
    for product in vendd vendctl vendd-display; do swift build -c release --product "$product"; done
"""
import http.client, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release")
COINS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
IDLE = int(sys.argv[3]) if len(sys.argv) > 3 else 30
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def memory(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "Threads"):
                values[key] = int(rest.split()[0])
    return values


def main():
    work = tempfile.mkdtemp(prefix="vendd-display-bench-")
    config = os.path.join(work, "vendd.yaml")
    shutil.copy(os.path.join(ROOT, "config/examples/cctalk-coins.yaml"), config)
    shutil.copytree(os.path.join(ROOT, "config/pictures"), os.path.join(work, "pictures"))
    sock = os.path.join(work, "control.sock")
    # The sample machine takes coins up to 10,000원: the loop's 50 × 100원 stays below it.
    vendd = subprocess.Popen([f"{BIN}/vendd", "run", "--config", config, "--simulate", "--state-dir",
                              f"{work}/state", "--socket", sock], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    vendctl = lambda *a: subprocess.run([f"{BIN}/vendctl", "--socket", sock, *a], capture_output=True, text=True)
    while vendctl("status").returncode != 0:
        time.sleep(0.05)
    vendctl("restock", "all")  # an empty machine refuses coins
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    display = subprocess.Popen([f"{BIN}/vendd-display", "--config", config, "--socket", sock, "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    received = []
    def read_events():
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port)
                connection.request("GET", "/events")
                response = connection.getresponse()
                for line in response:
                    if line.startswith(b"data: "):
                        received.append(line)
            except OSError:
                time.sleep(0.05)
    threading.Thread(target=read_events, daemon=True).start()
    while not received:
        time.sleep(0.05)
    time.sleep(2)
    start_memory = memory(display.pid)
    print(f"vendd-display after start-up, one page connected: VmRSS {start_memory['VmRSS'] / 1024:.1f} MiB, "
          f"{start_memory['Threads']} threads")

    before = cpu_seconds(display.pid)
    time.sleep(IDLE)
    idle = cpu_seconds(display.pid) - before
    print(f"idle {IDLE} s: CPU {idle:.2f} s ({100 * idle / IDLE:.2f} % of one core), "
          f"VmRSS {memory(display.pid)['VmRSS'] / 1024:.1f} MiB")

    events_before = len(received)
    before = cpu_seconds(display.pid)
    started = time.monotonic()
    for _ in range(COINS):
        vendctl("sim", "coin", "100")
    expected = f'"creditText":"{COINS * 100:,}원"'.encode()
    deadline = time.monotonic() + 60
    while not any(expected in line for line in received[events_before:]):
        if time.monotonic() > deadline:
            raise SystemExit(f"the page never saw the credit {COINS * 100:,}원")
        time.sleep(0.01)
    took = time.monotonic() - started
    busy = cpu_seconds(display.pid) - before
    after = memory(display.pid)
    print(f"{COINS} coins in {took:.1f} s ({COINS / took:.1f} coins/s), {len(received) - events_before} views pushed: "
          f"CPU {busy:.2f} s ({100 * busy / took:.1f} % of one core, {1000 * busy / COINS:.1f} ms per coin), "
          f"VmRSS {after['VmRSS'] / 1024:.1f} MiB, peak {after['VmHWM'] / 1024:.1f} MiB")
    for process in (display, vendd):
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
