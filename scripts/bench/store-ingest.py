#!/usr/bin/env python3
"""Ingest rate of vendstore into SQLite and into PostgreSQL, with 1,000 simulated machines.

Per engine, starts a Mosquitto of its own on 127.0.0.1 (in the clear, anonymous), vendstore with
its database in a temporary directory (SQLite: WAL, synchronous=FULL; PostgreSQL: a cluster made
with initdb, its defaults: fsync and synchronous_commit on), then `vendstore-load`: the machines
publish vendd's event payloads with sequences as fast as a window of unacknowledged events
allows, and resend what stays unacknowledged; then as many other machines at a steady 1,000
events/s. Prints, per engine: events acknowledged per second (sustained, first publish to last
acknowledgement), latency p50/p99 from an event's first publish to the `stored` acknowledgement
that covers it (so it includes the ack coalescing, ingest.ack_milliseconds) in both runs,
vendstore's peak RSS, `vendstore status`'s gap-list line after, and where the first run's CPU
went (vendstore, the broker, the load generator, PostgreSQL: the four share the box's cores, so
vendstore's own figure is events per CPU second of its own). The first run is the catch-up
figure: every machine's outbox is full at the start (machines back after an outage), so "all
stored s" is the time to an empty gap list. Never fails on a timing.

Usage: scripts/bench/store-ingest.py [bin-dir] [events-per-machine] [machines]
       (default .build/release, 100, 1000)
Build first: swift build -c release --product vendstore && swift build -c release --product vendstore-load
"""
import glob, json, os, random, resource, shutil, signal, socket, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release")
EVENTS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
MACHINES = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
STEADY_RATE = 1000
STEADY_EVENTS = 10


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, what):
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{what} did not listen on {port}")


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """utime + stime of a process so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (FileNotFoundError, ProcessLookupError):
        return 0.0


def postgres_seconds():
    """CPU of every PostgreSQL server process now running (the bench's cluster is the only one)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip().startswith("postgres"):
                        total += cpu_seconds(entry)
            except OSError:
                pass
    return total


def postgres_bin():
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    if not versions:
        sys.exit("PostgreSQL's server is not installed (apt-get install postgresql)")
    return versions[-1]


def start_broker(work, name):
    """A Mosquitto of the engine's own: no session or retained acknowledgement of another run."""
    port = free_port()
    conf = os.path.join(work, f"mosquitto-{name}.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n"
                f"max_inflight_messages 0\nuser {os.environ.get('USER', 'root')}\n")
    broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, "mosquitto")
    return broker, port


def run_engine(name, database_yaml, work):
    broker, broker_port = start_broker(work, name)
    try:
        return run_store_and_load(name, database_yaml, broker, broker_port, work)
    finally:
        broker.terminate()
        broker.wait()


