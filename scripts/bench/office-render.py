#!/usr/bin/env python3
"""Render times of the back office's fleet page and a 40-machine route's pick list, on SQLite
and on PostgreSQL.

Per engine and fleet size, starts `vendstore serve` with an office: section on a database in a
temporary directory (SQLite: a file; PostgreSQL: initdb, one server for the run, a database per
size; no broker: vendstore keeps trying to reach one, which costs nothing here) so that it creates
the schema, stops it, fills the database as the ingester would — per machine 30 slots, a state, a
zone, a cash row and 7 days of sales (5 a day: a vend-started and a sold vend-ended each) — and
takes the sales tables away as a store of schema 4 would not have them, then starts it again:
migration 5 fills them from the events (its time is printed). Then it logs in and requests the
fleet page and the pick list of a route of 40 machines over HTTP, one at a time. Prints per size:
the pages' time to the last byte, p50 and p99, their sizes, and vendstore's RSS (VmHWM, the
peak). Never fails on a timing; the goals (docs/office.md) are the issue's: a 40-machine pick list
under 100 ms, the fleet page for 10,000 machines under 500 ms.

Usage: scripts/bench/office-render.py [bin-dir] [machines...]   (default .build/release 1000 10000)
VENDSTORE_BENCH_ENGINES=sqlite,postgresql (the default) picks the engines.
Build first: swift build -c release --product vendstore
"""
import csv
import glob
import http.cookiejar
import io
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
ENGINES = os.environ.get("VENDSTORE_BENCH_ENGINES", "sqlite,postgresql").split(",")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rows(machines, now_ms):
    """The tables' rows as the ingester would have stored them, by table and column list."""
    day = 86_400_000
    tables = {name: [] for name in ("slots", "latest", "zones", "cash", "events", "progress")}
    for m in range(machines):
        name = f"m{m:05d}"
        for s in range(30):
            stock = (m + s) % 9
            tables["slots"].append((name, f"{chr(65 + s // 10)}{s % 10}", f"product {s % 12}", "1200", "KRW", stock, stock, 8, now_ms))
        tables["latest"].append((name, "state", f'{{"machine":"{name}","online":{"true" if m % 7 else "false"},"state":"in-service","at":{now_ms}}}', now_ms))
        tables["zones"].append((name, "cold", "cold", "locked" if m % 50 == 0 else "ok", "4.5", now_ms))
        tables["cash"].append((name, "KRW", "100000", "90000", "0", "0" if m % 3 else "1", now_ms))
        seq = 0
        for d in range(7):
            for v in range(5):
                at = now_ms - d * day - v * 60_000 - 1000
                payment = "cash" if v % 2 else "cashless1"
                for kind, fields in (("vend-started", f'"vend":{seq // 2 + 1},"slot":"A1","amount":"1200"'),
                                     ("vend-ended", f'"vend":{seq // 2 + 1},"slot":"A1","amount":"1200","outcome":"sold","payment":"{payment}"')):
                    seq += 1
                    tables["events"].append((name, seq, f"{name}-{seq}", kind, at + seq,
                                             f'{{"id":"{name}-{seq}","seq":{seq},"at":{at + seq},"type":"{kind}","currency":"KRW",{fields}}}', now_ms))
        tables["progress"].append((name, seq, seq, now_ms))
    route = [("bench", i, f"m{i * (machines // 40):05d}") for i in range(40)]
    return [
        ("machine_slots", "machine, slot, product, price, currency, available, stock, capacity, received_at", tables["slots"]),
        ("machine_latest", "machine, subject, payload, received_at", tables["latest"]),
        ("machine_zones", "machine, zone, kind, health, temperature, received_at", tables["zones"]),
        ("machine_cash", "machine, currency, coins_in, sales, refunds, exact_change_only, received_at", tables["cash"]),
        ("events", "machine, seq, id, type, at, payload, received_at", tables["events"]),
        ("machine_progress", "machine, contiguous, highest, updated_at", tables["progress"]),
        ("office_routes", "name, created_by, created_at", [("bench", "bench", 0)]),
        ("office_route_machines", "route, position, machine", route),
    ], len(tables["events"])


# What a store of schema 4 holds: no sales tables (migration 5 makes and fills them).
UNDO_MIGRATION_5 = ["DROP TABLE sales_days", "DROP TABLE slot_sales_days", "DELETE FROM schema_migrations WHERE version = 5"]


def fill_sqlite(path, machines, now_ms):
    db = sqlite3.connect(path)
    tables, events = rows(machines, now_ms)
    for table, columns, values in tables:
        marks = ", ".join("?" * len(columns.split(",")))
        db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)
    for statement in UNDO_MIGRATION_5:
        db.execute(statement)
    db.commit()
    db.close()
    return events


def fill_postgresql(conninfo, machines, now_ms):
    tables, events = rows(machines, now_ms)
    for table, columns, values in tables:
        text = io.StringIO()
        csv.writer(text).writerows(values)
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", conninfo, "-c", f"COPY {table} ({columns}) FROM STDIN WITH (FORMAT csv)"],
                       input=text.getvalue(), text=True, check=True)
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", conninfo, "-c", "; ".join(UNDO_MIGRATION_5)], check=True)
    return events


