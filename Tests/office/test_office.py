#!/usr/bin/env python3
"""The back office in a real browser (headless Debian chromium through chromium-driver and
Selenium) against a real `vendstore serve` with an `office:` section, its SQLite database filled
with what the ingester stores (machine_slots, machine_latest, machine_zones, events). Each role
logs in; the operator makes a route and sets a par level through the pages; the pick list's
numbers are the stored slots'; the machine page draws its charts; the driver finds no operator
forms, a forged POST is refused, and the driver's count of a cash collection shows its difference.
Every check prints PASS or FAIL; the first FAIL ends the run (exit 1). Screenshots go to
$VENDD_OFFICE_SCREENSHOTS/office-*.png (a scratch directory unless told).

Usage: Tests/office/test_office.py BUILD_DIR
"""
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from browsercheck import check, free_port, browser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug"))
SHOTS = os.environ.get("VENDD_OFFICE_SCREENSHOTS") or tempfile.mkdtemp(prefix="vendd-office-screenshots.")
OPERATOR = ("ann", "ann's long password")
DRIVER = ("dan", "dan's long password")


def millis(seconds):
    return int(seconds * 1000)


def fill(database, now):
    """Three machines as the ingester would have stored them."""
    db = sqlite3.connect(database)
    today = millis(now) - 60_000
    slots = [
        ("m1", "A1", "Cola", "1200", 0, 0, 8, None),
        ("m1", "A2", "Water", "900", 3, 5, 10, today),
        ("m1", "B1", "Cola", "1200", 6, 6, 6, None),
        ("m2", "A1", "Cola", "1200", 2, 2, 8, None),
        ("m2", "A2", "Juice <b>", "1500", 4, 4, 6, None),
        ("m3", "A1", "Tea", "1000", 5, 5, 5, None),
    ]
    db.executemany(
        "INSERT INTO machine_slots (machine, slot, product, price, currency, available, stock, capacity, earliest_expiry, received_at)"
        " VALUES (?, ?, ?, ?, 'KRW', ?, ?, ?, ?, ?)", [s + (today,) for s in slots])
    states = [("m1", "true", "in-service"), ("m2", "true", "out-of-order"), ("m3", "false", "offline")]
    db.executemany(
        "INSERT INTO machine_latest (machine, subject, payload, received_at) VALUES (?, 'state', ?, ?)",
        [(m, f'{{"machine":"{m}","online":{online},"state":"{state}","at":{today}}}', today) for m, online, state in states])
    db.execute(
        "INSERT INTO machine_zones (machine, zone, kind, health, temperature, set_point, since, cause, at, received_at)"
        " VALUES ('m2', 'cold', 'cold', 'locked', '9.5', '4', ?, 'above 5 °C for 4 h', ?, ?)", (today, today, today))
    events = []
    for seq, (kind, fields) in enumerate([
        ("vend-started", '"vend":1,"slot":"A1","product":"Cola","amount":"1200"'),
        ("vend-ended", '"vend":1,"slot":"A1","product":"Cola","amount":"1200","outcome":"sold","payment":"cash"'),
        ("vend-started", '"vend":2,"slot":"B1","product":"Cola","amount":"1200"'),
        ("vend-ended", '"vend":2,"slot":"B1","product":"Cola","amount":"1200","outcome":"sold","payment":"cashless1"'),
    ], start=1):
        payload = f'{{"id":"m1-{seq}","seq":{seq},"machine":"m1","at":{today + seq},"type":"{kind}","currency":"KRW",{fields}}}'
        events.append(("m1", seq, f"m1-{seq}", kind, today + seq, payload, today))
    # Ten more days of m1's sales, for its chart: cash and card, two products. The fleet page's
    # 7 days hold today's and the 6 days' before.
    seq = len(events)
    week = {"cash": 1200, "cashless1": 1200}
    for day in range(1, 11):
        for number in range(day % 4 + 1):
            product, price = ("Cola", "1200") if number % 2 == 0 else ("Water", "900")
            payment = "cash" if number % 3 else "cashless1"
            at = today - day * 86_400_000 + number
            vend = 100 * day + number
            if day <= 6:
                week[payment] += int(price)
            for kind, fields in (("vend-started", f'"vend":{vend},"product":"{product}","amount":"{price}"'),
                                 ("vend-ended", f'"vend":{vend},"product":"{product}","amount":"{price}","outcome":"sold","payment":"{payment}"')):
                seq += 1
                payload = f'{{"id":"m1-{seq}","seq":{seq},"machine":"m1","at":{at},"type":"{kind}","currency":"KRW",{fields}}}'
                events.append(("m1", seq, f"m1-{seq}", kind, at, payload, today))
    # The cash box emptied twice: the first counted by the driver already, the second not yet.
    for number, (collection_seq, at, counts) in enumerate([
        (seq + 1, today - 3 * 86_400_000, [("coin", "100", 12), ("coin", "500", 9), ("bill", "1000", 3)]),
        (seq + 2, today - 3_600_000, [("coin", "100", 10), ("coin", "500", 4), ("bill", "1000", 2)]),
    ], start=1):
        total = sum(int(value) * count for _, value, count in counts)
        payload = f'{{"id":"m1-{collection_seq}","seq":{collection_seq},"machine":"m1","at":{at},"type":"cash-collected","currency":"KRW"}}'
        events.append(("m1", collection_seq, f"m1-{collection_seq}", "cash-collected", at, payload, today))
        since = today - 3 * 86_400_000 if number == 2 else None
        db.execute("INSERT INTO collections (machine, seq, collection, at, since, currency, total, collected_by, received_at)"
                   " VALUES ('m1', ?, ?, ?, ?, 'KRW', ?, 'tech kim', ?)", (collection_seq, number, at, since, str(total), today))
        db.executemany("INSERT INTO collection_denominations (machine, seq, kind, value, count) VALUES ('m1', ?, ?, ?, ?)",
                       [(collection_seq, kind, value, count) for kind, value, count in counts])
    db.executemany("INSERT INTO collection_counts (machine, seq, kind, value, count, entered_by, entered_at)"
                   " VALUES ('m1', ?, ?, ?, ?, 'dan', ?)",
                   [(seq + 1, "coin", "100", 12, today), (seq + 1, "coin", "500", 8, today), (seq + 1, "bill", "1000", 3, today)])
    db.execute("INSERT INTO machine_zones (machine, zone, kind, health, temperature, set_point, at, received_at)"
               " VALUES ('m1', 'cold', 'cold', 'ok', '4.5', '4', ?, ?)", (today, today))
    # Six days of m1's cold zone, a reading every 10 minutes: the compressor's cycle, and a door
    # left open for an hour.
    readings = []
    for step in range(6 * 144):
        at = today - step * 600_000
        temperature = 4 + 0.6 * math.sin(step / 4) + (3.5 if 200 <= step < 206 else 0)
        readings.append(("m1", "cold", at // 60_000, at, f"{temperature:.1f}"))
    db.executemany("INSERT INTO zone_readings (machine, zone, minute, at, temperature) VALUES (?, ?, ?, ?, ?)", readings)
    db.executemany("INSERT INTO events (machine, seq, id, type, at, payload, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)", events)
    db.execute("INSERT INTO machine_progress (machine, contiguous, highest, updated_at) VALUES ('m1', ?, ?, ?)", (seq + 2, seq + 2, today))
    # The sales tables as a store of schema 4 lacks them: vendstore's next start (migration 5)
    # fills them from these events, as it would from the ingester's.
    for statement in ("DROP TABLE sales_days", "DROP TABLE slot_sales_days", "DELETE FROM schema_migrations WHERE version = 5"):
        db.execute(statement)
    db.commit()
    db.close()
    return week


def wait_for(url, seconds=20):
    for _ in range(int(seconds / 0.05)):
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            time.sleep(0.05)


def main():
    work = tempfile.mkdtemp(prefix="vendd-office.")
    port = free_port()
    database = os.path.join(work, "fleet.db")
    config = os.path.join(work, "vendstore.yaml")
    with open(config, "w") as file:
        file.write(f"""mqtt:
  broker: mqtt://127.0.0.1:9
  allow_plaintext: true
database:
  sqlite: {database}
office:
  listen: 127.0.0.1:{port}
  currencies:
    - code: KRW
      format: "{{amount}}원"
""")
    vendstore = os.path.join(BUILD, "vendstore")
    log = open(os.path.join(work, "vendstore.log"), "w")
    server = subprocess.Popen([vendstore, "serve", "--config", config], stdout=log, stderr=log)
    driver = None
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base + "/login")
        check(server.poll() is None, f"vendstore serves the office on 127.0.0.1:{port}")
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
        week = fill(database, time.time())
        server = subprocess.Popen([vendstore, "serve", "--config", config], stdout=log, stderr=log)
        wait_for(base + "/login")
        check(server.poll() is None, "vendstore serves again, its migration 5 applied to the filled database")
        for (name, password), role in ((OPERATOR, "operator"), (DRIVER, "driver")):
            added = subprocess.run([vendstore, "user", "add", name, "--role", role, "--config", config],
                                   input=password + "\n", capture_output=True, text=True)
            check(added.returncode == 0, f"vendstore user add {name} --role {role}: {added.stdout.strip()}{added.stderr.strip()}")

        driver = browser()

        def submitted(action):
            """Runs `action` (a click, a script's submit) and waits for the page it leads to."""
            old = driver.find_element(By.TAG_NAME, "html")
            action()
            WebDriverWait(driver, 30).until(staleness_of(old))

        def log_in(user):
            driver.delete_all_cookies()
            driver.get(base + "/fleet")
            check(driver.current_url.endswith("/login"), f"{user[0]}: an unauthenticated page leads to the login")
            driver.find_element(By.NAME, "user").send_keys(user[0])
            driver.find_element(By.NAME, "password").send_keys(user[1])
            submitted(lambda: driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click())
            check(driver.current_url.endswith("/fleet"), f"{user[0]} logs in and lands on the fleet page")

        def cells(selector="main table tbody tr"):
            return [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in driver.find_elements(By.CSS_SELECTOR, selector)]

        # A wrong password first: refused, no session.
        driver.get(base + "/login")
        driver.find_element(By.NAME, "user").send_keys(OPERATOR[0])
        driver.find_element(By.NAME, "password").send_keys("not the password")
        submitted(lambda: driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click())
        check("Wrong user name or password." in driver.page_source, "a wrong password is refused with a message")

        log_in(OPERATOR)
        rows = {row[0]: row for row in cells()}
        check(set(rows) == {"m1", "m2", "m3"}, f"the fleet page lists every machine: {sorted(rows)}")
        check("A1 sold out" in rows["m1"][2] and "A2 expired (2)" in rows["m1"][2], f"m1's alerts: {rows['m1'][2]!r}")
        check("zone cold locked (food safety)" in rows["m2"][2] and "out-of-order" in rows["m2"][1], f"m2: {rows['m2'][1:3]}")
        check(rows["m3"][1].startswith("offline"), f"m3 is offline: {rows['m3'][1]!r}")
        check(rows["m1"][3:] == ["1,200원", "1,200원", f"{week['cash']:,}원", f"{week['cashless1']:,}원"],
              f"m1's sales, cash and card apart: {rows['m1'][3:]}")
        driver.save_screenshot(os.path.join(SHOTS, "office-fleet.png"))

        submitted(lambda: driver.find_element(By.LINK_TEXT, "Routes").click())
        driver.find_element(By.NAME, "name").send_keys("north")
        driver.find_element(By.NAME, "machines").send_keys("m2\nm1\n")
        submitted(lambda: driver.find_element(By.CSS_SELECTOR, "form[action='/routes'] button").click())
        check(["north", "m2, m1"] == cells()[0][:2], f"the operator saved the route: {cells()[0][:2]}")
        submitted(lambda: driver.find_element(By.LINK_TEXT, "pick list").click())

        def loads():
            return {(table.find_element(By.XPATH, "preceding-sibling::h2[1]").text, row[0]): (row[5], row[6])  # unload expired, load
                    for table in driver.find_elements(By.CSS_SELECTOR, "div.scroll")
                    for row in [[cell.text for cell in tr.find_elements(By.TAG_NAME, "td")]
                                for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr")]}

        expected = {("m2", "A1"): ("0", "6"), ("m2", "A2"): ("0", "2"), ("m1", "A1"): ("0", "8"),
                    ("m1", "A2"): ("2", "7"), ("m1", "B1"): ("0", "0")}
        check(loads() == expected, f"the pick list: capacity − (stock − expired) per slot: {loads()}")
        form = driver.find_element(By.XPATH, "//h2[text()='m2']/following-sibling::div[1]//tr[1]//form")
        form.find_element(By.NAME, "par").send_keys("5")
        submitted(lambda: form.find_element(By.TAG_NAME, "button").click())
        check(loads()[("m2", "A1")] == ("0", "3"), "a par level of 5 for m2 A1 brings its load to 3")
        totals = {row[0]: row[1:] for row in cells("main > table tbody tr")}
        check(totals == {"Cola": ["0", "11"], "Juice <b>": ["0", "2"], "Water": ["2", "7"]}, f"the totals per product: {totals}")
        driver.save_screenshot(os.path.join(SHOTS, "office-pick-list.png"))

        driver.get(base + "/fleet")
        submitted(lambda: driver.find_element(By.LINK_TEXT, "m1").click())
        check("Planogram" in driver.page_source and "1,200원" in driver.page_source, "the machine page shows m1's planogram with prices")
        charts = driver.find_elements(By.CSS_SELECTOR, "div.chart svg")
        check(len(charts) == 3, f"the machine page draws sales per day, per product and the cold zone ({len(charts)} charts)")
        check(len(driver.find_elements(By.CSS_SELECTOR, "svg rect.column")) >= 10, "the sales chart has a column per day with sales")
        check(driver.find_elements(By.CSS_SELECTOR, "svg polyline.reading"), "the cold zone's temperatures are drawn")
        check(all(chart.size["width"] <= 1280 for chart in charts), "the charts fit the page")
        check(driver.find_elements(By.CSS_SELECTOR, "form[action='/dex'] button"), "the machine page offers to ask for a DEX audit")
        driver.set_window_size(1280, 2600)
        driver.save_screenshot(os.path.join(SHOTS, "office-machine.png"))
        driver.set_window_size(1280, 900)

        # On a phone: nothing wider than the screen but the tables' own scroll boxes.
        driver.set_window_size(390, 844)
        driver.get(base + "/fleet")
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 0, f"the fleet page fits a 390 px wide phone (overflow {overflow} px)")
        driver.save_screenshot(os.path.join(SHOTS, "office-fleet-phone.png"))
        driver.set_window_size(1280, 900)

        log_in(DRIVER)
        driver.get(base + "/pick-list?route=north")
        check(not driver.find_elements(By.CSS_SELECTOR, "form[action='/par']"), "the driver's pick list has no par level form")
        driver.get(base + "/routes")
        check(not driver.find_elements(By.CSS_SELECTOR, "form[action='/routes']"), "the driver's routes page has no route form")
        driver.get(base + "/machine?id=m1")
        check("1,200원" not in driver.page_source and "Price" not in driver.page_source, "the driver sees no prices on the machine page")
        driver.get(base + "/audit")
        check("Operators only" in driver.page_source, "the audit log is refused to the driver")

        # The driver counts the bag of m1's last collection: the difference per coin and in total.
        driver.get(base + "/machine?id=m1")
        submitted(lambda: driver.find_element(By.LINK_TEXT, "Cash collections").click())
        rows = cells()
        check(rows[0][:1] == ["2"] and rows[0][3:6] == ["5,000원", "-", "-"], f"collection 2 awaits its count: {rows[0]}")
        check(rows[1][3:6] == ["8,700원", "8,200원", "-500원"], f"collection 1: one 500원 coin short: {rows[1]}")
        submitted(lambda: driver.find_element(By.LINK_TEXT, "enter the count").click())
        for name, value in (("coin:100", "9"), ("coin:500", "4"), ("bill:1000", "2")):
            driver.find_element(By.NAME, name).send_keys(value)
        submitted(lambda: driver.find_element(By.CSS_SELECTOR, "form[action='/collection'] button").click())
        check("Counted by dan" in driver.page_source, "the driver's count is saved")
        totals = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "main table tbody tr:last-child th")]
        check(totals == ["Total", "5,000원", "4,900원", "", "-100원"], f"machine 5,000원, counted 4,900원, difference -100원: {totals}")
        check(cells()[0][3:] == ["-1", "-100원"], f"one 100원 coin missing: {cells()[0]}")
        driver.set_window_size(1280, 1000)
        driver.save_screenshot(os.path.join(SHOTS, "office-cash-collection.png"))
        driver.set_window_size(1280, 900)
        driver.find_element(By.NAME, "coin:100").clear()
        driver.find_element(By.NAME, "coin:100").send_keys("1e3")
        submitted(lambda: driver.find_element(By.CSS_SELECTOR, "form[action='/collection'] button").click())
        check("is not a whole number of coins" in driver.page_source, "a count that is not a whole number is refused with a sentence")
        # A forged POST from the driver's own session (its real CSRF token): refused for the role.
        driver.get(base + "/routes")
        submitted(lambda: driver.execute_script("""
            const form = document.createElement('form'); form.method = 'post'; form.action = '/par';
            for (const [name, value] of [['csrf', document.querySelector("input[name=csrf]").value],
                                         ['route', 'north'], ['machine', 'm1'], ['slot', 'A1'], ['par', '1']]) {
                const input = document.createElement('input'); input.name = name; input.value = value; form.appendChild(input);
            }
            document.body.appendChild(form); form.submit();"""))
        check("Operators only" in driver.page_source, "a driver's forged par level POST is refused")
        driver.get(base + "/routes")
        submitted(lambda: driver.execute_script("""
            const form = document.createElement('form'); form.method = 'post'; form.action = '/logout';
            document.body.appendChild(form); form.submit();"""))
        check("security token is missing or wrong" in driver.page_source, "a POST without the CSRF token is refused")
        driver.get(base + "/pick-list?route=north")
        check(loads()[("m2", "A1")] == ("0", "3"), "nothing changed: m2 A1 still loads 3")
        print(f"screenshots: {SHOTS}", flush=True)
    finally:
        if driver:
            driver.quit()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def machine_config(work, machine, example, broker_port, edit=lambda text: text):
    """A shipped example configuration, edited, reporting to the broker as `machine`."""
    with open(os.path.join(ROOT, example)) as file:
        text = edit(file.read())
    text += (f"\nmqtt:\n  broker: mqtt://127.0.0.1:{broker_port}\n  allow_plaintext: true\n  machine_id: {machine}\n"
             "  keep_until_stored: true\n")
    path = os.path.join(work, f"{machine}.yaml")
    with open(path, "w") as file:
        file.write(text)
    return path


