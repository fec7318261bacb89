#!/usr/bin/env python3
"""Start-up and shutdown figures for vendd, measured the way systemd sees them.

Starts `vendd run --simulate` with NOTIFY_SOCKET pointing at a datagram socket of ours and times
  - exec -> READY=1           (start-up, as Type=notify reports it)
  - SIGTERM -> process exit   (shutdown with state saved)
and, after start-up, the daemon's resident memory (VmRSS) and its CPU use while idle.
Prints figures; never fails on a timing.

Usage: scripts/bench/lifecycle.py [path/to/vendd] [runs]
"""
import os, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENDD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/vendd")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
IDLE_SECONDS = 60


def clock_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def one_run(work, measure_idle):
    notify_path = os.path.join(work, "notify.sock")
    if os.path.exists(notify_path):
        os.unlink(notify_path)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(30)
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    started = time.monotonic()
    process = subprocess.Popen(
        [VENDD, "run", "--config", os.path.join(ROOT, "config/vendd.yaml"), "--simulate",
         "--state-dir", os.path.join(work, "state"), "--socket", os.path.join(work, "control.sock")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        message = notify.recv(4096).decode()
        if "READY=1" in message:
            ready = time.monotonic() - started
            break
    idle = None
    if measure_idle:
        time.sleep(2)
        ticks_before, wall_before = clock_ticks(process.pid), time.monotonic()
        time.sleep(IDLE_SECONDS)
        ticks = clock_ticks(process.pid) - ticks_before
        idle = (ticks / os.sysconf("SC_CLK_TCK")) / (time.monotonic() - wall_before) * 100
        rss = rss_kib(process.pid)
    else:
        rss = rss_kib(process.pid)
    stopping = time.monotonic()
    process.send_signal(signal.SIGTERM)
    status = process.wait(30)
    stopped = time.monotonic() - stopping
    notify.close()
    return ready, stopped, rss, idle, status


def main():
    if not os.path.exists(VENDD):
        sys.exit(f"{VENDD} not found: build it first (swift build -c release --product vendd)")
    with tempfile.TemporaryDirectory() as work:
        runs = [one_run(work, measure_idle=False) for _ in range(RUNS)]
        _, _, rss, idle, _ = one_run(work, measure_idle=True)
    ready = [r[0] * 1000 for r in runs]
    stop = [r[1] * 1000 for r in runs]
    print(f"vendd: {VENDD} ({RUNS} runs, sample config, simulated hardware)")
    print(f"start -> READY=1   median {statistics.median(ready):7.1f} ms   max {max(ready):7.1f} ms")
    print(f"SIGTERM -> exit    median {statistics.median(stop):7.1f} ms   max {max(stop):7.1f} ms")
    print(f"exit statuses      {sorted(set(r[4] for r in runs))}")
    print(f"resident memory    {rss / 1024:.1f} MiB after start-up")
    print(f"idle CPU           {idle:.3f} % of one core over {IDLE_SECONDS} s")


if __name__ == "__main__":
    main()
