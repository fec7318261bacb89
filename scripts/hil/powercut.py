#!/usr/bin/env python3
"""The power-cut test's host side (DESIGN.md §5, tier 4). Started by `scripts/hil/run.sh
--powercut N` (or `scripts/powercut N`), which builds vendd and the guest's initramfs.

vendd's state directory is ext4 on a virtio-blk disk, an image file here. Each boot of the
guest (scripts/hil/guest/powercut.sh) restores and reports the books, then runs a stream of
customers until this script SIGKILLs qemu: a power cut, the guest's page cache is lost.
Customers insert coins (cctalk-sim, on this side of the guest's /dev/ttyS1), buy or press coin
return, and get change: the machine pays it through a ccTalk hopper of 500s on the acceptor's
bus (cctalk-sim --hopper) and an MDB changer (mdb-sim, behind /dev/ttyS2), both slow (a hopper
coin every HOPPER_TURNS status polls, a changer coin every CHANGER_COIN_MS). Each boot's cut
falls at a random instant of the stream, or at a random instant shortly after the watch shows a
payout or a vend started (AIMS): many cuts land mid-payout, some mid-vend, the rest anywhere
(coins still in the acceptor's buffer, …). In some cuts the hopper loses power too, as in a
cut of the whole machine (its counter back at 0: vendd cannot tell what it paid of a payout it
was asked, and must book that part unknown). About one customer in three pays by card, on a
card reader (mdb-sim --cashless 1, cashless #1 on the changer's bus): selection first or card
first, sometimes with a slow approval or a denial; some cuts are aimed at a card vend (within
CARD_AIM seconds of its VEND REQUEST: before the approval, between the approval and the
outcome, or as the reader is told it). The reader is in this process and keeps its power through
a cut, as a reader on its own supply does; in some cuts it is reset at the same instant, as when
the whole machine loses power (MDB §7: a reset between VEND APPROVED and VEND SUCCESS is a sale to
the reader). Then e2fsck (as a board would at boot) and the next boot, which reconciles that cut
and is cut in turn. One boot per cut, plus a last one that only reconciles. Like real devices,
the simulators run on through the cuts and keep their own totals.
Some cash customers buy from B1-B3, spiral motors of a one-row matrix on a second gpio-sim chip
in the guest (hil-powercut.yaml: B1 and B2 on a shared home line, B3 on its own), turned by the
guest's motor model (motor-model.c: the cam leaves home 0.2 s after power, is back 1.2 s after);
some cuts are aimed at a turn (within MOTOR_AIM seconds of its vend's start; the boot's first
customer then buys a spiral). The model prints every motor powered and every cam move on the
console; this script follows them, and the cams stay where they were at the cut: the next boot
is told (pc.away=R.C,...) which cams are away, and the model puts them there before vendd starts.
A move whose console line was lost with the power counts as not made (the cut came first).

What a cut must leave (checked from the guest's console lines, streamed as they happen, and
the simulators' own records):
  - coins: vendd's coinsIn is exactly the sum of every coin cctalk-sim accepted (coins it had
    not yet reported are still in its buffer and are credited at restart);
  - no relay pulse without a durable intent: the relay pulses seen during a stream are no more
    than the vends the restored books hold that were started in it (and at most one more: the
    vend whose intent was durable when the power went, before its relay moved);
  - the vend in flight resolved at start (unknown_outcome: refund-credit, logged), none left;
  - payout truth, against the devices' own totals (mdb-sim's "paid", the hopper's coins gone),
    over each cut boot and its restart: booked paid (changePaid + refunds: with `payout: change`
    every payout is the devices') <= what the devices paid <= booked paid + unknownPayouts. A
    payout in flight is resolved at start from the devices' evidence, never paid again: none
    left in flight, none resolved that had ended (watch), no payout number started twice;
  - books balanced: coinsIn = sales + changePaid + refunds + unknownPayouts + credit;
  - no double vend: no relay moves while vendd starts, and no vend number is started twice (cash
    or card);
  - card money, against the reader's own books (mdb-sim's "charged" and "refunded"): what the
    reader charged less what it refunded lies between the machine's card sales plus the refunds
    it books lost, and that plus what it books possibly charged (a reset in the approval window:
    the interface ACKed an approval vendd never journaled), whatever the reader made of a reset
    (the rule comes from its books, not from here). No card vend settled twice (the settlements
    the watch showed and those vendd made at start); a card vend the drop sensor saw sold is never
    settled as a failure, one it saw not drop never as a sale; a refund is booked lost, or a vend
    possibly charged, at start only after a cut in which the reader was reset;
    a card vend resolved at start without an approval is no unknown outcome (nothing vended);
  - spiral motors: a motor powered counts as a relay pulse above (a durable intent first, none at
    start); a motor whose cam was away from home at the cut is locked away-from-home at the next
    start and never powered there (the model reports a motor powered while its cam is away, and
    any other misuse of the matrix: a failure); a motor at home, even one cut mid-turn after its
    cam came back, is not locked (save the motors of a shared home line when no vend in flight
    names one: vendd cannot tell which is away). Then the technician (the guest) turns the locked
    cams home and clears their slots (`vendctl service on; slot clear; service off`).
Prints one POWERCUT line per cut and a summary; exits 1 on any failure.
"""
import argparse
import json
import os
import queue
import random
import re
import subprocess
import sys
import threading
import time
from decimal import Decimal

