#!/usr/bin/env python3
"""Render times of one busy machine's page (its charts) and its cash collections, on SQLite.

Starts `vendstore serve` with an office: section on a fresh SQLite database, fills it as the
ingester would for one machine — 30 slots, SALES sales a day for 14 days (a vend-started and a
sold vend-ended each), two temperature zones with a reading every minute for the 7 days the store
keeps (10,080 each), 52 collections with the driver's counts — logs in as an operator and requests
/machine and /cash one at a time over HTTP. Prints their time to the last byte, p50 and p99, and
their sizes. Never fails on a timing. The port and timing helpers are office-render.py's.

Usage: scripts/bench/office-machine-render.py [bin-dir] [SALES]   (default .build/release 200)
"""
import http.cookiejar
import importlib.util
import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

spec = importlib.util.spec_from_file_location("office_render", os.path.join(os.path.dirname(os.path.abspath(__file__)), "office-render.py"))
render = importlib.util.module_from_spec(spec)
spec.loader.exec_module(render)
BIN = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
SALES = int(sys.argv[2]) if len(sys.argv) > 2 else 200
PASSWORD = "benchmark password"


def fill(path, now):
    db = sqlite3.connect(path)
    day, minute = 86_400_000, 60_000
    db.executemany("INSERT INTO machine_slots (machine, slot, product, price, currency, available, stock, capacity, received_at)"
                   " VALUES ('m1', ?, ?, '1200', 'KRW', 5, 5, 8, ?)",
                   [(f"{chr(65 + s // 10)}{s % 10}", f"product {s % 12}", now) for s in range(30)])
    db.execute("INSERT INTO machine_latest (machine, subject, payload, received_at) VALUES ('m1', 'state', ?, ?)",
               (f'{{"machine":"m1","online":true,"state":"in-service","at":{now}}}', now))
    events, seq = [], 0
    for d in range(14):
        for v in range(SALES):
            at = now - d * day - v * (day // SALES // 2) - 1000
            for kind, fields in (("vend-started", f'"vend":{seq // 2 + 1},"product":"product {v % 12}","amount":"1200"'),
                                 ("vend-ended", f'"vend":{seq // 2 + 1},"outcome":"sold","payment":"{"cash" if v % 2 else "cashless1"}"')):
                seq += 1
                events.append(("m1", seq, f"m1-{seq}", kind, at, f'{{"id":"m1-{seq}","seq":{seq},"at":{at},"type":"{kind}","currency":"KRW",{fields}}}', now))
    for number in range(1, 53):
        seq += 1
        at = now - (53 - number) * 7 * day
        events.append(("m1", seq, f"m1-{seq}", "cash-collected", at, "{}", now))
        db.execute("INSERT INTO collections (machine, seq, collection, at, currency, total, received_at) VALUES ('m1', ?, ?, ?, 'KRW', '5000', ?)",
                   (seq, number, at, now))
        for table, extra in (("collection_denominations", ""), ("collection_counts", ", entered_by, entered_at")):
            db.executemany(f"INSERT INTO {table} (machine, seq, kind, value, count{extra}) VALUES ('m1', ?, ?, ?, ?{', ?, ?' if extra else ''})",
                           [(seq, k, v, c) + (("dan", now) if extra else ()) for k, v, c in (("coin", "100", 10), ("coin", "500", 4), ("bill", "1000", 2))])
    db.executemany("INSERT INTO events (machine, seq, id, type, at, payload, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)", events)
    for zone in ("cold", "hot"):
        db.execute("INSERT INTO machine_zones (machine, zone, kind, health, temperature, set_point, received_at) VALUES ('m1', ?, ?, 'ok', '4', '4', ?)",
                   (zone, zone, now))
        db.executemany("INSERT INTO zone_readings (machine, zone, minute, at, temperature) VALUES ('m1', ?, ?, ?, ?)",
                       [(zone, (now - m * minute) // minute, now - m * minute, f"{4 + math.sin(m / 40):.1f}") for m in range(7 * 24 * 60)])
    db.commit()
    db.close()
    return len(events)


def main():
    work = tempfile.mkdtemp(prefix="office-machine-bench.")
    port = render.free_port()
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
        events = fill(database, int(time.time() * 1000))
        subprocess.run([os.path.join(BIN, "vendstore"), "user", "add", "bench", "--role", "operator", "--config", config],
                       input=PASSWORD + "\n", text=True, check=True, capture_output=True)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        page = opener.open(base + "/login").read().decode()
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        opener.open(base + "/login", urllib.parse.urlencode({"csrf": token, "user": "bench", "password": PASSWORD}).encode()).read()
        machine = render.timed(opener, base + "/machine?id=m1", 30)
        cash = render.timed(opener, base + "/cash?id=m1", 30)
        print(f"one machine, {SALES} sales a day ({events} events), 2 zones x 10,080 readings, 52 collections:"
              f" machine page p50 {machine[0]:.0f} ms, p99 {machine[1]:.0f} ms ({machine[2] // 1024} KiB);"
              f" cash collections p50 {cash[0]:.0f} ms, p99 {cash[1]:.0f} ms ({cash[2] // 1024} KiB)", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