def run_store_and_load(name, database_yaml, broker, broker_port, work):
    config = os.path.join(work, f"{name}.yaml")
    with open(config, "w") as f:
        f.write(f"mqtt:\n  broker: mqtt://127.0.0.1:{broker_port}\n  allow_plaintext: true\n  client_id: bench-{name}\n"
                f"database:\n{database_yaml}")
    log = open(os.path.join(work, f"{name}.log"), "w")
    store = subprocess.Popen([os.path.join(BIN, "vendstore"), "--config", config], stdout=log, stderr=log)
    time.sleep(1)

    def load(first_machine, events, rate):
        run = subprocess.run([os.path.join(BIN, "vendstore-load"), "--broker", f"mqtt://127.0.0.1:{broker_port}",
                              "--machines", str(MACHINES), "--first-machine", str(first_machine),
                              "--events-per-machine", str(events), "--window", "20000", "--rate", str(rate),
                              "--resend-milliseconds", "10000", "--timeout-seconds", "900"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{name}: vendstore-load failed: {run.stdout} {run.stderr}", file=sys.stderr)
        return json.loads(run.stdout.strip().splitlines()[-1])

    # Every outbox full at once (catch-up, the sustained rate), then other machines at a steady
    # STEADY_RATE (the latency of an ordinary day, far above a 5,000-machine fleet's 30/s).
    # Where the catch-up's CPU goes: vendstore, the broker, the load generator, the database.
    before = (cpu_seconds(store.pid), cpu_seconds(broker.pid), resource.getrusage(resource.RUSAGE_CHILDREN), postgres_seconds())
    result = load(1, EVENTS, 0)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["cpu"] = {
        "vendstore": cpu_seconds(store.pid) - before[0],
        "broker": cpu_seconds(broker.pid) - before[1],
        "load": children.ru_utime + children.ru_stime - before[2].ru_utime - before[2].ru_stime,
        "database": postgres_seconds() - before[3],
    }
    steady = load(MACHINES + 1, STEADY_EVENTS, STEADY_RATE)
    result["steady_p50_ms"], result["steady_p99_ms"] = steady["latency_p50_ms"], steady["latency_p99_ms"]
    rss = peak_rss_kib(store.pid)
    store.send_signal(signal.SIGTERM)
    store.wait(timeout=30)
    result["rss_mib"] = rss / 1024
    # The gap list, as the operator reads it: empty once every machine's events are all stored.
    status = subprocess.run([os.path.join(BIN, "vendstore"), "status", "--config", config], capture_output=True, text=True)
    result["gaps"] = status.stdout.strip().splitlines()[-1] if status.returncode == 0 else f"status failed: {status.stderr.strip()}"
    return result


def main():
    for binary in ("vendstore", "vendstore-load"):
        if not os.path.exists(os.path.join(BIN, binary)):
            sys.exit(f"{BIN}/{binary} not found: swift build -c release --product {binary}")
    work = tempfile.mkdtemp(prefix="vendstore-bench-")
    pg = postgres_bin()
    pg_port = free_port()
    results = {}
    try:
        results["sqlite"] = run_engine("sqlite", f"  sqlite: {work}/fleet.db\n", work)
        data = os.path.join(work, "pg")
        # PostgreSQL refuses to run as root: then its tools run as Debian's postgres user, who owns the directory.
        as_server = []
        if os.geteuid() == 0:
            import pwd
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                sys.exit("running as root, which PostgreSQL refuses, and there is no 'postgres' user to run it as")
            os.chown(work, user.pw_uid, user.pw_gid)
            as_server = ["/usr/sbin/runuser", "-u", "postgres", "--"]
        subprocess.run(as_server + [f"{pg}/initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(as_server + [f"{pg}/pg_ctl", "-D", data, "-l", f"{work}/pg.log", "-w", "-o",
                        f"-c listen_addresses=127.0.0.1 -p {pg_port} -k {work}", "start"], check=True,
                       stdout=subprocess.DEVNULL)
        try:
            conninfo = f"host=127.0.0.1 port={pg_port} user=postgres dbname=postgres"
            results["postgresql"] = run_engine("postgresql", f"  postgresql: \"{conninfo}\"\n", work)
        finally:
            subprocess.run(as_server + [f"{pg}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"], stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{MACHINES} machines, {EVENTS} events each, {os.cpu_count()} cores")
    print(f"catch-up: every outbox full at the start; steady: {MACHINES} other machines at {STEADY_RATE} events/s in all")
    print(f"{'':<12}{'catch-up':>41}{'steady':>18}")
    print(f"{'engine':<12}{'events/s':>10}{'all stored s':>14}{'p50 ms':>9}{'p99 ms':>8}{'p50 ms':>9}{'p99 ms':>9}{'resent':>8}"
          f"{'RSS MiB':>9}  gap list after")
    for name, r in results.items():
        print(f"{name:<12}{r['rate']:>10.0f}{r['seconds']:>14.1f}{r['latency_p50_ms']:>9.0f}{r['latency_p99_ms']:>8.0f}"
              f"{r['steady_p50_ms']:>9.1f}{r['steady_p99_ms']:>9.1f}{r['resent']:>8}{r['rss_mib']:>9.1f}  {r['gaps']}")
    # The box's two cores are shared by all four: vendstore's own figure is events per CPU second.
    print(f"catch-up CPU, seconds per 100,000 events (events per vendstore CPU second)")
    for name, r in results.items():
        events = MACHINES * EVENTS
        parts = "  ".join(f"{part} {seconds * 100_000 / events:5.1f}" for part, seconds in r["cpu"].items())
        print(f"{name:<12}{parts}   ({events / max(r['cpu']['vendstore'], 0.01):,.0f} events/s)")


if __name__ == "__main__":
    main()
