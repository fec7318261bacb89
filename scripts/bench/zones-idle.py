#!/usr/bin/env python3
"""Idle CPU of vendd with temperature zones, against the same machine without them.

Runs `vendd run --simulate` on config/examples/chilled-food.yaml (two zones, four sensors, read
every 5 s) and on that file with its `zones:` section and the slots' zone keys removed, and
prints each one's CPU use while idle, in percent of one core. Under --simulate the zones read
their simulated cabinets, so this measures the sensors' lane, the controllers and the timers,
not the kernel's w1_therm conversions. Prints figures; never fails on a timing.

Usage: scripts/bench/zones-idle.py [path/to/vendd] [idle seconds]
"""
import os, re, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENDD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/vendd")
IDLE_SECONDS = int(sys.argv[2]) if len(sys.argv) > 2 else 60
EXAMPLE = os.path.join(ROOT, "config/examples/chilled-food.yaml")


def clock_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def without_zones(text):
    """The example with no zones: the section and every slot's zone and perishable keys."""
    text = re.sub(r"\nzones:\n(?:  .*\n|\s*#.*\n|\n)*?(?=\nslots:)", "\n", text)
    return re.sub(r"\n    (zone|perishable): .*", "", text)


def idle_cpu(config_text, work):
    config = os.path.join(work, "vendd.yaml")
    with open(config, "w") as f:
        f.write(config_text)
    process = subprocess.Popen(
        [VENDD, "run", "--config", config, "--simulate", "--state-dir", os.path.join(work, "state"),
         "--socket", os.path.join(work, "control.sock")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)
        ticks_before, wall_before = clock_ticks(process.pid), time.monotonic()
        time.sleep(IDLE_SECONDS)
        ticks = clock_ticks(process.pid) - ticks_before
        return (ticks / os.sysconf("SC_CLK_TCK")) / (time.monotonic() - wall_before) * 100
    finally:
        process.terminate()
        process.wait()


def main():
    with open(EXAMPLE) as f:
        text = f.read()
    with tempfile.TemporaryDirectory() as zoned, tempfile.TemporaryDirectory() as plain:
        with_zones = idle_cpu(text, zoned)
        bare = idle_cpu(without_zones(text), plain)
    print(f"vendd {VENDD}, idle {IDLE_SECONDS} s each")
    print(f"two zones, four sensors (simulated, read every 5 s): {with_zones:.3f} % of a core")
    print(f"the same machine without zones:                    {bare:.3f} % of a core")


if __name__ == "__main__":
    main()