def fast_health(text):
    """The food machine's chilled zone read every second and a 2 s trip (as HealthLockProcessTests)."""
    fast = "    health: { limit: 5, trip_s: 900 }"
    check(fast in text, "the example food machine's health line is where the test edits it")
    return text.replace(fast, "    read_interval_s: 1\n    start_delay_s: 0\n"
                              "    health: { limit: 5, trip_s: 2, recovery_after_door_s: 1, recovery_after_power_on_s: 1, sensor_grace_s: 30 }")


def follow_live_vendd():
    """A real vendd in simulation publishing to a real Mosquitto, a real vendstore ingesting: the
    fleet page, opened once, shows a coin, a sale and a zone lock (m1, the example food machine) and
    a jam (m2, the example spiral machine) without a reload."""
    work = tempfile.mkdtemp(prefix="vendd-office-live.")
    processes = []
    driver = None
    try:
        broker_port, office_port = free_port(), free_port()
        with open(os.path.join(work, "mosquitto.conf"), "w") as file:
            file.write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        log = open(os.path.join(work, "processes.log"), "w")

        def spawn(arguments):
            process = subprocess.Popen(arguments, stdout=log, stderr=log)
            processes.append(process)
            return process

        spawn(["/usr/sbin/mosquitto", "-c", os.path.join(work, "mosquitto.conf")])
        config = os.path.join(work, "vendstore.yaml")
        with open(config, "w") as file:
            file.write(f"""mqtt:
  broker: mqtt://127.0.0.1:{broker_port}
  allow_plaintext: true
database:
  sqlite: {os.path.join(work, "fleet.db")}
ingest:
  ack_milliseconds: 20
office:
  listen: 127.0.0.1:{office_port}
  currencies:
    - code: USD
      format: "${{amount}}"
    - code: EUR
      format: "€{{amount}}"
""")
        vendstore = os.path.join(BUILD, "vendstore")
        base = f"http://127.0.0.1:{office_port}"
        store = spawn([vendstore, "serve", "--config", config])
        wait_for(base + "/login")
        # Added beside the running vendstore: its ingester's commits go on after this write.
        added = subprocess.run([vendstore, "user", "add", DRIVER[0], "--role", "driver", "--config", config],
                               input=DRIVER[1] + "\n", capture_output=True, text=True)
        check(added.returncode == 0, f"the driver is added: {added.stderr.strip()}")
        check(store.poll() is None, "a vendstore ingests from a real Mosquitto and serves the office")
        machines = {"m1": ("config/examples/chilled-food.yaml", fast_health), "m2": ("config/examples/spiral-matrix.yaml", lambda text: text)}
        for machine, (example, edit) in machines.items():
            spawn([os.path.join(BUILD, "vendd"), "run", "--config", machine_config(work, machine, example, broker_port, edit), "--simulate",
                   "--state-dir", os.path.join(work, f"{machine}-state"), "--socket", os.path.join(work, f"{machine}.sock")])

        def vendctl(machine, *arguments):
            done = subprocess.run([os.path.join(BUILD, "vendctl"), "--socket", os.path.join(work, f"{machine}.sock")] + list(arguments),
                                  capture_output=True, text=True, timeout=30)
            check(done.returncode == 0, f"{machine}: vendctl {' '.join(arguments)}: {done.stdout.strip()} {done.stderr.strip()}")

        for machine in machines:
            for _ in range(200):
                if os.path.exists(os.path.join(work, f"{machine}.sock")):
                    break
                time.sleep(0.05)
            vendctl(machine, "restock", "all")

        driver = browser()
        driver.get(base + "/fleet")
        driver.find_element(By.NAME, "user").send_keys(DRIVER[0])
        driver.find_element(By.NAME, "password").send_keys(DRIVER[1])
        old = driver.find_element(By.TAG_NAME, "html")
        driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
        WebDriverWait(driver, 30).until(staleness_of(old))

        def row(machine):
            # Read in one script: the live table may be swapped between two WebDriver calls.
            return driver.execute_script("""
                for (const row of document.querySelectorAll("#live table tbody tr")) {
                    const cells = Array.from(row.querySelectorAll("td"), cell => cell.innerText);
                    if (cells[0] === arguments[0]) return cells;
                }
                return null;""", machine)

        driver.get(base + "/fleet")
        WebDriverWait(driver, 30).until(lambda _: row("m1") is not None and row("m2") is not None)
        # The stream is open once the script has swapped the table a first time (it does at each opening).
        WebDriverWait(driver, 30).until(lambda _: driver.execute_script("return document.getElementById('live').dataset.updated"))
        # A mark on this document: a reload would lose it.
        driver.execute_script("window.officeLiveMark = 'kept';")

        def appears(what, machine, condition):
            try:
                WebDriverWait(driver, 30).until(lambda _: (cells := row(machine)) is not None and condition(cells))
            except TimeoutException:
                check(False, f"{what} appears on the open fleet page: {row(machine)}")
            kept = driver.execute_script("return window.officeLiveMark;")
            check(kept == "kept", f"{what} appears on the open fleet page without a reload: {row(machine)}")

        vendctl("m1", "sim", "coin", "1.00")
        appears("a coin (m1's credit)", "m1", lambda cells: "credit $1.00" in cells[1])
        vendctl("m1", "sim", "coin", "1.00")
        vendctl("m1", "sim", "press", "A3")
        appears("a sale (m1's 7 days' cash)", "m1", lambda cells: cells[5] == "$1.25")
        vendctl("m2", "sim", "coin", "2.00")
        vendctl("m2", "sim", "jam", "C5")
        vendctl("m2", "sim", "press", "C5")
        appears("a jam (m2's C5 out of service)", "m2", lambda cells: "C5 out of service: jammed" in cells[2])
        vendctl("m1", "sim", "temp", "chilled", "9")
        appears("a zone lock (m1's chilled zone)", "m1", lambda cells: "zone chilled locked (food safety)" in cells[2])
        driver.save_screenshot(os.path.join(SHOTS, "office-fleet-live.png"))
    finally:
        if driver:
            driver.quit()
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
    follow_live_vendd()