# hil-powercut.yaml's channels, which are cctalk-sim's coin positions.
COIN_VALUES = {1: 10, 2: 50, 3: 100, 4: 500}
# The hopper of hil-powercut.yaml's payout_devices, with coins for any run. vendd reads a paying
# hopper's status every 100 ms and the simulated motor turns once per read: a coin in about 0.6 s.
HOPPER_ADDRESS, HOPPER_COIN, HOPPER_COINS, HOPPER_TURNS = 3, 500, 5000, 6
# The changer's float in its tubes of 10, 50, 100 and 500 (capacity 100 each; the hopper pays
# the 500s first), and how long each coin of its payouts takes. A tube of 10, 50 or 100 below
# CHANGER_REFILL_BELOW is filled back by hand while the books are read (no payout in flight).
CHANGER_FLOAT, CHANGER_COIN_MS, CHANGER_REFILL_BELOW = (95, 95, 95, 20), 600, 30
# The share of cuts in which the hopper loses power with the board.
HOPPER_POWER_LOSS = 0.25
# Where each boot's cut is aimed, with its weight: at any instant of the stream (--min-cut to
# --max-cut after its start), at any instant of the first payout the watch shows started (as
# long as `payout_length` expects it to take), or within VEND_AIM seconds after it shows a vend
# started. An aimed cut whose event does not come within AIM_TIMEOUT seconds of the stream's
# start falls at that instant. A card customer first returns the credit a cut left (a payout of
# many slow coins) and asks vendctl for the session, each call slow in the emulated guest: on a
# loaded host its request came after 6 s, and runs cut almost no card vend (stop 33). A run whose
# cuts aimed at card vends met too few of them fails (CARD_AIMS_MET).
AIMS = {"any": 3, "payout": 5, "vend": 2, "card": 4, "motor": 3}
VEND_AIM, AIM_TIMEOUT, CARD_AIM_TIMEOUT = 0.4, 6.0, 25.0
CARD_AIMS_MET = 0.5
# A cut aimed at a spiral motor's turn falls within MOTOR_AIM seconds of the vend's start (B1-B3,
# hil-powercut.yaml's one-row matrix; a boot so aimed starts its stream with a spiral customer,
# pc.aim=motor). The guest's motor model (motor-model.c) powers the motor about 0.1 s after the
# watch's vend-started, its cam leaves home 0.2 s later and is back 1.2 s after the power: cuts
# fall before the cam leaves, while it is away, and after it is home again.
MOTOR_AIM = 1.7
# The motors of hil-powercut.yaml, (row, column) -> slot; B1 and B2 share a home line, B3 has its own.
MOTOR_SLOTS = {(1, 1): "B1", (1, 2): "B2", (1, 3): "B3"}
SHARED_HOME = {"B1", "B2"}
# A cut aimed at a card vend falls within CARD_AIM seconds of its request (the watch's "waiting
# for the approval"). Measured in the guest: the approval about 0.2 s later (or after a slow
# approval's polls, 0.6 to 2.9 s), the sale on the drop sensor's word 0.4 s after that and the
# reader told 0.05 s later; a vend that does not drop waits out the 1 s drop window. A boot whose
# cut is aimed so starts its stream with a card customer (pc.aim=card).
CARD_AIM = 1.0
# The share of cuts in which the card reader is reset at the instant of the cut: half of those
# aimed at a card vend (a reset between VEND APPROVED and VEND SUCCESS is what matters), a tenth
# of the others.
READER_RESET = {"card": 0.5}
READER_RESET_ELSE = 0.1
# Measured in the guest: from a payout's start to the hopper's first coin command, each hopper
# coin, and from the hopper's end to the changer's first coin command (it counts its tubes first).
PAYOUT_START_S, HOPPER_COIN_S, CHANGER_START_S = 0.3, 0.6, 0.6
BOOT_TIMEOUT = float(os.environ.get("VENDD_POWERCUT_BOOT_TIMEOUT", "180"))


def say(text):
    print(text, flush=True)


def payout_length(amount):
    """About how long the devices take to pay `amount` (seconds): the hopper its 500s, then the
    changer the rest, largest coin first (its 500s are the hopper's)."""
    hopper, rest = divmod(amount, HOPPER_COIN)
    changer = 0
    for coin in (100, 50, 10):
        count, rest = divmod(rest, coin)
        changer += count
    return (PAYOUT_START_S + hopper * HOPPER_COIN_S
            + (CHANGER_START_S + changer * CHANGER_COIN_MS / 1000 if changer else 0))


