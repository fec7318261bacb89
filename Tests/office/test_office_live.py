#!/usr/bin/env python3
"""The back office in a real browser against live machines: three real `vendd run --simulate`
processes (m1, m2, m3) report to a real Mosquitto (passwords and the ACL of docs/mqtt.md, the
store's `price` line included), a real `vendstore serve` stores what they send and serves the
office, and headless Debian chromium (chromium-driver, Selenium) drives it:

- the operator makes a route of the three; its pick list (HTML and CSV) equals, slot by slot, what
  each machine's own `vendctl status --json` says, computed the documented way:
  load = max(0, capacity - (stock - expired)), expired = stock - available once the earliest
  expiry has passed;
- the operator changes cola's price on the route and sees each machine's confirmation, and each
  machine's `vendctl status` then shows the new price;
- the driver has no price page, link or form, and a forged price POST with the driver's own CSRF
  token is refused; nothing changes.

Every check prints PASS or FAIL; the first FAIL ends the run (exit 1). It writes
office-pick-list-vs-status.txt (the pick list CSV next to the three machines' `vendctl status`),
office-prices.png and office-price-change.png to $VENDD_OFFICE_EXAMPLES (a scratch directory unless told;
docs/examples' copies came from it).

Usage: Tests/office/test_office_live.py BUILD_DIR
"""
import csv
import datetime
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from browsercheck import check, free_port, browser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug"))
EXAMPLES = os.environ.get("VENDD_OFFICE_EXAMPLES") or tempfile.mkdtemp(prefix="vendd-office-live.")
OPERATOR = ("ann", "ann's long password")
DRIVER = ("dan", "dan's long password")
MACHINES = ("m1", "m2", "m3")

# The broker's ACL as docs/mqtt.md gives it: each machine under its own id; the store reads
# everything, acknowledges, and sends `price` and `dex` commands.
ACL = """pattern write vendd/%u/events/#
pattern write vendd/%u/backlog
pattern write vendd/%u/state
pattern write vendd/%u/stock
pattern write vendd/%u/cash
pattern write vendd/%u/zones/+
pattern write vendd/%u/reply/#
pattern read vendd/%u/cmd/#
pattern read vendd/%u/stored

user vendstore
topic read vendd/#
topic write vendd/+/stored
topic write vendd/+/cmd/price
topic write vendd/+/cmd/dex
"""


def wait_for(what, predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.05)
    print(f"FAIL: {what} (within {timeout} s; last: {last!r})", flush=True)
    raise SystemExit(1)


def password(user):
    return f"secret-{user}"


class Machine:
    """vendd on simulated hardware (`sample`: the ccTalk sample machine's file) reporting to the broker."""

    def __init__(self, work, name, broker_port, sample):
        self.name = name
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir)
        self.socket = os.path.join(self.dir, "control.sock")
        self.config = os.path.join(self.dir, "vendd.yaml")
        credentials = os.path.join(self.dir, "credentials")
        with open(credentials, "w") as file:
            file.write(f"{name}:{password(name)}\n")
        os.chmod(credentials, 0o600)
        with open(self.config, "w") as file:
            file.write(sample + f"""
mqtt:
  broker: mqtt://127.0.0.1:{broker_port}
  allow_plaintext: true
  machine_id: {name}
  credentials_file: {credentials}
  commands: [price]
""")
        self.log = open(os.path.join(self.dir, "vendd.log"), "w")
        self.process = subprocess.Popen(
            [os.path.join(BUILD, "vendd"), "run", "--config", self.config, "--simulate",
             "--state-dir", os.path.join(self.dir, "state"), "--socket", self.socket],
            stdout=subprocess.DEVNULL, stderr=self.log)
        wait_for(f"{name} answers vendctl", lambda: self.vendctl("status", ok=False).returncode == 0)

    def vendctl(self, *args, ok=True):
        result = subprocess.run([os.path.join(BUILD, "vendctl"), "--socket", self.socket, *args],
                                capture_output=True, text=True, timeout=20)
        if ok and result.returncode != 0:
            raise SystemExit(f"FAIL: {self.name}: vendctl {' '.join(args)}: exit {result.returncode}: {result.stderr}")
        return result

    def status(self):
        return json.loads(self.vendctl("status", "--json").stdout)["status"]

    def sell(self, slot, coins):
        before = self.status()["books"]["itemsSold"]
        for coin in coins:
            self.vendctl("sim", "coin", str(coin))
        self.vendctl("sim", "press", slot)
        wait_for(f"{self.name} sells from {slot}",
                 lambda: (lambda s: s["books"]["itemsSold"] == before + 1 and s.get("vendInProgress") is None)(self.status()))

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=20)
        self.log.close()


