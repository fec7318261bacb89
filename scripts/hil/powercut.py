#!/usr/bin/env python3
"""The power-cut test's host side (DESIGN.md §5, tier 4). Started by `scripts/hil/run.sh
--powercut N` (or `scripts/powercut N`), which builds vendd and the guest's initramfs.

vendd's state directory is ext4 on a virtio-blk disk, an image file here. Each boot of the
guest (scripts/hil/guest/powercut.sh) restores and reports the books, then runs a stream of
coins (cctalk-sim, on this side of the guest's /dev/ttyS1), presses and drops until this
script SIGKILLs qemu at a random instant: a power cut, the guest's page cache is lost. Then
e2fsck (as a board would at boot) and the next boot, which reconciles that cut and is cut in
turn. One boot per cut, plus a last one that only reconciles.

What a cut must leave (checked from the guest's console lines, streamed as they happen, and
the simulator's own record of the coins it accepted):
  - coins: vendd's coinsIn is exactly the sum of every coin cctalk-sim accepted (coins it had
    not yet reported are still in its buffer and are credited at restart);
  - no relay pulse without a durable intent: the relay pulses seen during a stream are no more
    than the vends the restored books hold that were started in it (and at most one more: the
    vend whose intent was durable when the power went, before its relay moved);
  - the vend in flight resolved at start (unknown_outcome: refund-credit, logged), none left;
  - books balanced: coinsIn = sales + refunds + credit;
  - no double vend: no relay moves while vendd starts, and no vend number is started twice.
Prints one POWERCUT line per cut and a summary; exits 1 on any failure.
"""
import argparse
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
from decimal import Decimal

# hil-coin.yaml's channels, which are cctalk-sim's coin positions.
COIN_VALUES = {1: 10, 2: 50, 3: 100, 4: 500}
BOOT_TIMEOUT = float(os.environ.get("VENDD_POWERCUT_BOOT_TIMEOUT", "180"))


def say(text):
    print(text, flush=True)