class Simulator:
    """A device simulator run for the whole series: like a real device, it runs on through the
    controller's power cuts and keeps its own record. Commands go to its stdin; every line it
    prints is logged and given to `_line`; `status()` waits for the answer to `status`, the
    next line starting with `status_prefix` (it answers in order)."""

    status_prefix = None

    def __init__(self, name, command, socket_path, log_path):
        self.name = name
        self._status = threading.Condition()
        self._status_lines = []
        self._log = open(log_path, "w", buffering=1)
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1)
        threading.Thread(target=self._read, daemon=True).start()
        for _ in range(100):
            if os.path.exists(socket_path):
                return
            time.sleep(0.1)
        raise SystemExit(f"powercut: {name} did not listen on {socket_path} (see {log_path})")

    def _read(self):
        for line in self.proc.stdout:
            self._log.write(line)
            if line.startswith(self.status_prefix):
                with self._status:
                    self._status_lines.append(line.rstrip("\n"))
                    self._status.notify_all()
            else:
                self._line(line)

    def _line(self, line):
        pass

    def send(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def status(self):
        """Its `status` line, once it has handled every command sent before."""
        with self._status:
            seen = len(self._status_lines)
            self.send("status")
            if not self._status.wait_for(lambda: len(self._status_lines) > seen, timeout=10):
                raise SystemExit(f"powercut: {self.name} did not answer 'status' within 10 s")
            return self._status_lines[seen]


class CoinSimulator(Simulator):
    """cctalk-sim: the acceptor (it keeps its event buffer and counter across the controller's
    power cuts) and the hopper on its bus. Records every coin it accepted, in order."""

    status_prefix = "event counter"

    def __init__(self, binary, socket_path, log_path):
        self.accepted = []  # coin positions, in the order the device accepted them
        self.returned = 0
        super().__init__("cctalk-sim", [binary, "--socket", socket_path,
                                        "--hopper", f"{HOPPER_ADDRESS}:{HOPPER_COINS}:{HOPPER_TURNS}"],
                         socket_path, log_path)

    def _line(self, line):
        match = re.match(r"^coin (\d+): (accepted|returned)", line)
        if match:
            if match.group(2) == "accepted":
                self.accepted.append(int(match.group(1)))
            else:
                self.returned += 1

    def settled(self):
        """The coins accepted so far and the coins left in the hopper."""
        line = self.status()
        match = re.search(r"hopper: (\d+) coins", line)
        if not match:
            raise SystemExit(f"powercut: cctalk-sim's status does not say the hopper's coins: {line}")
        return list(self.accepted), int(match.group(1))


class ChangerSimulator(Simulator):
    """mdb-sim with a changer (no bill validator), its float in the tubes, paying coin by coin,
    and a card reader at 10h (cashless #1) on the same bus."""

    status_prefix = "changer: "

    def __init__(self, binary, socket_path, log_path):
        super().__init__("mdb-sim", [binary, "--socket", socket_path, "--no-bills", "--cashless", "1",
                                     "--tubes", ",".join(map(str, CHANGER_FLOAT)),
                                     "--coin-interval", str(CHANGER_COIN_MS)], socket_path, log_path)

    def paid(self):
        """What the changer has paid in all, its tubes now ("95,93,89,20"), and the card
        reader's own books: what it charged and what it refunded (lists of amounts)."""
        line = self.status()
        match = re.match(r"^changer: tubes ([\d,]+), .* paid (\d+),", line)
        if not match:
            raise SystemExit(f"powercut: mdb-sim's status does not say what the changer paid: {line}")
        reader = re.search(r"reader 1: \w+, charged \[([\d, ]*)\], refunded \[([\d, ]*)\]", line)
        if not reader:
            raise SystemExit(f"powercut: mdb-sim's status does not show the card reader's books: {line}")
        charged = [Decimal(x) for x in reader.group(1).split(",") if x.strip()]
        refunded = [Decimal(x) for x in reader.group(2).split(",") if x.strip()]
        return Decimal(match.group(2)), match.group(1), charged, refunded

    def refill(self, tubes):
        """Fills the tubes of small coins that run low back to their float (a technician's
        round; vendd sees it in its next TUBE STATUS). Returns the coins loaded."""
        loaded = 0
        for coin_type, count in enumerate(int(count) for count in tubes.split(",")[:3]):
            if count < CHANGER_REFILL_BELOW:
                self.send(f"fill {coin_type} {CHANGER_FLOAT[coin_type] - count}")
                loaded += CHANGER_FLOAT[coin_type] - count
        return loaded


class Boot:
    """What one boot of the guest showed on its console."""

    def __init__(self, number):
        self.number = number
        self.books = None            # the status JSON after restore
        self.accepted_at_books = []  # the simulator's accepted coins at that moment
        self.hopper_left = None      # coins left in the hopper then
        self.changer_paid = None     # what the changer had paid in all then
        self.tubes = None
        self.tube_refill = 0         # coins loaded into the tubes by hand then
        self.reader_charged = []     # the card reader's own books then: each charge
        self.reader_refunded = []    # and each refund
        self.card_requested = []     # card vend numbers the watch showed requested (VEND REQUEST)
        self.card_approved = []      # and approved
        self.card_denied = []
        self.card_settled = {}       # vend number -> "success", "failure" or "refund-lost" (watch)
        self.card_sold_by_drop = []  # card vends the watch showed sold on the drop sensor's word
        self.card_not_dropped = []   # card vends the watch showed failed, the item not dropped
        self.startup_settled = []    # (vend, result, amount, approved) vendd settled at start (its log)
        self.reader_reset = False    # the reader was reset at the instant of this boot's cut
        self.resolved = []           # vend numbers vendd resolved as in flight at start
        self.payouts_resolved = []   # payouts vendd resolved as in flight at start: their log fields
        self.store_notes = []
        self.startup_pulses = []     # relay-on or motor powered before the stream: must never happen
        self.stream_pulses = []
        self.vends_started = []      # vend numbers from `vendctl watch`
        self.payouts_started = []    # payout numbers from `vendctl watch`
        self.payouts_ended = []
        self.coins_shown = 0         # coins `vendctl watch` showed credited
        self.errors = []
        self.streaming = False
        self.stream_started = None
        self.cut_after = None
        self.aim = None              # where the cut was aimed: a key of AIMS
        self.aim_met = False         # and whether the event aimed at came (else the timeout cut)
        self.hopper_loses_power = False
        self.done = False
        self.qemu_status = None
        self.away_at_start = set()   # motors (row, column) whose cams the host put away from home
        self.away_at_cut = set()     # and those away from home when the power went
        self.turn_at_cut = None      # the spiral vend in flight at the cut: where its cam was in the turn
        self.aimed_turn = None       # a cut aimed at a turn: that turn, and where its cam was at the cut
        self.locked = {}             # slot -> fault, out of service once vendd had started
        self.violations = []         # (streaming, line): the motor model's "MODEL VIOLATION"s
        self.resolved_slots = set()  # the slots of the vends resolved as in flight at start
        self.cams_homed = 0          # cams the technician turned home before the stream

    def devices_paid(self):
        return self.changer_paid + (HOPPER_COINS - self.hopper_left) * HOPPER_COIN

    def cut_mid_payout(self):
        """The watch showed a payout started and not ended when the power went."""
        return bool(self.payouts_started) and self.payouts_started[-1] not in self.payouts_ended

    def card_vend_at_cut(self):
        """The card vend the watch showed requested and neither denied nor settled when the power
        went, and whether its approval had been shown; (None, False) if there was none."""
        if not self.card_requested:
            return None, False
        number = self.card_requested[-1]
        if number in self.card_denied or number in self.card_settled:
            return None, False
        return number, number in self.card_approved

    def reader_net(self):
        """What the card reader had charged, less what it had refunded, when the books were read."""
        return sum(self.reader_charged, Decimal(0)) - sum(self.reader_refunded, Decimal(0))


def amount(text):
    return Decimal(text)


def possibly_charged(books):
    """Card vends that dispensed nothing and that the reader may have charged (nobody can tell)."""
    return sum((amount(value) for value in books.get("cardPossiblyCharged", {}).values()), Decimal(0))


def card_money(books):
    """The card money in vendd's books: what the readers charged for sales, and what they
    charged for vends that failed and could not be refunded (the operator refunds those)."""
    return (sum((amount(value) for value in books.get("cardSales", {}).values()), Decimal(0))
            + amount(books.get("cardRefundsLost", "0")))


def run_boot(args, number, stream, coins, changer, console, rng, cams):
    """One boot, cut during its stream when `stream`. `cams`, the motors whose cams are away from
    home (the host's record, as the model's console lines show them move), goes to the guest at
    boot and follows the cams until the cut: a cam does not move while the power is off."""
    boot = Boot(number)
    boot.away_at_start = set(cams)
    # Drawn before the boot: a cut aimed at a card vend has the guest start with a card customer.
    boot.aim = rng.choices(list(AIMS), weights=list(AIMS.values()))[0]
    anywhere, within = rng.uniform(args.min_cut, args.max_cut), rng.random()
    boot.hopper_loses_power = rng.random() < HOPPER_POWER_LOSS
    boot.reader_reset = rng.random() < READER_RESET.get(boot.aim, READER_RESET_ELSE)
    command = ["qemu-system-x86_64", "-accel", "tcg", "-m", "512", "-smp", "2",
               "-kernel", args.kernel, "-initrd", args.initrd,
               "-append", (f"console=ttyS0 quiet panic=-1 pc.stream={1 if stream else 0} pc.aim={boot.aim} "
                           f"pc.away={','.join(f'{row}.{column}' for row, column in sorted(cams))}"),
               "-nographic", "-no-reboot", "-serial", "mon:stdio", "-serial", f"unix:{args.coin_socket}",
               # The MDB UART as run.sh wires it for the scenarios: COM3 on IRQ 5, reconnecting.
               "-chardev", f"socket,id=mdb,path={args.mdb_socket},reconnect=1",
               "-device", "isa-serial,chardev=mdb,index=2,irq=5",
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
    aimed_at = None  # for a cut aimed at an event: where in it (0 to 1)
    killed = False
    vend = re.compile(r"^vend#(\d+) started")
    payout = re.compile(r"^payout#(\d+)")
    resolved = re.compile(r"vend#(\d+) at slot \S+ was in flight")
    vend_number = re.compile(r"^vend#(\d+)")
    model_move = re.compile(r"^MODEL (powered|left home|home) (\d+) (\d+)")
    # The spiral vend in flight (its motor powered, the watch not yet showing its end) and how far
    # its cam has got: a cut after the cam came home, before the vend is shown ended, is mid-turn too.
    turn = last_turn = None  # last_turn: the latest spiral vend's, kept after it ends
    while True:
        now = time.monotonic()
        if deadline is not None and not killed and now >= deadline:
            qemu.kill()  # the power cut
            qemu.wait()
            killed = True
            boot.cut_after = now - boot.stream_started
            if boot.hopper_loses_power:
                coins.send("hopper-power-cut")
            if boot.reader_reset:
                changer.send("card 1 reset")
        if not killed and now - started > BOOT_TIMEOUT:
            qemu.kill()
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
            coins.send(line[len("HIL-HOST: "):])
        elif line.startswith("HIL-MDB: "):
            changer.send(line[len("HIL-MDB: "):])
        elif line.startswith("OBS relay-on ") and len(line.split()) >= 3:
            (boot.stream_pulses if boot.streaming else boot.startup_pulses).append(line.split()[2])
        elif line.startswith("MODEL VIOLATION"):
            boot.violations.append((boot.streaming, line))
        elif model_move.match(line):
            move, motor = model_move.match(line).group(1), tuple(map(int, model_move.match(line).group(2, 3)))
            if move == "powered":
                (boot.stream_pulses if boot.streaming else boot.startup_pulses).append(f"motor {motor[0]},{motor[1]}")
                turn = last_turn = {"motor": motor, "cam": "away" if motor in cams else "home, not yet left"}
            elif move == "left home":
                cams.add(motor)
                if last_turn and last_turn["motor"] == motor:
                    last_turn["cam"] = "away"
            elif move == "home":
                cams.discard(motor)
                if last_turn and last_turn["motor"] == motor:
                    last_turn["cam"] = "home again"
        elif line.startswith("PC cam-home "):
            cams.discard(tuple(map(int, line.split()[2:4])))
            boot.cams_homed += 1
        elif line.startswith("PC locked "):
            match = re.match(r"^PC locked (\S+) \(([a-z-]+)\)", line)
            if match:
                boot.locked[match.group(1)] = match.group(2)
        elif line.startswith("EVT "):
            try:
                event = json.loads(line[4:])
            except json.JSONDecodeError:
                continue  # a line cut short by the power cut
            kind, text = event.get("kind"), event.get("text", "")
            requested = kind == "card-vend" and text.endswith("waiting for the approval")
            spiral = kind == "vend-started" and re.search(r"slot B\d", text) is not None
            if aimed_at is not None and (kind == f"{boot.aim}-started" or (boot.aim == "card" and requested)
                                         or (boot.aim == "motor" and spiral)):
                paying = re.search(r"paying ([\d,]+)", text) if kind == "payout-started" else None
                length = payout_length(int(paying.group(1).replace(",", ""))) if paying else VEND_AIM
                length = CARD_AIM if requested else MOTOR_AIM if boot.aim == "motor" else length
                deadline = min(deadline, time.monotonic() + aimed_at * length)
                aimed_at = None
                boot.aim_met = True
            vend_no = vend_number.match(text)
            vend_no = int(vend_no.group(1)) if vend_no else None
            if kind == "card-vend" and vend_no is not None:
                (boot.card_requested if requested else boot.card_approved).append(vend_no)
            elif kind == "card-denied" and vend_no is not None:
                boot.card_denied.append(vend_no)
            elif kind == "card-settled" and vend_no is not None:
                boot.card_settled[vend_no] = ("success" if "told VEND SUCCESS" in text
                                             else "failure" if "told VEND FAILURE" in text or "never approved" in text
                                             else "unknown" if "may have charged" in text else "refund-lost")
            elif kind == "vend-completed" and vend_no is not None and "(drop-sensor, cashless" in text:
                boot.card_sold_by_drop.append(vend_no)
            elif kind == "vend-failed" and vend_no is not None and "(not-dropped)" in text:
                if vend_no in boot.card_requested:
                    boot.card_not_dropped.append(vend_no)
            boot.coins_shown += kind == "coin"
            if kind in ("vend-completed", "vend-failed"):
                turn = None
            match = vend.match(text) if kind == "vend-started" else None
            if match:
                boot.vends_started.append(int(match.group(1)))
            match = payout.match(text) if kind in ("payout-started", "payout-ended") else None
            if match:
                (boot.payouts_started if kind == "payout-started" else boot.payouts_ended).append(int(match.group(1)))
        elif line.startswith("PC resolved "):
            match = resolved.search(line)
            boot.resolved.append(int(match.group(1)) if match else line)
            slot = re.search(r"at slot (\S+) was in flight", line)
            if slot:
                boot.resolved_slots.add(slot.group(1))
        elif line.startswith("PC payout-resolved "):
            fields = dict(re.findall(r" ([A-Z]+)=(\S+)", line))
            if not {"PAYOUT", "AMOUNT", "PAID", "UNKNOWN", "UNPAID"} <= fields.keys():
                boot.errors.append(f"a payout resolution without its fields: {line}")
                continue
            boot.payouts_resolved.append({key: (int(value) if key == "PAYOUT" else amount(value))
                                          for key, value in fields.items()})
        elif line.startswith("PC card-settled "):
            fields = dict(re.findall(r" ([A-Z]+)=(\S+)", line))
            if not {"VEND", "RESULT", "AMOUNT"} <= fields.keys():
                boot.errors.append(f"a card settlement without its fields: {line}")
                continue
            # APPROVED: what vendd had seen approved (0: no approval journaled); older vendds
            # logged only AMOUNT, which was that.
            boot.startup_settled.append((int(fields["VEND"]), fields["RESULT"], amount(fields["AMOUNT"]),
                                         amount(fields.get("APPROVED", fields["AMOUNT"]))))
        elif line.startswith("PC store "):
            boot.store_notes.append(line[len("PC store "):])
        elif line.startswith("PC books "):
            try:
                boot.books = json.loads(line[len("PC books "):])["status"]
            except (json.JSONDecodeError, KeyError):
                boot.errors.append(f"unreadable books: {line}")
                continue
            # The simulators' own records, before anything the guest asks for next is handled:
            # the next coin is a console line behind this one, and the payout in flight at the
            # cut is settled (vendd reset the changer, stopped the hopper and judged it).
            boot.accepted_at_books, boot.hopper_left = coins.settled()
            boot.changer_paid, boot.tubes, boot.reader_charged, boot.reader_refunded = changer.paid()
            boot.tube_refill = changer.refill(boot.tubes)
        elif line == "PC stream-start":
            boot.streaming = True
            boot.stream_started = time.monotonic()
            if boot.aim == "any":
                deadline = boot.stream_started + anywhere
            else:
                timeout = CARD_AIM_TIMEOUT if boot.aim == "card" else AIM_TIMEOUT
                deadline, aimed_at = boot.stream_started + timeout, within
        elif line == "PC done":
            boot.done = True
        elif line.startswith("PC error"):
            boot.errors.append(line)
    boot.qemu_status = qemu.wait()
    # Every line qemu wrote before it died was read: the cams as they were when the power went.
    boot.away_at_cut, boot.turn_at_cut = set(cams), turn
    # A cut aimed at a turn: where the cam of the turn aimed at was (home again: cut after its return).
    boot.aimed_turn = last_turn if boot.aim == "motor" else None
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
    # Every vend whose relay moved (or may have) ends as one of these: sold, failed, or resolved
    # as unknown by refund-credit (the guest's configuration), which is in neither of the others.
    # A card vend denied, or never approved, moved no relay and is in none (its number is in the
    # status's vendsStarted).
    return books["itemsSold"] + books["failedVends"] + books["unknownOutcomes"]


def booked_payouts(boot):
    """What the books say the devices paid (change and refunds: with `payout: change` every
    payout is the devices'), and what they hold unknown."""
    books = boot.books["books"]
    return amount(books["changePaid"]) + amount(books["refunds"]), amount(books["unknownPayouts"])


def check_payouts(before, after, seen_payouts, problems):
    """Payout truth against the devices' own totals over the cut boot's stream and the restart
    (no payout was in flight when `before`'s books were read): every payout booked paid was paid
    by a device, and whatever a device paid is booked paid or unknown (never back in credit,
    never paid twice)."""
    booked_before, unknown_before = booked_payouts(before)
    booked_after, unknown_after = booked_payouts(after)
    booked, unknown = booked_after - booked_before, unknown_after - unknown_before
    paid = after.devices_paid() - before.devices_paid()
    hopper = before.hopper_left - after.hopper_left
    devices = f"the changer {after.changer_paid - before.changer_paid}, the hopper {hopper} × {HOPPER_COIN}"
    if paid < booked:
        problems.append(f"since the last start the books hold {booked} more paid (change and refunds), the devices "
                        f"paid only {paid} ({devices}): {booked - paid} booked paid that no device paid")
    elif paid > booked + unknown:
        problems.append(f"since the last start the devices paid {paid} ({devices}), the books hold {booked} more paid "
                        f"and {unknown} more unknown: {paid - booked - unknown} left the machine unaccounted for "
                        f"(back in credit, or paid twice)")
    status = after.books
    if "payoutInProgress" in status:
        problems.append(f"a payout is still in flight after start-up: {status['payoutInProgress']}")
    for resolution in after.payouts_resolved:
        number = resolution["PAYOUT"]
        if number in before.payouts_ended:
            problems.append(f"payout#{number} was resolved at start as in flight, but it had ended (watch)")
        if before.payouts_started and number < before.payouts_started[-1]:
            problems.append(f"payout#{number} was resolved at start as in flight, but payout#"
                            f"{before.payouts_started[-1]} had started after it")
        if resolution["PAID"] + resolution["UNKNOWN"] + resolution["UNPAID"] != resolution["AMOUNT"]:
            problems.append(f"payout#{number}'s resolution does not add up: paid {resolution['PAID']} + unknown "
                            f"{resolution['UNKNOWN']} + back to credit {resolution['UNPAID']} != {resolution['AMOUNT']}")
    if len(after.payouts_resolved) > 1:
        problems.append(f"{len(after.payouts_resolved)} payouts resolved at one start: payouts run one at a time")
    for number in before.payouts_started:
        if number in seen_payouts:
            problems.append(f"payout#{number} was started in two boots")
        seen_payouts.add(number)
    return paid, booked, unknown


def check_cards(before, after, seen_settled, problems, tally):
    """Card vends over the cut boot's stream and the restart: the machine's card money against
    the reader's own books, and each card vend's settlement against what the drop sensor said.
    Returns the summary's words for the cut."""
    books = after.books["books"]
    booked, net, possibly = card_money(books), after.reader_net(), possibly_charged(books)
    # Where vendd cannot know (a reset in the approval window), it books the price as possibly
    # charged: the reader's net charge lies between the books and the books plus those.
    if not booked <= net <= booked + possibly:
        problems.append(f"card money: the books hold card sales {books.get('cardSales', {})} + refunds lost "
                        f"{books.get('cardRefundsLost', '0')} = {booked} (+ possibly charged {possibly}), the reader charged "
                        f"{sum(after.reader_charged, Decimal(0))} and refunded {sum(after.reader_refunded, Decimal(0))} "
                        f"= {net} (its books: charged {after.reader_charged}, refunded {after.reader_refunded})")
    # The stream's settlements (the watch), then those vendd made at start (its log).
    settlements = list(before.card_settled.items()) + [(vend, result) for vend, result, _, _ in after.startup_settled]
    for vend, result in settlements:
        if vend in seen_settled:
            problems.append(f"card vend#{vend} settled twice: {seen_settled[vend]}, then {result}")
        seen_settled[vend] = result
    for vend in before.card_sold_by_drop:
        if seen_settled.get(vend, "success") != "success":
            problems.append(f"card vend#{vend} dropped (drop sensor) but settled as {seen_settled[vend]}: "
                            f"the card refunded or booked for a refund for an item that came out")
    for vend in before.card_not_dropped:
        if seen_settled.get(vend) == "success":
            problems.append(f"card vend#{vend} did not drop (drop sensor) but the reader was told VEND SUCCESS")
    for vend, result in before.card_settled.items():
        if result == "refund-lost":
            problems.append(f"card vend#{vend}: a refund booked lost while vendd ran (no reader reset or refund "
                            f"failure was asked for)")
    for vend, result, charged, _ in after.startup_settled:
        if result in ("refund-lost", "unknown") and not before.reader_reset:
            problems.append(f"card vend#{vend} settled at start as {result} ({charged}), but the reader was not "
                            f"reset at the cut: it could have been told VEND FAILURE (or asked what it held)")
    at_cut, approved = before.card_vend_at_cut()
    tally["card requested"] += len(before.card_requested)
    tally["card approved"] += len(before.card_approved)
    tally["card denied"] += len(before.card_denied)
    tally["card sold by drop"] += len(before.card_sold_by_drop)
    tally["cuts mid card vend"] += at_cut is not None
    tally["cuts card awaiting approval"] += at_cut is not None and not approved
    tally["cuts card approved"] += at_cut is not None and approved
    tally["reader resets"] += before.reader_reset
    words = []
    if at_cut is not None:
        words.append(f"cut during card vend#{at_cut} ({'approved, not settled' if approved else 'awaiting its approval'})")
    for vend, result, charged, _ in after.startup_settled:
        kind = "nothing charged" if charged == 0 else result
        tally[f"card settled at start {kind}"] += 1
        words.append(f"card vend#{vend} settled at start: {kind}" + ("" if charged == 0 else f" ({charged})"))
    if before.reader_reset:
        words.append("the reader reset with the cut")
    if possibly:
        words.append(f"possibly charged {possibly}")
    words.append(f"card money {booked} ≤ reader {net} ≤ {booked + possibly}" if booked <= net <= booked + possibly
                 else f"CARD MONEY {booked} (+ possibly {possibly}) != READER {net}")
    return "; ".join(words)


def reconcile(before, after, fsck_status, fsck_output, seen_vends, seen_payouts, seen_settled, tally):
    """The checks for one cut: `before` is the boot that was cut, `after` the one that restored.
    Returns (problems, double_vends, summary); adds what the cut exercised to `tally`."""
    problems, doubles = [], 0
    status = after.books
    books = status["books"]
    coins_in = amount(books["coinsIn"])
    money_in = coins_in + amount(books["billsIn"])
    balance = (amount(books["sales"]) + amount(books["changePaid"]) + amount(books["refunds"])
               + amount(books["unknownPayouts"]) + amount(status["credit"]))
    if money_in != balance:
        problems.append(f"books do not balance: coinsIn {coins_in} + billsIn {books['billsIn']} != sales "
                        f"{books['sales']} + changePaid {books['changePaid']} + refunds {books['refunds']} + "
                        f"unknownPayouts {books['unknownPayouts']} + credit {status['credit']}")
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
    # Every vend number the machine gave, cash or card (denied card vends, and card vends never
    # approved, count in no sales figure); a daemon older than vendsStarted (--source) had none.
    first = before.books.get("vendsStarted", vends_in(before.books["books"]))
    last = status.get("vendsStarted", vends_in(books))
    for number in before.vends_started + before.card_requested:
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
    # A card vend in flight before its approval was journaled vended nothing: it is settled at
    # start with nothing charged (VEND FAILURE or CANCEL to the reader), and is no unknown outcome.
    unapproved = {vend for vend, _, _, approved in after.startup_settled if approved == 0}
    outcomes = [number for number in after.resolved if number not in unapproved]
    if len(outcomes) != unknown:
        problems.append(f"vendd logged {len(outcomes)} interrupted vend(s) resolved that had vended (or may have), "
                        f"the books count {unknown} new unknown outcome(s)")
    for number in after.resolved:
        if number != last:
            problems.append(f"vendd resolved {number!r} as in flight, but the last vend is vend#{last}")
    devices_paid, booked_paid, booked_unknown = check_payouts(before, after, seen_payouts, problems)
    motors = check_motors(before, after, problems, tally)
    cards = check_cards(before, after, seen_settled, problems, tally)
    if fsck_status > 1:
        problems.append(f"e2fsck could not repair the file system (exit {fsck_status})")

    new_coins = len(accepted) - len(before.accepted_at_books)
    # Coins the cut boot never showed credited: still in the acceptor's buffer at the cut (or
    # journaled but their watch line lost with the power); either way credited only now.
    late = max(0, new_coins - before.coins_shown)
    mid_payout = before.cut_mid_payout() or bool(after.payouts_resolved)
    tally["resolved"] += len(after.resolved)
    tally["intent-before-relay"] += intents == pulses + 1
    tally["late coins"] += late
    tally["journal replays"] += "recovering journal" in fsck_output
    torn = sum("incomplete last record" in note for note in after.store_notes)
    tally["torn records"] += torn
    tally["payouts"] += len(before.payouts_started)
    tally["cuts mid-payout"] += mid_payout
    tally["hopper power losses"] += before.hopper_loses_power
    tally[f"aimed {before.aim}"] += 1
    tally[f"aimed {before.aim} met"] += before.aim_met
    tally["tube refills"] += after.tube_refill > 0
    for resolution in after.payouts_resolved:
        tally["payouts resolved"] += 1
        for key in ("PAID", "UNKNOWN", "UNPAID"):
            tally[f"resolved {key}"] += resolution[key]
    resolved = "interrupted vend resolved (refund-credit)" if after.resolved else "no vend in flight"
    balanced = "books balanced" if money_in == balance else "BOOKS UNBALANCED"
    aim = "at any instant" if before.aim == "any" else f"aimed at a {before.aim}"
    summary = (f"cut after {before.cut_after:.2f} s ({aim}); coins accepted {new_coins} "
               f"({len(accepted)} in all, worth {expected}), coinsIn {coins_in}; "
               f"relay pulses {pulses}, intents {intents}; {resolved}; payouts started {len(before.payouts_started)}")
    for resolution in after.payouts_resolved:
        summary += (f"; payout#{resolution['PAYOUT']} of {resolution['AMOUNT']} in flight, resolved: paid "
                    f"{resolution['PAID']}, unknown {resolution['UNKNOWN']}, {resolution['UNPAID']} back to credit")
    if before.cut_mid_payout() and not after.payouts_resolved:
        summary += f"; cut as payout#{before.payouts_started[-1]} ended (its end durable, not yet shown)"
    if before.hopper_loses_power:
        summary += "; the hopper lost power too"
    summary += f"; devices paid {devices_paid}, booked {booked_paid} + unknown {booked_unknown}; {balanced}"
    if late:
        summary += f"; {late} coin(s) not shown credited before the cut"
    if intents == pulses + 1:
        summary += "; cut between a durable intent and its relay"
    if "recovering journal" in fsck_output:
        summary += "; e2fsck replayed the ext4 journal"
    if torn:
        summary += "; a torn journal record dropped"
    summary += f"; card vends requested {len(before.card_requested)}; {cards}; {motors}"
    return problems, doubles, summary


def check_motors(before, after, problems, tally):
    """The spiral motors over a cut: a motor whose cam was away from home when the power went is
    locked away-from-home at the next start and never powered (the model reports a motor turned
    while away); a motor at home is not locked, save that on a home line shared by several motors
    vendd cannot tell which is away unless the journal's vend in flight names one (that one is
    locked even if its cam had not left), and locks them all. No misuse of the matrix in the stream or at start. Returns the summary's words."""
    violations = ([line for streaming, line in before.violations if streaming]
                  + [line for streaming, line in after.violations if not streaming])
    for line in violations:
        problems.append(f"the motor model saw the matrix misused: {line}")
    away = {MOTOR_SLOTS[motor] for motor in before.away_at_cut}
    locked = {slot for slot, fault in after.locked.items() if fault == "away-from-home"}
    # On a shared home line the journal's vend in flight is locked whatever the line reads: the
    # line shows no unpowered cam, so vendd takes that motor as away rather than turn it blindly.
    allowed = set(away) | (after.resolved_slots & SHARED_HOME)
    if away & SHARED_HOME and not after.resolved_slots & SHARED_HOME:
        allowed |= SHARED_HOME
    if away - locked:
        problems.append(f"cam(s) of {', '.join(sorted(away - locked))} away from home at the cut, but vendd did not "
                        f"lock them away-from-home at start (out of service: {after.locked or 'none'})")
    if locked - allowed:
        problems.append(f"{', '.join(sorted(locked - allowed))} locked away-from-home at start, but the cam was at home "
                        f"(away at the cut: {', '.join(sorted(away)) or 'none'})")
    tally["motors locked away"] += len(locked)
    tally["cams homed"] += after.cams_homed
    words = f"cams away at the cut: {', '.join(sorted(away)) or 'none'}"
    if locked:
        words += f", locked away-from-home at start: {', '.join(sorted(locked))}"
    if before.aimed_turn:
        tally[f"aimed turns, cam {before.aimed_turn['cam']}"] += 1
    turn = before.turn_at_cut
    if turn:
        tally["cuts mid-turn"] += 1
        tally[f"cuts mid-turn, cam {turn['cam']}"] += 1
        words = f"cut mid-turn on {MOTOR_SLOTS[turn['motor']]} (cam {turn['cam']}); " + words
    return words


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
    parser.add_argument("--mdb-simulator", required=True, help="the mdb-sim binary")
    parser.add_argument("--state", required=True, help="the prepared state directory for the image")
    parser.add_argument("--work", required=True, help="a scratch directory")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("VENDD_POWERCUT_SEED", "0")) or None)
    parser.add_argument("--min-cut", type=float, default=0.05, help="earliest cut after the stream starts (s)")
    parser.add_argument("--max-cut", type=float, default=4.0, help="latest cut after the stream starts (s)")
    parser.add_argument("--verbose", action="store_true", help="echo the guest's console on stderr")
    args = parser.parse_args()
    args.seed = args.seed or random.SystemRandom().randrange(1, 2**31)
    args.image = os.path.join(args.work, "state.ext4")
    args.coin_socket = os.path.join(args.work, "coin.sock")
    args.mdb_socket = os.path.join(args.work, "mdb.sock")
    rng = random.Random(args.seed)
    console_path = os.path.join(args.work, "powercut-console.log")
    keep = os.environ.get("VENDD_POWERCUT_KEEP")  # a directory: the console and simulator logs go there
    say(f"powercut: {args.cuts} cuts, seed {args.seed} (VENDD_POWERCUT_SEED={args.seed} repeats its draws)")

    try:
        return run(args, rng, console_path)
    finally:
        if keep:
            os.makedirs(keep, exist_ok=True)
            for name in ("powercut-console.log", "cctalk-sim.log", "mdb-sim.log"):
                if os.path.exists(os.path.join(args.work, name)):
                    subprocess.run(["cp", os.path.join(args.work, name), keep])


