"""What the browser tiers share (Tests/kiosk/test_kiosk.py, Tests/office/test_office.py and
test_office_live.py): a check that prints PASS or FAIL and ends the run at the first FAIL, a free
loopback port, and headless Debian chromium through chromium-driver."""
import socket

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}", flush=True)
        raise SystemExit(1)
    print(f"PASS: {what}", flush=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def browser(height=900):
    """Chromium, headless, 1280 × `height` CSS pixels at scale 1 (screenshots the same size on
    every machine)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size=1280,{height}",
                     "--force-device-scale-factor=1", "--hide-scrollbars"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