class Postgres:
    """One PostgreSQL for the run: initdb in a temporary directory, fsync on (as in production)."""

    def __init__(self):
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))[-1]
        self.work = tempfile.mkdtemp(prefix="office-bench-pg.")
        self.port = free_port()
        # PostgreSQL refuses root: then Debian's postgres user runs it.
        self.prefix = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if os.getuid() == 0:
            shutil.chown(self.work, "postgres", "postgres")
        subprocess.run(self.prefix + [f"{self.bin}/initdb", "-D", f"{self.work}/data", "-U", "postgres", "-A", "trust", "-E", "UTF8"],
                       check=True, capture_output=True)
        subprocess.run(self.prefix + [f"{self.bin}/pg_ctl", "-D", f"{self.work}/data", "-l", f"{self.work}/log", "-w", "-o",
                                      f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.work}", "start"], check=True, capture_output=True)
        self.count = 0

    def database(self):
        self.count += 1
        name = f"fleet{self.count}"
        subprocess.run(["psql", "-q", self.conninfo("postgres"), "-c", f"CREATE DATABASE {name}"], check=True)
        return self.conninfo(name)

    def conninfo(self, name):
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={name}"

    def stop(self):
        subprocess.run(self.prefix + [f"{self.bin}/pg_ctl", "-D", f"{self.work}/data", "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(self.work, ignore_errors=True)


def timed(opener, url, count):
    times, size = [], 0
    for _ in range(count):
        start = time.monotonic()
        with opener.open(url) as answer:
            size = len(answer.read())
        times.append((time.monotonic() - start) * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], size


def start(config, log, base):
    server = subprocess.Popen([os.path.join(BIN, "vendstore"), "serve", "--config", config], stdout=log, stderr=log)
    for _ in range(6000):
        try:
            urllib.request.urlopen(base + "/login", timeout=1)
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"vendstore exited with status {server.returncode}: see its log")
            time.sleep(0.05)
    raise SystemExit("vendstore did not answer in 5 minutes")


def stop(server):
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)


def run(engine, machines, postgres):
    work = tempfile.mkdtemp(prefix="office-bench.")
    port = free_port()
    database = os.path.join(work, "fleet.db") if engine == "sqlite" else postgres.database()
    config = os.path.join(work, "vendstore.yaml")
    where = f"sqlite: {database}" if engine == "sqlite" else f'postgresql: "{database}"'
    with open(config, "w") as file:
        file.write(f"mqtt:\n  broker: mqtt://127.0.0.1:9\n  allow_plaintext: true\ndatabase:\n  {where}\n"
                   f"office:\n  listen: 127.0.0.1:{port}\n  currencies:\n    - code: KRW\n      format: \"{{amount}}원\"\n")
    log = open(os.path.join(work, "vendstore.log"), "w")
    base = f"http://127.0.0.1:{port}"
    server = None
    try:
        stop(start(config, log, base))
        begun = time.monotonic()
        now_ms = int(time.time() * 1000)
        events = fill_sqlite(database, machines, now_ms) if engine == "sqlite" else fill_postgresql(database, machines, now_ms)
        filled = time.monotonic() - begun
        begun = time.monotonic()
        server = start(config, log, base)
        migrated = time.monotonic() - begun
        subprocess.run([os.path.join(BIN, "vendstore"), "user", "add", "bench", "--role", "operator", "--config", config],
                       input=PASSWORD + "\n", text=True, check=True, capture_output=True)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        page = opener.open(base + "/login").read().decode()
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        opener.open(base + "/login", urllib.parse.urlencode({"csrf": token, "user": "bench", "password": PASSWORD}).encode()).read()
        fleet = timed(opener, base + "/fleet", 20)
        visit = timed(opener, base + "/visit", 20)
        pick = timed(opener, base + "/pick-list?route=bench", 50)
        with open(f"/proc/{server.pid}/status") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        print(f"{engine} {machines} machines ({events} events, filled in {filled:.0f} s, migration 5 and start {migrated:.1f} s):"
              f" fleet page p50 {fleet[0]:.0f} ms, p99 {fleet[1]:.0f} ms ({fleet[2] // 1024} KiB);"
              f" machines to visit p50 {visit[0]:.0f} ms, p99 {visit[1]:.0f} ms;"
              f" 40-machine pick list p50 {pick[0]:.1f} ms, p99 {pick[1]:.1f} ms ({pick[2] // 1024} KiB);"
              f" vendstore peak RSS {int(peak) // 1024} MiB", flush=True)
    finally:
        if server is not None:
            stop(server)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    postgres = Postgres() if "postgresql" in ENGINES else None
    try:
        for engine in ENGINES:
            for size in SIZES:
                run(engine, size, postgres)
    finally:
        if postgres is not None:
            postgres.stop()
