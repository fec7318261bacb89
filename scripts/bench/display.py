#!/usr/bin/env python3
"""Memory and CPU of vendd-display: idle, then while events stream.

Starts `vendd run --simulate` and `vendd-display` with the ccTalk sample (config/examples/cctalk-coins.yaml), opens the
kiosk's event stream (/events) as a browser would, and measures vendd-display's resident memory
(VmRSS, VmHWM) and CPU time (utime + stime from /proc):
  - idle: IDLE seconds with one page connected and nothing happening
  - streaming: COINS coins inserted in a loop with `vendctl sim coin` (each one a `coin`,
    `credit` and status round trip, and a view pushed to the page); the stream must deliver the
    final credit.
  - under attack: `scripts/hostile-clients.py --http` (ATTACK connections a wave, 3 waves) while a
    visitor asks for the page every 0.2 s (2 s timeout, as scripts/test-kiosk does) and two coins
    go in: the attacker's line, the visitor's answers and slowest, the page's stream following,
    vendd-display's peak threads and memory.
Prints figures; never fails on a timing.

Usage: scripts/bench/display.py [bin-dir] [coins] [idle-seconds] [attack]   (default .build/release, 50, 30, 300;
       run it under `ulimit -n 1024`, as the attacker's descriptors are what bounds a wave)
Build first (one product per command: swift build keeps only the last --product):
    for product in vendd vendctl vendd-display; do swift build -c release --product "$product"; done
"""
import http.client, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time, urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release")
COINS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
IDLE = int(sys.argv[3]) if len(sys.argv) > 3 else 30
ATTACK = int(sys.argv[4]) if len(sys.argv) > 4 else 300
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


def attack(port, vendctl, received, pid):
    """The hostile local program against the kiosk while a visitor and the open page use it."""
    credit = COINS * 100
    attacker = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts/hostile-clients.py"), "--http",
                                 f"127.0.0.1:{port}", str(ATTACK), "3"], stdout=subprocess.PIPE, text=True)
    asked = answered = busy = 0
    slowest = 0.0
    peak_threads = peak_rss = 0
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    while attacker.poll() is None:
        started = time.monotonic()
        try:
            with opener.open(f"http://127.0.0.1:{port}/", timeout=2) as page:
                answered += page.status == 200 and b"<html" in page.read()
        except urllib.error.HTTPError as error:
            busy += error.code == 503
        except OSError:
            pass
        asked += 1
        slowest = max(slowest, time.monotonic() - started)
        if credit < (COINS + 10) * 100:
            vendctl("sim", "coin", "500")
            credit += 500
        now = memory(pid)
        peak_threads = max(peak_threads, now["Threads"])
        peak_rss = max(peak_rss, now["VmRSS"])
        time.sleep(0.2)
    print(attacker.stdout.read().strip())
    expected = f'"creditText":"{credit:,}원"'.encode()
    deadline = time.monotonic() + 10
    while not any(expected in line for line in received) and time.monotonic() < deadline:
        time.sleep(0.05)
    followed = any(expected in line for line in received)
    started = time.monotonic()
    with opener.open(f"http://127.0.0.1:{port}/", timeout=5) as page:
        page.read()
    print(f"under attack: the page answered {answered} of {asked} times ({busy} told busy), slowest {slowest:.2f} s; "
          f"the open page {'followed' if followed else 'did NOT follow'} the coins ({credit:,}원); "
          f"after: answered in {1000 * (time.monotonic() - started):.0f} ms; "
          f"vendd-display peak {peak_threads} threads, VmRSS {peak_rss / 1024:.1f} MiB")


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
    attack(port, vendctl, received, display.pid)
    for process in (display, vendd):
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