def expected_lines(status, now_ms):
    """The pick list's lines for one machine from its `vendctl status --json`, as docs/office.md
    says: target = capacity (no par level set), expired = stock - available when the earliest
    expiry has passed, load = max(0, target - (stock - expired))."""
    lines = {}
    for slot in status["slots"]:
        expiry = slot.get("earliestExpiry")
        expired = max(0, slot["stock"] - slot["available"]) if expiry is not None and expiry <= now_ms else 0
        load = max(0, slot["capacity"] - (slot["stock"] - expired))
        lines[slot["id"]] = (slot["product"], slot["stock"], slot["capacity"], expired, load)
    return lines


def main():
    work = tempfile.mkdtemp(prefix="vendd-office-live.")
    processes = []
    machines = []
    driver = None
    try:
        # The broker: passwords, the ACL above, plain TCP on loopback.
        broker_port = free_port()
        passwd = os.path.join(work, "passwd")
        open(passwd, "w").close()
        os.chmod(passwd, 0o600)
        for user in MACHINES + ("vendstore",):
            subprocess.run(["mosquitto_passwd", "-b", passwd, user, password(user)], check=True)
        with open(os.path.join(work, "acl"), "w") as file:
            file.write(ACL)
        with open(os.path.join(work, "mosquitto.conf"), "w") as file:
            file.write(f"""listener {broker_port} 127.0.0.1
allow_anonymous false
password_file {passwd}
acl_file {work}/acl
user {os.environ.get("USER") or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()}
""")
        broker_log = open(os.path.join(work, "mosquitto.log"), "w")
        processes.append(subprocess.Popen(["mosquitto", "-c", os.path.join(work, "mosquitto.conf")], stdout=broker_log, stderr=broker_log))

        def listening(port):
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0
        wait_for("mosquitto listens", lambda: listening(broker_port))

        # The store with its office.
        office_port = free_port()
        database = os.path.join(work, "fleet.db")
        config = os.path.join(work, "vendstore.yaml")
        credentials = os.path.join(work, "vendstore.credentials")
        with open(credentials, "w") as file:
            file.write(f"vendstore:{password('vendstore')}\n")
        os.chmod(credentials, 0o600)
        with open(config, "w") as file:
            file.write(f"""mqtt:
  broker: mqtt://127.0.0.1:{broker_port}
  allow_plaintext: true
  credentials_file: {credentials}
database:
  sqlite: {database}
office:
  listen: 127.0.0.1:{office_port}
  currencies:
    - code: KRW
      format: "{{amount}}원"
""")
        vendstore = os.path.join(BUILD, "vendstore")
        store_log = open(os.path.join(work, "vendstore.log"), "w")
        processes.append(subprocess.Popen([vendstore, "serve", "--config", config], stdout=store_log, stderr=store_log))
        wait_for("vendstore serves the office", lambda: listening(office_port))
        for (name, secret), role in ((OPERATOR, "operator"), (DRIVER, "driver")):
            added = subprocess.run([vendstore, "user", "add", name, "--role", role, "--config", config],
                                   input=secret + "\n", capture_output=True, text=True)
            check(added.returncode == 0, f"vendstore user add {name} --role {role}: {added.stdout.strip()}{added.stderr.strip()}")

        # Three machines, each stocked its own way: full with two sales; expired milk and part
        # loads; a few slots only.
        with open(os.path.join(ROOT, "config/examples/cctalk-coins.yaml")) as file:
            sample = file.read()
        # Banana milk (the first product) stops selling once past its date, so its expired items are
        # the pick list's to unload (a product that sells on keeps them available).
        check("  - id: banana-milk\n" in sample and "    shelf_life_days: 10\n" in sample, "the sample machine's first product is banana milk")
        sample = sample.replace("    shelf_life_days: 10\n", "    shelf_life_days: 10\n    expired: refuse\n", 1)
        for name in MACHINES:
            machines.append(Machine(work, name, broker_port, sample))
        m1, m2, m3 = machines
        m1.vendctl("restock", "all")
        m1.sell("A4", [500, 500, 500])
        m1.sell("A4", [500, 500, 500])
        long_ago = (datetime.datetime.now() - datetime.timedelta(days=15)).strftime("%Y-%m-%d")
        m2.vendctl("restock", "A1", "6", "--loaded", long_ago)
        m2.vendctl("restock", "A4", "4")
        m2.vendctl("restock", "B1")
        m3.vendctl("restock", "A4", "3")
        m3.vendctl("restock", "A2")

        def stored(machine):
            with sqlite3.connect(database) as db:
                rows = db.execute("SELECT slot, stock, available, capacity FROM machine_slots WHERE machine = ? ORDER BY slot",
                                  (machine.name,)).fetchall()
            return rows == sorted((s["id"], s["stock"], s["available"], s["capacity"]) for s in machine.status()["slots"])
        for machine in machines:
            wait_for(f"the store holds {machine.name}'s stock as its vendctl status says", lambda: stored(machine))

        driver = browser(height=1000)
        base = f"http://127.0.0.1:{office_port}"

        def submitted(action):
            old = driver.find_element(By.TAG_NAME, "html")
            action()
            WebDriverWait(driver, 30).until(staleness_of(old))

        def log_in(user):
            driver.delete_all_cookies()
            driver.get(base + "/login")
            driver.find_element(By.NAME, "user").send_keys(user[0])
            driver.find_element(By.NAME, "password").send_keys(user[1])
            submitted(lambda: driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click())
            check(driver.current_url.endswith("/fleet"), f"{user[0]} logs in")

        log_in(OPERATOR)
        driver.get(base + "/routes")
        driver.find_element(By.NAME, "name").send_keys("r3")
        driver.find_element(By.NAME, "machines").send_keys("m1\nm2\nm3\n")
        submitted(lambda: driver.find_element(By.CSS_SELECTOR, "form[action='/routes'] button").click())
        driver.get(base + "/pick-list?route=r3")
        now_ms = int(time.time() * 1000)
        statuses = {machine.name: machine.status() for machine in machines}
        expected = {name: expected_lines(status, now_ms) for name, status in statuses.items()}
        shown = {}
        for table in driver.find_elements(By.CSS_SELECTOR, "div.scroll"):
            machine = table.find_element(By.XPATH, "preceding-sibling::h2[1]").text
            for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr"):
                cells = [cell.text for cell in tr.find_elements(By.TAG_NAME, "td")]
                shown.setdefault(machine, {})[cells[0]] = (cells[1], int(cells[2]), int(cells[3]), int(cells[5]), int(cells[6]))
        for name in MACHINES:
            check(shown.get(name) == expected[name],
                  f"{name}'s pick list page equals its vendctl status, slot by slot: {shown.get(name)} vs {expected[name]}")
        check(sum(line[3] for line in expected["m2"].values()) == 6, "m2's 6 expired milks are on the list to unload")

        cookies = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
        request = urllib.request.Request(base + "/pick-list.csv?route=r3", headers={"Cookie": cookies})
        pick_csv = urllib.request.urlopen(request, timeout=10).read().decode()
        from_csv = {}
        for row in csv.DictReader(io.StringIO(pick_csv)):
            if row["machine"] != "TOTAL":
                from_csv.setdefault(row["machine"], {})[row["slot"]] = (
                    row["product"], int(row["stock"]), int(row["capacity"]), int(row["expired"]), int(row["load"]))
        check(from_csv == expected, "the pick list CSV equals the three machines' vendctl status, slot by slot")

        # What the test compared, for a reader: the CSV next to each machine's own status.
        report = [f"# Generated by scripts/test-office-live (Tests/office/test_office_live.py), {time.strftime('%Y-%m-%d %H:%M %Z')}:",
                  "# route r3 = m1, m2, m3, three vendd --simulate processes reporting through Mosquitto to vendstore.",
                  "# load = max(0, capacity - (stock - expired)); expired = stock - available once the earliest expiry passed.",
                  "", "== GET /pick-list.csv?route=r3 ==", pick_csv.replace("\r\n", "\n").rstrip("\n")]
        for machine in machines:
            report += ["", f"== {machine.name}: vendctl status ==", machine.vendctl("status").stdout.rstrip("\n")]
        report += ["", "== each slot: from vendctl status --json (stock, capacity, expired, load) = the CSV's =="]
        for name in MACHINES:
            for slot, line in sorted(expected[name].items()):
                report.append(f"{name} {slot} {line[0]}: {line[1]}, {line[2]}, {line[3]}, {line[4]} = {from_csv[name][slot][1:]}")
        with open(os.path.join(EXAMPLES, "office-pick-list-vs-status.txt"), "w") as file:
            file.write("\n".join(report) + "\n")

        # A price for the whole route: each machine confirms, and says so in its own status.
        driver.get(base + "/prices")
        form = driver.find_element(By.CSS_SELECTOR, "form[action='/prices/product']")
        Select(form.find_element(By.NAME, "product")).select_by_visible_text("cola")
        form.find_element(By.NAME, "price").send_keys("1600")
        Select(form.find_element(By.NAME, "route")).select_by_visible_text("r3")
        driver.save_screenshot(os.path.join(EXAMPLES, "office-prices.png"))
        submitted(lambda: form.find_element(By.TAG_NAME, "button").click())
        rows = {cells[0]: cells for cells in ([c.text for c in tr.find_elements(By.TAG_NAME, "td")]
                                               for tr in driver.find_elements(By.CSS_SELECTOR, "main tbody tr"))}
        for name in MACHINES:
            row = rows.get(name, [])
            check(row[1:5] == ["A4", "cola", "1,600원", "done"] and "slot A4 price 1,500원 → 1,600원" in row[5],
                  f"{name} confirms the new price: {row}")
        driver.save_screenshot(os.path.join(EXAMPLES, "office-price-change.png"))
        for machine in machines:
            price = next(s["price"] for s in machine.status()["slots"] if s["id"] == "A4")
            check(price == "1600", f"{machine.name}'s vendctl status shows A4 at 1600: {price}")
        driver.get(base + "/audit")
        check("price-changed" in driver.page_source and "m3 A4 → 1600" in driver.page_source, "the audit log has the change")

        # The driver: no price link or page, and a forged POST with the driver's real token refused.
        log_in(DRIVER)
        check(not driver.find_elements(By.LINK_TEXT, "Prices"), "the driver has no Prices link")
        driver.get(base + "/prices")
        check("Operators only" in driver.page_source and not driver.find_elements(By.CSS_SELECTOR, "form[action^='/prices']"),
              "the driver's price page is refused, without a form")
        driver.get(base + "/pick-list?route=r3")
        submitted(lambda: driver.execute_script("""
            const form = document.createElement('form'); form.method = 'post'; form.action = '/prices/slot';
            for (const [name, value] of [['csrf', document.querySelector("input[name=csrf]").value],
                                         ['machine', 'm1'], ['slot', 'A4'], ['price', '100']]) {
                const input = document.createElement('input'); input.name = name; input.value = value; form.appendChild(input);
            }
            document.body.appendChild(form); form.submit();"""))
        check("Operators only" in driver.page_source, "a driver's forged price POST is refused")
        check(next(s["price"] for s in m1.status()["slots"] if s["id"] == "A4") == "1600", "nothing changed: m1's A4 is 1600")
        print(f"examples: {EXAMPLES}", flush=True)
    finally:
        if driver:
            driver.quit()
        for machine in machines:
            if machine.process.poll() is None:
                machine.stop()
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