def run(args, rng, console_path):
    make_image(args)
    coins = CoinSimulator(args.simulator, args.coin_socket, os.path.join(args.work, "cctalk-sim.log"))
    changer = ChangerSimulator(args.mdb_simulator, args.mdb_socket, os.path.join(args.work, "mdb-sim.log"))
    failures = doubles = 0
    seen_vends, seen_payouts = set(), set()
    seen_settled = {}
    tally = dict.fromkeys(["resolved", "intent-before-relay", "late coins", "journal replays", "torn records",
                           "payouts", "cuts mid-payout", "hopper power losses", "payouts resolved",
                           "tube refills", "card requested", "card approved", "card denied", "card sold by drop",
                           "cuts mid card vend", "cuts card awaiting approval", "cuts card approved", "reader resets"]
                          + [f"card settled at start {kind}" for kind in ("success", "failure", "refund-lost",
                                                                           "unknown", "nothing charged")]
                          + [f"aimed {aim}{met}" for aim in AIMS for met in ("", " met")]
                          + ["motors locked away", "cams homed", "cuts mid-turn"]
                          + [f"{kind}, cam {cam}" for kind in ("cuts mid-turn", "aimed turns")
                             for cam in ("home, not yet left", "away", "home again")], 0)
    tally.update(dict.fromkeys(["resolved PAID", "resolved UNKNOWN", "resolved UNPAID"], Decimal(0)))
    started = time.monotonic()
    with open(console_path, "w", buffering=1) as console:
        cams = set()  # the motors whose cams are away from home, across the cuts
        previous = run_boot(args, 0, args.cuts > 0, coins, changer, console, rng, cams)
        fatal = previous.errors or previous.books is None
        if not fatal:
            books = previous.books["books"]
            if (amount(books["coinsIn"]) != 0 or previous.startup_pulses or previous.devices_paid() != 0
                    or previous.reader_charged):
                previous.errors.append(f"the first boot's state is not the prepared one: {previous.books}; "
                                       f"the changer paid {previous.changer_paid}, the hopper holds {previous.hopper_left}")
                fatal = True
        cut = reconciled = 0
        while not fatal and cut < args.cuts:
            cut += 1
            cut_started = time.monotonic()
            fsck_status, fsck_output = fsck(args.image)
            if fsck_status > 1:
                say(f"powercut: e2fsck after cut {cut}: {fsck_output}")
            boot = run_boot(args, cut, cut < args.cuts, coins, changer, console, rng, cams)
            if boot.books is None:
                failures += 1
                say(f"POWERCUT {cut}: FAIL: the guest did not report its books after the cut: "
                    f"{'; '.join(boot.errors) or 'no reason given'}")
                fatal = True
                break
            problems, double, summary = reconcile(previous, boot, fsck_status, fsck_output, seen_vends,
                                                  seen_payouts, seen_settled, tally)
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
    coins.send("quit")
    changer.send("quit")
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
        f"{tally['late coins']} coins credited only after the cut, {coins.returned} coins returned "
        f"(acceptor inhibited), {tally['torn records']} torn journal records, "
        f"{tally['journal replays']} ext4 journal replays by e2fsck; cuts aimed at any instant "
        f"{tally['aimed any']}, at a payout {tally['aimed payout']}, at a vend {tally['aimed vend']}, "
        f"at a card vend {tally['aimed card']} (its request came in {tally['aimed card met']}), "
        f"at a spiral motor's turn {tally['aimed motor']}")
    say(f"powercut: spiral motors: {tally['cuts mid-turn']} cuts mid-turn (cam home, not yet left "
        f"{tally['cuts mid-turn, cam home, not yet left']}, away {tally['cuts mid-turn, cam away']}, home again "
        f"{tally['cuts mid-turn, cam home again']}); of the cuts aimed at a turn, the cam not yet left "
        f"{tally['aimed turns, cam home, not yet left']}, away {tally['aimed turns, cam away']}, home again (cut after "
        f"its return) {tally['aimed turns, cam home again']}; {tally['motors locked away']} slots locked away-from-home at "
        f"start, {tally['cams homed']} cams turned home by the technician and their slots cleared")
    if previous.books is not None:
        books = previous.books["books"]
        say(f"powercut: payouts: {tally['payouts']} started, {tally['cuts mid-payout']} cuts during one, "
            f"{tally['payouts resolved']} resolved at start from the devices (paid {tally['resolved PAID']}, "
            f"unknown {tally['resolved UNKNOWN']}, {tally['resolved UNPAID']} back to credit), "
            f"{tally['hopper power losses']} cuts with the hopper's power; the devices paid "
            f"{previous.devices_paid()} (changer {previous.changer_paid}, hopper "
            f"{HOPPER_COINS - previous.hopper_left} × {HOPPER_COIN}), the books {amount(books['changePaid'])} "
            f"change + {amount(books['refunds'])} refunds + {amount(books['unknownPayouts'])} unknown; "
            f"tubes {previous.tubes} at the end, refilled {tally['tube refills']} times")
        say(f"powercut: card vends: {tally['card requested']} requested, {tally['card approved']} approved, "
            f"{tally['card denied']} denied, {tally['card sold by drop']} sold on the drop sensor's word; "
            f"{tally['cuts mid card vend']} cuts during one ({tally['cuts card awaiting approval']} awaiting the "
            f"approval, {tally['cuts card approved']} approved and not settled), {tally['reader resets']} with the "
            f"reader reset; settled at start: {tally['card settled at start success']} success, "
            f"{tally['card settled at start failure']} failure (refunded), "
            f"{tally['card settled at start refund-lost']} refund lost, "
            f"{tally['card settled at start unknown']} possibly charged, "
            f"{tally['card settled at start nothing charged']} nothing charged; the reader charged "
            f"{sum(previous.reader_charged, Decimal(0))} ({len(previous.reader_charged)} vends) and refunded "
            f"{sum(previous.reader_refunded, Decimal(0))} ({len(previous.reader_refunded)}), the books "
            f"{books.get('cardSales', {})} card sales + {books.get('cardRefundsLost', '0')} refunds lost "
            f"(+ {possibly_charged(books)} possibly charged)")
    # The harness must exercise what it claims: cuts aimed at card vends that met none are a
    # guest too slow for its customers, not a pass.
    if tally["aimed card"] >= 4 and tally["aimed card met"] < CARD_AIMS_MET * tally["aimed card"]:
        failures += 1
        say(f"powercut: FAIL: of {tally['aimed card']} cuts aimed at a card vend, only {tally['aimed card met']} "
            f"met its request within {CARD_AIM_TIMEOUT:.0f} s: the guest's card customers are too slow "
            f"(a loaded host?); the console (VENDD_POWERCUT_KEEP=DIR) shows where they wait")
    mean = elapsed / max(done, 1)
    say(f"powercut: {done} cuts ({tally['cuts mid-payout']} during a payout, {tally['cuts mid-turn']} mid-turn), "
        f"{failures} reconciliation failures, "
        f"{doubles} double vends, mean {mean:.1f} s per cut (seed {args.seed})")
    return 1 if failures or doubles or done < args.cuts else 0


if __name__ == "__main__":
    sys.exit(main())
