#!/usr/bin/env python3
"""Render times of the back office's fleet page and a 40-machine route's pick list, on SQLite.

Per fleet size, starts `vendstore serve` with an office: section and its SQLite database in a
temporary directory (no broker: vendstore keeps trying to reach one, which costs nothing here),
fills the database as the ingester would — per machine 30 slots, a state, a zone, a cash row and
7 days of sales (5 a day: a vend-started and a sold vend-ended each) — then logs in and requests
the fleet page and the pick list of a route of 40 machines over HTTP, one at a time. Prints per
size: the pages' time to the last byte, p50 and p99, their sizes, and vendstore's RSS (VmHWM, the
peak). Never fails on a timing; the goals (docs/office.md) are the issue's: a 40-machine pick list
under 100 ms, the fleet page for 10,000 machines under 500 ms.

Usage: scripts/bench/office-render.py [bin-dir] [machines...]   (default .build/release 1000 10000)
Build first: swift build -c release --product vendstore
"""
import http.cookiejar
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
SIZES = [int(n) for n in sys.argv[2:]] or [1000, 10000]
PASSWORD = "benchmark password"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fill(path, machines, now_ms):
    db = sqlite3.connect(path)
    day = 86_400_000
    slots, latest, zones, cash, events, progress = [], [], [], [], [], []
    for m in range(machines):
        name = f"m{m:05d}"
        for s in range(30):
            stock = (m + s) % 9
            slots.append((name, f"{chr(65 + s // 10)}{s % 10}", f"product {s % 12}", "1200", stock, stock, 8, None, now_ms))
        latest.append((name, f'{{"machine":"{name}","online":{"true" if m % 7 else "false"},"state":"in-service","at":{now_ms}}}', now_ms))
        zones.append((name, "cold", "cold", "locked" if m % 50 == 0 else "ok", "4.5", now_ms))
        cash.append((name, "KRW", "100000", "90000", "0", "0" if m % 3 else "1", now_ms))
        seq = 0
        for d in range(7):
            for v in range(5):
                at = now_ms - d * day - v * 60_000 - 1000
                for kind, fields in (("vend-started", f'"vend":{seq // 2 + 1},"slot":"A1","amount":"1200"'),
                                     ("vend-ended", f'"vend":{seq // 2 + 1},"slot":"A1","outcome":"sold","payment":"{"cash" if v % 2 else "cashless1"}"')):
                    seq += 1
                    events.append((name, seq, f"{name}-{seq}", kind, at + seq,
                                   f'{{"id":"{name}-{seq}","seq":{seq},"at":{at + seq},"type":"{kind}","currency":"KRW",{fields}}}', now_ms))
        progress.append((name, seq, seq, now_ms))
    db.executemany("INSERT INTO machine_slots (machine, slot, product, price, currency, available, stock, capacity, earliest_expiry, received_at)"
                   " VALUES (?, ?, ?, 'KRW', ?, ?, ?, ?, ?, ?)", [(a, b, c, d, e, f, g, h, i) for a, b, c, d, e, f, g, h, i in slots])
    db.executemany("INSERT INTO machine_latest (machine, subject, payload, received_at) VALUES (?, 'state', ?, ?)", latest)
    db.executemany("INSERT INTO machine_zones (machine, zone, kind, health, temperature, received_at) VALUES (?, ?, ?, ?, ?, ?)", zones)
    db.executemany("INSERT INTO machine_cash (machine, currency, coins_in, sales, refunds, exact_change_only, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)", cash)
    db.executemany("INSERT INTO events (machine, seq, id, type, at, payload, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)", events)
    db.executemany("INSERT INTO machine_progress (machine, contiguous, highest, updated_at) VALUES (?, ?, ?, ?)", progress)
    db.execute("INSERT INTO office_routes (name, created_by, created_at) VALUES ('bench', 'bench', 0)")
    db.executemany("INSERT INTO office_route_machines (route, position, machine) VALUES ('bench', ?, ?)",
                   [(i, f"m{i * (machines // 40):05d}") for i in range(40)])
    db.commit()
    db.close()
    return len(events)


def timed(opener, url, count):
    times, size = [], 0
    for _ in range(count):
        start = time.monotonic()
        with opener.open(url) as answer:
            size = len(answer.read())
        times.append((time.monotonic() - start) * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], size


def run(machines):
    work = tempfile.mkdtemp(prefix="office-bench.")
    port = free_port()
    database = os.path.join(work, "fleet.db")
    config = os.path.join(work, "vendstore.yaml")
    with open(config, "w") as file:
        file.write(f"mqtt:\n  broker: mqtt://127.0.0.1:9\n  allow_plaintext: true\ndatabase:\n  sqlite: {database}\n"
                   f"office:\n  listen: 127.0.0.1:{port}\n  currencies:\n    - code: KRW\n      format: \"{{amount}}원\"\n")
    log = open(os.path.join(work, "vendstore.log"), "w")
    server = subprocess.Popen([os.path.join(BIN, "vendstore"), "serve", "--config", config], stdout=log, stderr=log)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/login", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        start = time.monotonic()
        events = fill(database, machines, int(time.time() * 1000))
        filled = time.monotonic() - start
        subprocess.run([os.path.join(BIN, "vendstore"), "user", "add", "bench", "--role", "operator", "--config", config],
                       input=PASSWORD + "\n", text=True, check=True, capture_output=True)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        page = opener.open(base + "/login").read().decode()
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        opener.open(base + "/login", urllib.parse.urlencode({"csrf": token, "user": "bench", "password": PASSWORD}).encode()).read()
        fleet = timed(opener, base + "/fleet", 5 if machines > 5000 else 20)
        pick = timed(opener, base + "/pick-list?route=bench", 50)
        with open(f"/proc/{server.pid}/status") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        print(f"{machines} machines ({events} events, filled in {filled:.0f} s): fleet page p50 {fleet[0]:.0f} ms, p99 {fleet[1]:.0f} ms"
              f" ({fleet[2] // 1024} KiB); 40-machine pick list p50 {pick[0]:.1f} ms, p99 {pick[1]:.1f} ms ({pick[2] // 1024} KiB);"
              f" vendstore peak RSS {int(peak) // 1024} MiB", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    for size in SIZES:
        run(size)
