#!/usr/bin/env python3
"""Vend and coin latency of vendd with its MQTT broker down, against vendd without MQTT.

Runs `vendd run --simulate` with the ccTalk sample (config/examples/cctalk-coins.yaml) three times:
  - no-mqtt:     no `mqtt:` section (no outbox, no connection)
  - refused:     `mqtt:` pointing at a loopback port where nothing listens (connection refused,
                 libmosquitto retrying every 1 to 5 s)
  - unreachable: `mqtt:` pointing at 192.0.2.1 (TEST-NET-1: packets go nowhere, connects hang)
Each time it buys SALES items over the control socket: a 500 coin ("sim-coin", answered once the
coin is journaled and credited), then "select" (answered once the vend's intent is journaled and
the relay energised), then waits for the vend to end. The events pile up in the outbox meanwhile.
Prints the median, 95th percentile and maximum of each; never fails on a timing.

Usage: scripts/bench/fleet-latency.py [bin-dir] [sales]   (default .build/release, 200)
Build first: swift build -c release --product vendd
"""
import json, os, re, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release")
SALES = int(sys.argv[2]) if len(sys.argv) > 2 else 200


class Control:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rw")

    def send(self, **request):
        self.file.write(json.dumps({"v": 1, **request}) + "\n")
        self.file.flush()
        answer = json.loads(self.file.readline())
        if not answer.get("ok"):
            raise SystemExit(f"{request}: {answer}")
        return answer


def mqtt_section(work, broker):
    ca = os.path.join(work, "ca.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", os.path.join(work, "ca.key"),
                    "-out", ca, "-days", "1", "-subj", "/CN=bench CA"], check=True, capture_output=True)
    credentials = os.path.join(work, "credentials")
    with open(os.open(credentials, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write("bench:secret\n")
    return f"\nmqtt:\n  broker: {broker}\n  machine_id: bench\n  credentials_file: {credentials}\n  ca_file: {ca}\n"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(name, broker):
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(ROOT, "config/examples/cctalk-coins.yaml")) as f:
            config = f.read()
        if broker:
            config += mqtt_section(work, broker)
        config_path = os.path.join(work, "vendd.yaml")
        with open(config_path, "w") as f:
            f.write(config)
        sock = os.path.join(work, "control.sock")
        vendd = subprocess.Popen([os.path.join(BIN, "vendd"), "run", "--config", config_path, "--simulate",
                                  "--state-dir", os.path.join(work, "state"), "--socket", sock],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 10
            while not os.path.exists(sock):
                if time.time() > deadline:
                    raise SystemExit(f"{name}: vendd did not open its socket")
                time.sleep(0.01)
            control = Control(sock)
            control.send(op="restock", slot="all")
            coins, selects = [], []
            for sale in range(SALES):
                if sale % 5 == 0:
                    control.send(op="restock", slot="all")
                started = time.perf_counter()
                control.send(op="sim-coin", amount="500")
                coins.append(time.perf_counter() - started)
                control.send(op="sim-coin", amount="500")
                started = time.perf_counter()
                control.send(op="select", slot="B2")  # canned coffee, 1,000원
                selects.append(time.perf_counter() - started)
                while control.send(op="status")["status"].get("vendInProgress"):
                    time.sleep(0.005)
            status = control.send(op="status")["status"]
            outbox = status.get("fleetOutbox")
            pending = f"; outbox {outbox['pending']} event(s), connected: {outbox['connected']}" if outbox else ""
            return coins, selects, status["books"]["itemsSold"], pending
        finally:
            vendd.terminate()
            vendd.wait()


def figures(samples):
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return f"median {statistics.median(ordered) * 1000:6.2f} ms  p95 {p95 * 1000:6.2f} ms  max {ordered[-1] * 1000:6.2f} ms"


def main():
    if not os.path.exists(os.path.join(BIN, "vendd")):
        sys.exit(f"{BIN}/vendd not found: build it with swift build -c release --product vendd")
    print(f"{SALES} sales each; vendd from {BIN}")
    for name, broker in [("no-mqtt", None), ("refused", f"mqtts://127.0.0.1:{free_port()}"),
                         ("unreachable", "mqtts://192.0.2.1:8883")]:
        coins, selects, sold, pending = run(name, broker)
        print(f"{name:12} coin   {figures(coins)}")
        print(f"{'':12} select {figures(selects)}  ({sold} sold{pending})")


if __name__ == "__main__":
    main()