class Simulator:
    """cctalk-sim, for the whole run: like a real acceptor it keeps its event buffer and counter
    across the controller's power cuts. Records every coin it accepted, in order."""

    def __init__(self, binary, socket_path, log_path):
        self.accepted = []  # coin positions, in the order the device accepted them
        self.returned = 0
        self._status = threading.Condition()
        self._status_seen = 0
        self._log = open(log_path, "w", buffering=1)
        self.proc = subprocess.Popen([binary, "--socket", socket_path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        threading.Thread(target=self._read, daemon=True).start()
        for _ in range(100):
            if os.path.exists(socket_path):
                return
            time.sleep(0.1)
        raise SystemExit(f"powercut: cctalk-sim did not listen on {socket_path} (see {log_path})")

    def _read(self):
        coin = re.compile(r"^coin (\d+): (accepted|returned)")
        for line in self.proc.stdout:
            self._log.write(line)
            match = coin.match(line)
            if match:
                if match.group(2) == "accepted":
                    self.accepted.append(int(match.group(1)))
                else:
                    self.returned += 1
            elif line.startswith("event counter"):
                with self._status:
                    self._status_seen += 1
                    self._status.notify_all()

    def send(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def settled(self):
        """Waits until the simulator has handled every command sent so far (it answers in order)."""
        with self._status:
            target = self._status_seen + 1
            self.send("status")
            if not self._status.wait_for(lambda: self._status_seen >= target, timeout=10):
                raise SystemExit("powercut: cctalk-sim did not answer 'status' within 10 s")
        return list(self.accepted)


class Boot:
    """What one boot of the guest showed on its console."""

    def __init__(self, number):
        self.number = number
        self.books = None            # the status JSON after restore
        self.accepted_at_books = []  # the simulator's accepted coins at that moment
        self.resolved = []           # vend numbers vendd resolved as in flight at start
        self.store_notes = []
        self.startup_pulses = []     # relay-on seen before the stream: must never happen
        self.stream_pulses = []
        self.vends_started = []      # vend numbers from `vendctl watch`
        self.coins_shown = 0         # coins `vendctl watch` showed credited
        self.errors = []
        self.streaming = False
        self.stream_started = None
        self.cut_after = None
        self.done = False
        self.qemu_status = None


def amount(text):
    return Decimal(text)


def run_boot(args, number, stream, sim, console, rng):
    boot = Boot(number)
    command = ["qemu-system-x86_64", "-accel", "tcg", "-m", "512", "-smp", "2",
               "-kernel", args.kernel, "-initrd", args.initrd,
               "-append", f"console=ttyS0 quiet panic=-1 pc.stream={1 if stream else 0}",
               "-nographic", "-no-reboot", "-serial", "mon:stdio", "-serial", f"unix:{args.socket}",
               # cache=writeback (qemu's default): the guest sees a disk with a volatile write
               # cache and must flush; what qemu has written survives it in the host's page cache.
               "-drive", f"file={args.image},format=raw,if=virtio,cache=writeback"]
    qemu = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = queue.Queue()

    def read():
        for raw in qemu.stdout:
            lines.put(raw.decode("utf-8", "replace").replace("\r", "").rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    started = time.monotonic()
    deadline = None
    killed = False
    vend = re.compile(r"^vend#(\d+) started")
    resolved = re.compile(r"vend#(\d+) at slot \S+ was in flight")
    while True:
        now = time.monotonic()
        if deadline is not None and not killed and now >= deadline:
            qemu.send_signal(signal.SIGKILL)  # the power cut
            killed = True
            boot.cut_after = now - boot.stream_started
        if not killed and now - started > BOOT_TIMEOUT:
            qemu.send_signal(signal.SIGKILL)
            killed = True
            boot.errors.append(f"boot {number} did not finish within {BOOT_TIMEOUT:.0f} s")
        wait = 0.5 if deadline is None or killed else max(0.0, min(0.5, deadline - now))
        try:
            line = lines.get(timeout=wait)
        except queue.Empty:
            continue
        if line is None:
            break
        console.write(f"[boot {number}] {line}\n")
        if args.verbose:
            print(f"  {line}", file=sys.stderr)
        if line.startswith("HIL-HOST: "):
            sim.send(line[len("HIL-HOST: "):])
        elif line.startswith("OBS relay-on ") and len(line.split()) >= 3:
            (boot.stream_pulses if boot.streaming else boot.startup_pulses).append(line.split()[2])
        elif line.startswith("EVT "):
            try:
                event = json.loads(line[4:])
            except json.JSONDecodeError:
                continue  # a line cut short by the power cut
            boot.coins_shown += event.get("kind") == "coin"
            match = vend.match(event.get("text", "")) if event.get("kind") == "vend-started" else None
            if match:
                boot.vends_started.append(int(match.group(1)))
        elif line.startswith("PC resolved "):
            match = resolved.search(line)
            boot.resolved.append(int(match.group(1)) if match else line)
        elif line.startswith("PC store "):
            boot.store_notes.append(line[len("PC store "):])
        elif line.startswith("PC books "):
            try:
                boot.books = json.loads(line[len("PC books "):])["status"]
            except (json.JSONDecodeError, KeyError):
                boot.errors.append(f"unreadable books: {line}")
                continue
            # Nothing the guest asks for reaches the simulator before this line is handled.
            boot.accepted_at_books = sim.settled()
        elif line == "PC stream-start":
            boot.streaming = True
            boot.stream_started = time.monotonic()
            deadline = boot.stream_started + rng.uniform(args.min_cut, args.max_cut)
        elif line == "PC done":
            boot.done = True
        elif line.startswith("PC error"):
            boot.errors.append(line)
    boot.qemu_status = qemu.wait()
    if stream and boot.cut_after is None and not boot.errors:
        boot.errors.append(f"boot {number} ended (qemu exit {boot.qemu_status}) before it was cut")
    if not stream and not boot.done and not boot.errors:
        boot.errors.append(f"the last boot did not finish (qemu exit {boot.qemu_status})")
    return boot


def fsck(image):
    """e2fsck -p, as a board's boot would: replays the ext4 journal, fixes what is safe.
    Exit 0 or 1 is a clean or repaired file system; more is damage it could not repair."""
    result = subprocess.run(["e2fsck", "-p", image], capture_output=True, text=True)
    return result.returncode, (result.stdout + result.stderr).strip()


def vends_in(books):
    # Every vend ends as one of these (vend numbers are 1, 2, 3, …): sold, failed, or resolved as
    # unknown by refund-credit (the guest's configuration), which is in neither of the others.
    return books["itemsSold"] + books["failedVends"] + books["unknownOutcomes"]


def reconcile(before, after, fsck_status, fsck_output, seen_vends, tally):
    """The checks for one cut: `before` is the boot that was cut, `after` the one that restored.
    Returns (problems, double_vends, summary); adds what the cut exercised to `tally`."""
    problems, doubles = [], 0
    status = after.books
    books = status["books"]
    coins_in = amount(books["coinsIn"])
    balance = amount(books["sales"]) + amount(books["refunds"]) + amount(status["credit"])
    if coins_in != balance:
        problems.append(f"books do not balance: coinsIn {coins_in} != sales {books['sales']} + refunds "
                        f"{books['refunds']} + credit {status['credit']}")
    if "vendInProgress" in status:
        problems.append(f"a vend is still in flight after start-up: {status['vendInProgress']}")
    accepted = after.accepted_at_books
    expected = sum(COIN_VALUES[p] for p in accepted)
    if coins_in < expected:
        problems.append(f"coins lost: cctalk-sim accepted {len(accepted)} coins worth {expected}, "
                        f"vendd's coinsIn is {coins_in}")
    elif coins_in > expected:
        problems.append(f"coins counted twice or invented: cctalk-sim accepted {len(accepted)} coins worth "
                        f"{expected}, vendd's coinsIn is {coins_in}")

    intents = vends_in(books) - vends_in(before.books["books"])
    pulses = len(before.stream_pulses)
    if pulses > intents:
        problems.append(f"{pulses} relay pulse(s) but only {intents} vend(s) with a durable intent: "
                        f"a relay moved for a vend the restored books do not have")
    elif intents > pulses + 1:
        problems.append(f"{intents} vends in the books but {pulses} relay pulse(s): more than the one "
                        f"vend that may have been cut between its intent and its relay")
    first, last = vends_in(before.books["books"]), vends_in(books)
    for number in before.vends_started:
        if number in seen_vends:
            doubles += 1
            problems.append(f"double vend: vend#{number} was started in two boots")
        elif not first < number <= last:
            problems.append(f"vend#{number} was started (watch) but the restored books hold vends "
                            f"{first + 1}..{last}")
        seen_vends.add(number)
    if after.startup_pulses:
        doubles += len(after.startup_pulses)
        problems.append(f"double vend: relay {', '.join(after.startup_pulses)} pulsed while vendd "
                        f"started (no new vend was asked for)")
    unknown = books["unknownOutcomes"] - before.books["books"]["unknownOutcomes"]
    if len(after.resolved) != unknown:
        problems.append(f"vendd logged {len(after.resolved)} interrupted vend(s) resolved, the books "
                        f"count {unknown} new unknown outcome(s)")
    for number in after.resolved:
        if number != last:
            problems.append(f"vendd resolved {number!r} as in flight, but the last vend is vend#{last}")
    if fsck_status > 1:
        problems.append(f"e2fsck could not repair the file system (exit {fsck_status})")

    new_coins = len(accepted) - len(before.accepted_at_books)
    # Coins the cut boot never showed credited: still in the acceptor's buffer at the cut (or
    # journaled but their watch line lost with the power); either way credited only now.
    late = max(0, new_coins - before.coins_shown)
    tally["resolved"] += len(after.resolved)
    tally["intent-before-relay"] += intents == pulses + 1
    tally["late coins"] += late
    tally["journal replays"] += "recovering journal" in fsck_output
    torn = sum("incomplete last record" in note for note in after.store_notes)
    tally["torn records"] += torn
    resolved = "interrupted vend resolved (refund-credit)" if after.resolved else "no vend in flight"
    summary = (f"cut after {before.cut_after:.2f} s; coins accepted {new_coins} "
               f"({len(accepted)} in all, worth {expected}), coinsIn {coins_in}; "
               f"relay pulses {pulses}, intents {intents}; {resolved}; "
               f"{'books balanced' if coins_in == balance else 'BOOKS UNBALANCED'}")
    if late:
        summary += f"; {late} coin(s) not shown credited before the cut"
    if intents == pulses + 1:
        summary += "; cut between a durable intent and its relay"
    if "recovering journal" in fsck_output:
        summary += "; e2fsck replayed the ext4 journal"
    if torn:
        summary += "; a torn journal record dropped"
    return problems, doubles, summary


def make_image(args):
    """A fresh ext4 image holding the prepared state (every slot full, no credit)."""
    if os.path.exists(args.image):
        os.remove(args.image)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "vendd-state", "-d", args.state, args.image, "32M"],
                   check=True, stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuts", type=int, default=30)
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--initrd", required=True)
    parser.add_argument("--simulator", required=True, help="the cctalk-sim binary")
    parser.add_argument("--state", required=True, help="the prepared state directory for the image")
    parser.add_argument("--work", required=True, help="a scratch directory")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("VENDD_POWERCUT_SEED", "0")) or None)
    parser.add_argument("--min-cut", type=float, default=0.05, help="earliest cut after the stream starts (s)")
    parser.add_argument("--max-cut", type=float, default=4.0, help="latest cut after the stream starts (s)")
    parser.add_argument("--verbose", action="store_true", help="echo the guest's console on stderr")
    args = parser.parse_args()
    args.seed = args.seed or random.SystemRandom().randrange(1, 2**31)
    args.image = os.path.join(args.work, "state.ext4")
    args.socket = os.path.join(args.work, "coin.sock")
    rng = random.Random(args.seed)
    console_path = os.path.join(args.work, "powercut-console.log")
    keep = os.environ.get("VENDD_POWERCUT_KEEP")  # a directory: the console and simulator logs go there
    say(f"powercut: {args.cuts} cuts, seed {args.seed} (VENDD_POWERCUT_SEED={args.seed} repeats the cut instants)")

    try:
        return run(args, rng, console_path)
    finally:
        if keep:
            os.makedirs(keep, exist_ok=True)
            for name in ("powercut-console.log", "cctalk-sim.log"):
                if os.path.exists(os.path.join(args.work, name)):
                    subprocess.run(["cp", os.path.join(args.work, name), keep])


def run(args, rng, console_path):
    make_image(args)
    sim = Simulator(args.simulator, args.socket, os.path.join(args.work, "cctalk-sim.log"))
    failures = doubles = 0
    seen_vends = set()
    tally = dict.fromkeys(["resolved", "intent-before-relay", "late coins", "journal replays", "torn records"], 0)
    started = time.monotonic()
    with open(console_path, "w", buffering=1) as console:
        previous = run_boot(args, 0, args.cuts > 0, sim, console, rng)
        fatal = previous.errors or previous.books is None
        if not fatal:
            books = previous.books["books"]
            if amount(books["coinsIn"]) != 0 or previous.startup_pulses:
                previous.errors.append(f"the first boot's state is not the prepared one: {previous.books}")
                fatal = True
        cut = reconciled = 0
        while not fatal and cut < args.cuts:
            cut += 1
            cut_started = time.monotonic()
            fsck_status, fsck_output = fsck(args.image)
            if fsck_status > 1:
                say(f"powercut: e2fsck after cut {cut}: {fsck_output}")
            boot = run_boot(args, cut, cut < args.cuts, sim, console, rng)
            if boot.books is None:
                failures += 1
                say(f"POWERCUT {cut}: FAIL: the guest did not report its books after the cut: "
                    f"{'; '.join(boot.errors) or 'no reason given'}")
                fatal = True
                break
            problems, double, summary = reconcile(previous, boot, fsck_status, fsck_output, seen_vends, tally)
            doubles += double
            reconciled += 1
            took = time.monotonic() - cut_started  # fsck, boot, restore, and the next stream
            if problems:
                failures += 1
                say(f"POWERCUT {cut}: FAIL: {summary}; {took:.1f} s")
                for problem in problems:
                    say(f"  - {problem}")
            else:
                say(f"POWERCUT {cut}: {summary}; {took:.1f} s")
            if boot.errors:
                failures += 1
                say(f"POWERCUT {cut}: FAIL: {'; '.join(boot.errors)}")
                fatal = True
            previous = boot
    sim.send("quit")
    elapsed = time.monotonic() - started
    if fatal:
        failures += 1
        say("powercut: stopped early; the guest's console follows (last 40 lines)")
        for error in previous.errors:
            say(f"  - {error}")
        with open(console_path) as console:
            for line in console.readlines()[-40:]:
                sys.stdout.write(line)
    done = reconciled
    say(f"powercut: exercised: {tally['resolved']} interrupted vends resolved at start, "
        f"{tally['intent-before-relay']} cuts between an intent and its relay, "
        f"{tally['late coins']} coins credited only after the cut, {sim.returned} coins returned "
        f"(acceptor inhibited), {tally['torn records']} torn journal records, "
        f"{tally['journal replays']} ext4 journal replays by e2fsck")
    mean = elapsed / max(done, 1)
    say(f"powercut: {done} cuts, {failures} reconciliation failures, {doubles} double vends, "
        f"mean {mean:.1f} s per cut (seed {args.seed})")
    return 1 if failures or doubles or done < args.cuts else 0


if __name__ == "__main__":
    sys.exit(main())
