# shellcheck shell=sh
# The HIL scenarios, run by the guest's /init (busybox sh) against the real vendd, the real
# libgpiod and the kernel's gpio-sim. Each prints one line the host collects:
#   HIL <scenario>: PASS <detail>     or     HIL <scenario>: FAIL <why>
# Every scenario starts vendd afresh on a copy of a state prepared on the host (/prepared/NAME).
# The same on both guests (run.sh --arch amd64|arm64); what differs of the machine comes from
# /init: HIL_MDB_UART_IRQ and HIL_DEX_UART_IRQ (amd64: the IRQs qemu gave the MDB and DEX UARTs)
# or HIL_UART_PCI_ID (arm64: the PCI serial card whose ports ttyS1, ttyS2 and ttyS3 must be).

CONFIG=/etc/vendd/hil.yaml
CFS=/sys/kernel/config/gpio-sim/vendd
STATE=/var/lib/vendd
VPID=

# make_chip [HOG_OFFSET]: the gpio-sim chip "vendd-hil", 12 lines; optionally one line held by
# a hog (consumer "hil-hog"), as another program holding it would.
make_chip() {
    if [ -d "$CFS" ]; then
        echo 0 >"$CFS/live"
        for hog in "$CFS"/bank0/line*/hog; do [ -d "$hog" ] && rmdir "$hog"; done
        for line in "$CFS"/bank0/line*; do [ -d "$line" ] && rmdir "$line"; done
        rmdir "$CFS/bank0" "$CFS"
    fi
    mkdir -p "$CFS/bank0"
    echo 12 >"$CFS/bank0/num_lines"
    echo vendd-hil >"$CFS/bank0/label"
    if [ -n "${1:-}" ]; then
        mkdir -p "$CFS/bank0/line$1/hog"
        echo hil-hog >"$CFS/bank0/line$1/hog/name"
        echo output-low >"$CFS/bank0/line$1/hog/direction"
    fi
    echo 1 >"$CFS/live"
    SIM=/sys/devices/platform/$(cat "$CFS/dev_name")/$(cat "$CFS/bank0/chip_name")
}

pull() { echo "$SIM/sim_gpio$1/pull"; }
value() { echo "$SIM/sim_gpio$1/value"; }
level() { cat "$(value "$1")"; }

start_vendd() {  # start_vendd PREPARED [CONFIG]
    rm -rf "$STATE" /run/vendd && mkdir -p /run/vendd /var/lib
    cp -a "/prepared/$1" "$STATE"
    launch_vendd "${2:-$CONFIG}"
}

launch_vendd() {  # launch_vendd CONFIG: vendd on the state in $STATE; returns once it answers
    vendd run --config "$1" >/tmp/vendd.log 2>&1 &
    VPID=$!
    tries=0
    until vendctl status >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [ $tries -gt 300 ] || ! kill -0 "$VPID" 2>/dev/null; then return 1; fi
        sleep 0.1
    done
}

stop_vendd() {  # sets STOP_STATUS
    kill -TERM "$VPID"
    wait "$VPID"
    STOP_STATUS=$?
    VPID=
}

# within TRIES COMMAND...: true once COMMAND succeeds, tried every 0.1 s, at most TRIES times.
within() {
    tries=$1
    shift
    until "$@"; do
        tries=$((tries - 1))
        [ $tries -gt 0 ] || return 1
        sleep 0.1
    done
}

# logged TEXT COUNT: vendd's log has at least COUNT lines holding TEXT.
logged() { [ "$(grep -cF "$1" /tmp/vendd.log)" -ge "$2" ]; }

# books FIELD: a number or amount from `vendctl --json status` (itemsSold, failedVends, credit…).
books() { vendctl --json status | tr ',{}' '\n\n\n' | sed -n "s/^\"$1\":\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" | head -n 1; }

books_are() { [ "$(books "$1")" = "$2" ]; }

# payout_line: what `vendctl status` shows of the payout devices' coins ("N × VALUE" each).
payout_line() { vendctl status | grep '^payout '; }
# tubes_hold "N × VALUE": one of the payout line's entries.
tubes_hold() { payout_line | grep -qE "[:,] $1(,|\$)"; }

pass() { echo "HIL $SCENARIO: PASS $*"; }
fail() {
    echo "HIL $SCENARIO: FAIL $*"
    echo "--- vendd log (last 15 lines) ---"
    tail -n 15 /tmp/vendd.log
    [ -n "$VPID" ] && kill -KILL "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
    VPID=
}

# expect_books SOLD FAILED CREDIT: the machine's books after a scenario.
expect_books() {
    sold=$(books itemsSold) failed=$(books failedVends) credit=$(books credit)
    [ "$sold" = "$1" ] && [ "$failed" = "$2" ] && [ "$credit" = "$3" ] && return 0
    BOOKS="sold $sold (want $1), failed $failed (want $2), credit $credit (want $3)"
    return 1
}

# pulse_of RELAY: waits for the relay to go active, then inactive; sets PULSE_MS.
pulse_of() {
    hiltool wait "$(value "$1")" 1 3000 >/dev/null || return 1
    PULSE_MS=$(hiltool wait "$(value "$1")" 0 3000) || return 2
}

# The libgpiod vendd runs on in this guest is the API it was built for (run.sh --libgpiod, given
# as HIL_LIBGPIOD_API by /init): vendd's start-up log names the library's version and API.
scenario_libgpiod_api() {
    start_vendd nocredit || { fail "vendd did not start"; return; }
    library=$(grep -o 'via libgpiod [^ ]* (API v[0-9]*)' /tmp/vendd.log | head -n 1)
    stop_vendd
    case "$library" in
    *"(API $HIL_LIBGPIOD_API)") pass "vendd's GPIO $library" ;;
    *) fail "vendd's start-up log names '${library:-no libgpiod}', want API $HIL_LIBGPIOD_API" ;;
    esac
}

scenario_press_with_credit() {
    start_vendd credit || { fail "vendd did not start"; return; }
    hiltool press "$(pull 2)"
    pulse_of 3; result=$?
    hiltool release "$(pull 2)"
    [ $result = 1 ] && { fail "relay A2 (line 3) never went active"; return; }
    [ $result = 2 ] && { fail "relay A2 (line 3) stayed active over 3 s"; return; }
    [ "$PULSE_MS" -ge 250 ] && [ "$PULSE_MS" -le 650 ] || { fail "pulse lasted $PULSE_MS ms (configured 300, max 600)"; return; }
    sleep 0.3
    expect_books 1 0 4000 || { fail "$BOOKS"; return; }
    [ "$(level 1)$(level 6)" = 00 ] || { fail "another relay moved"; return; }
    stop_vendd
    pass "relay line 3 active for $PULSE_MS ms (pulse 300 ms), one sale, credit 5000 -> 4000"
}

# Twice: a contact's bounce (10 edges in 5 ms), then 10 edges written back to back, faster than the
# kernel's interrupt thread: libgpiod v1's interface then labels edges with the level that thread
# reads and gpio-sim drops an edge that comes while it runs, so the last edge seen can say
# "released" while the button is held (vendd then judges the line by its level).
scenario_bouncing_press() {
    start_vendd credit || { fail "vendd did not start"; return; }
    seen=
    for span in 5000 0; do
        bounced=$(hiltool bounce "$(pull 2)" 10 $span)
        pulse_of 3; result=$?
        [ $result = 0 ] || hiltool release "$(pull 2)"
        [ $result = 1 ] && { fail "no vend after the bouncing press ($bounced)"; return; }
        [ $result = 2 ] && { fail "relay A2 (line 3) stayed active over 3 s after $bounced"; return; }
        hiltool hold "$(value 3)" 0 1500 || { hiltool release "$(pull 2)"; fail "a second pulse followed $bounced"; return; }
        hiltool release "$(pull 2)"
        sleep 0.2
        seen="$seen${seen:+; }$bounced and held"
    done
    expect_books 2 0 3000 || { fail "$BOOKS"; return; }
    stop_vendd
    pass "$seen: exactly one vend each"
}

scenario_drop_confirms_vend() {
    start_vendd credit || { fail "vendd did not start"; return; }
    hiltool press "$(pull 0)"
    hiltool wait "$(value 1)" 1 3000 >/dev/null || { hiltool release "$(pull 0)"; fail "relay A1 never went active"; return; }
    hiltool release "$(pull 0)"
    sleep 0.1
    hiltool press "$(pull 4)"; sleep 0.05; hiltool release "$(pull 4)"
    hiltool wait "$(value 1)" 0 3000 >/dev/null || { fail "relay A1 stayed active"; return; }
    sleep 0.5
    expect_books 1 0 4000 || { fail "$BOOKS"; return; }
    stop_vendd
    pass "drop sensed on line 4 during the window: sale confirmed"
}

scenario_no_drop_aborts_vend() {
    start_vendd credit || { fail "vendd did not start"; return; }
    hiltool press "$(pull 0)"
    hiltool wait "$(value 1)" 1 3000 >/dev/null || { hiltool release "$(pull 0)"; fail "relay A1 never went active"; return; }
    hiltool release "$(pull 0)"
    hiltool wait "$(value 1)" 0 3000 >/dev/null || { fail "relay A1 stayed active"; return; }
    sleep 1.5   # the 1000 ms drop window, and some
    expect_books 0 1 5000 || { fail "$BOOKS"; return; }
    stop_vendd
    pass "no drop within 1000 ms: vend failed, credit kept (failed_vend: keep-credit)"
}

scenario_two_buttons_at_once() {
    start_vendd credit || { fail "vendd did not start"; return; }
    hiltool press "$(pull 2)"; hiltool press "$(pull 5)"
    sleep 2
    hiltool release "$(pull 2)"; hiltool release "$(pull 5)"
    expect_books 1 0 4000 || { fail "$BOOKS"; return; }
    stop_vendd
    pass "A2 and A3 pressed together: one vend"
}

scenario_press_without_credit() {
    start_vendd nocredit || { fail "vendd did not start"; return; }
    hiltool press "$(pull 2)"
    hiltool hold "$(value 3)" 0 1500; held=$?
    hiltool release "$(pull 2)"
    [ $held = 0 ] || { fail "relay A2 went active without credit"; return; }
    expect_books 0 0 0 || { fail "$BOOKS"; return; }
    stop_vendd
    pass "no credit: relay line 3 stayed inactive for 1.5 s"
}

scenario_sigterm_mid_vend() {
    start_vendd credit || { fail "vendd did not start"; return; }
    hiltool press "$(pull 0)"
    hiltool wait "$(value 1)" 1 3000 >/dev/null || { hiltool release "$(pull 0)"; fail "relay A1 never went active"; return; }
    hiltool release "$(pull 0)"
    stop_vendd
    [ "$STOP_STATUS" = 0 ] || { fail "vendd exited with $STOP_STATUS after SIGTERM"; return; }
    relays="$(level 1)$(level 3)$(level 6)"
    [ "$relays" = 000 ] || { fail "relay lines 1,3,6 read $relays after exit"; return; }
    # Restart on the state it left (not a fresh copy): the vend it let finish must be there.
    vendd run --config "$CONFIG" >/tmp/vendd.log 2>&1 &
    VPID=$!
    tries=0
    until vendctl status >/dev/null 2>&1; do
        tries=$((tries + 1)); [ $tries -gt 300 ] && { fail "vendd did not restart"; return; }; sleep 0.1
    done
    expect_books 0 1 5000 || { fail "after restart: $BOOKS"; return; }
    stop_vendd
    pass "SIGTERM during a vend: vend finished (no drop, credit kept), exit 0, relays 1,3,6 inactive, books intact after restart"
}

scenario_busy_line() {
    make_chip 3
    rm -rf "$STATE" && cp -a /prepared/credit "$STATE"
    vendd run --config "$CONFIG" >/tmp/vendd.log 2>&1
    status=$?
    make_chip
    [ $status = 69 ] || { fail "exit status $status, expected 69 (hardware unavailable)"; return; }
    message=$(grep -F "slots[A2].relay.line" /tmp/vendd.log | grep -F "busy, held by 'hil-hog'" | head -n 1)
    [ -n "$message" ] || { fail "the error does not name slots[A2].relay.line and the hog"; return; }
    # The chilled zone's compressor relay (line 8 in hil-health.yaml) held by another program.
    make_chip 8
    rm -rf "$STATE" && cp -a /prepared/credit "$STATE"
    vendd run --config /etc/vendd/hil-health.yaml >/tmp/vendd.log 2>&1
    status=$?
    make_chip
    [ $status = 69 ] || { fail "with the compressor's line held: exit status $status, expected 69"; return; }
    zone_message=$(grep -F "zones[chilled].relay.line" /tmp/vendd.log | grep -F "busy, held by 'hil-hog'" | head -n 1)
    [ -n "$zone_message" ] || { fail "the error does not name zones[chilled].relay.line and the hog"; return; }
    pass "exit 69: $(echo "$message" | sed 's/^.*\(slots\[A2\]\)/\1/'); exit 69: $(echo "$zone_message" | sed 's/^.*\(zones\[chilled\]\)/\1/')"
}

# A config naming a chip no driver made, then a line the chip does not have: vendd refuses to
# start (69), names the key and lists what exists, through whichever libgpiod it was built on.
scenario_chip_errors() {
    rm -rf "$STATE" && cp -a /prepared/credit "$STATE"
    sed 's/^  chip: vendd-hil$/  chip: vendd-nochip/' "$CONFIG" >/tmp/nochip.yaml
    vendd run --config /tmp/nochip.yaml >/tmp/vendd.log 2>&1
    status=$?
    [ $status = 69 ] || { fail "with a chip that does not exist: exit status $status, expected 69"; return; }
    chip_message=$(grep -F "gpio.chip (/tmp/nochip.yaml:" /tmp/vendd.log | grep -F "GPIO chip 'vendd-nochip' not found; chips present: " |
        grep -F "[vendd-hil]" | head -n 1)
    [ -n "$chip_message" ] || { fail "the error does not name gpio.chip's line, say the chip is missing and list vendd-hil"; return; }
    rm -rf "$STATE" && cp -a /prepared/credit "$STATE"
    sed 's/^    relay: { line: 3,/    relay: { line: 40,/' "$CONFIG" >/tmp/noline.yaml
    grep -q 'line: 40,' /tmp/noline.yaml || { fail "hil.yaml no longer has A2's relay on line 3 as this scenario expects"; return; }
    vendd run --config /tmp/noline.yaml >/tmp/vendd.log 2>&1
    status=$?
    [ $status = 69 ] || { fail "with a line the chip lacks: exit status $status, expected 69"; return; }
    line_message=$(grep -F "slots[A2].relay.line (/tmp/noline.yaml:" /tmp/vendd.log | grep -F "line 40 does not exist on " |
        grep -F "it has lines 0 to 11" | head -n 1)
    [ -n "$line_message" ] || { fail "the error does not name slots[A2].relay.line, say line 40 is missing and which lines exist"; return; }
    pass "exit 69: $(echo "$chip_message" | sed 's/^.*\(gpio\.chip\)/\1/'); exit 69: $(echo "$line_message" | sed 's/^.*\(slots\[A2\]\)/\1/')"
}

# The coin acceptor: vendd polls cctalk-sim, which runs on the host behind qemu's second serial
# port, over /dev/ttyS1 (a 16550A UART opened through libserialport). "HIL-HOST: <command>"
# lines are passed to the simulator's stdin by the host.
scenario_coin_over_ttyS1() {
    start_vendd nocredit /etc/vendd/hil-coin.yaml || { fail "vendd did not start"; return; }
    tries=0
    until grep -q "coins accepted" /tmp/vendd.log; do
        tries=$((tries + 1)); [ $tries -gt 300 ] && { fail "the acceptor on /dev/ttyS1 was never enabled"; return; }
        sleep 0.1
    done
    echo "HIL-HOST: coin 4"
    tries=0
    until [ "$(books credit)" = 500 ]; do
        tries=$((tries + 1)); [ $tries -gt 300 ] && { fail "credit $(books credit) 30 s after the coin, want 500"; return; }
        sleep 0.1
    done
    sleep 1   # several more polls: the same event must not be credited again
    [ "$(books credit)" = 500 ] || { fail "credit $(books credit) after more polls, want 500"; return; }
    stop_vendd
    pass "a 500원 coin inserted into cctalk-sim on the host, polled over /dev/ttyS1: credited once"
}

# The MDB interface: vendd is the bus master through a Qibixx interface over /dev/ttyS2, as on a
# board with an MDB Pi HAT on /dev/ttyAMA0 (libserialport, 115200 8N1). qemu's third UART is
# connected to mdb-sim on the host (changer with 10 coins in each tube, bill validator); ttyS1
# stays the ccTalk acceptor's, so every device has a UART of its own as on a board. "HIL-MDB:
# <command>" lines go to mdb-sim's stdin; its `wait-enabled` holds the next command until vendd
# has enabled both devices, as a customer waits for the acceptors to light up. run.sh checks
# mdb-sim's own count (the `status` asked for at the end) against the books in the PASS line.
scenario_mdb_over_ttyS2() {
    # amd64: qemu wires this UART to IRQ 5 (see run.sh); the kernel's legacy table says 4. A PCI
    # UART (arm64) has its interrupt from the bus.
    if [ -n "${HIL_MDB_UART_IRQ:-}" ]; then
        hiltool uart-irq /dev/ttyS2 "$HIL_MDB_UART_IRQ" || { fail "cannot set the IRQ of /dev/ttyS2"; return; }
    fi
    start_vendd nocredit /etc/vendd/hil-mdb.yaml || { fail "vendd did not start"; return; }
    within 300 logged "MDB interface ready on /dev/ttyS2" 1 || { fail "the MDB interface on /dev/ttyS2 never answered"; return; }
    echo "HIL-MDB: wait-enabled"
    echo "HIL-MDB: coin 3"
    echo "HIL-MDB: bill 0"
    within 300 books_are credit 1500 || { fail "credit $(books credit) after a 500 coin and a 1000 bill, want 1500"; return; }
    # The interface unplugged: vendd hears silence, reopens the UART until it answers, resets the bus.
    lost=$(grep -cF "MDB interface on /dev/ttyS2" /tmp/vendd.log)
    echo "HIL-MDB: unplug"
    within 300 logged "MDB interface on /dev/ttyS2" $((lost + 1)) || { fail "the unplugged interface was not noticed"; return; }
    echo "HIL-MDB: replug"
    within 300 logged "MDB interface ready on /dev/ttyS2" 2 || { fail "the replugged interface was not taken back"; return; }
    # Read again at the changer's initialisation: the 500 coin went into its tube.
    within 100 tubes_hold "11 × 500원" || { fail "tubes after the replug: $(payout_line), want 11 × 500원"; return; }
    echo "HIL-MDB: wait-enabled"
    echo "HIL-MDB: coin 2"
    within 300 books_are credit 1600 || { fail "credit $(books credit) after a 100 coin, want 1600"; return; }
    hiltool press "$(pull 2)"
    pulse_of 3; result=$?
    hiltool release "$(pull 2)"
    [ $result = 0 ] || { fail "relay A2 (line 3) did not pulse"; return; }
    within 300 books_are changePaid 600 || { fail "change paid $(books changePaid) after a sale at 1000, want 600"; return; }
    expect_books 1 0 0 || { fail "$BOOKS"; return; }
    coins=$(books coinsIn) bills=$(books billsIn) change=$(books changePaid)
    money="$coins/$bills/$(books sales)/$(books refunds)"
    [ "$money" = 600/1000/1000/0 ] || { fail "coins in/bills in/sales/refunds $money, want 600/1000/1000/0"; return; }
    # The changer's TUBE STATUS after the payout: the change left its tubes.
    tubes_hold "10 × 500원" && tubes_hold "10 × 100원" || { fail "tubes after the change: $(payout_line), want 10 × 500원 and 10 × 100원"; return; }
    stop_vendd
    [ "$STOP_STATUS" = 0 ] || { fail "vendd exited with $STOP_STATUS after SIGTERM"; return; }
    echo "HIL-MDB: status"
    pass "a 500 coin and a 1000 bill, unplug and replug, a 100 coin, a sale at 1000, change 600 from the tubes; books: coins in $coins, bills in $bills, change $change"
}

# check_uarts: on arm64, /dev/ttyS1, ttyS2 and ttyS3 must be ports of the PCI card run.sh gave
# qemu (vendor:device $HIL_UART_PCI_ID), else the ccTalk, MDB and DEX scenarios would talk to the
# wrong UART (or none). Prints a FAIL line naming the device when not.
check_uarts() {
    [ -n "${HIL_UART_PCI_ID:-}" ] || return 0
    SCENARIO=uarts
    for tty in ttyS1 ttyS2 ttyS3; do
        device=$(readlink -f "/sys/class/tty/$tty/device")
        found="$(cat "$device/vendor" 2>/dev/null):$(cat "$device/device" 2>/dev/null)"
        [ "$found" = "0x${HIL_UART_PCI_ID%:*}:0x${HIL_UART_PCI_ID#*:}" ] && continue
        echo "HIL $SCENARIO: FAIL /dev/$tty is ${device:-no device} (PCI id $found), not a port of the PCI serial card $HIL_UART_PCI_ID: see the pci-serial-4x device in scripts/hil/run.sh"
        return 1
    done
}

# A card reader: mdb-sim's cashless #1 (10h) behind the same Qibixx interface on /dev/ttyS2, as a
# Nayax or ePort reader on a board's MDB HAT; the machine has no cash device (hil-card.yaml), so
# every vend is paid by card. Three customers: selection first with the item seen falling (VEND
# SUCCESS), selection first with no drop (VEND FAILURE: the reader refunds), then a card first
# (BEGIN SESSION) whose first choice the bank denies and whose second is sold, the drop sensor
# confirming it (SESSION COMPLETE, END SESSION). run.sh checks the reader's own books (charged −
# refunded, from the `status` asked for at the end) against the card money in the PASS line.

# reader_ready: vendd has initialised the reader (SETUP, EXPANSION, READER ENABLE as the machine
# wants) and shows it ready.
reader_ready() { vendctl --json status | grep -q '"ready":true'; }
card_session_open() { vendctl --json status | grep -q '"cardSession"'; }
card_session_closed() { ! card_session_open; }

# card_vend BUTTON RELAY drop|nodrop: a customer paying by card presses a slot's button; the
# relay waits for the reader's approval (a VEND REQUEST and a POLL or two over the bus), then
# pulses; with `drop`, the drop sensor (line 4) sees the item fall during the pulse. Sets WHY.
card_vend() {
    hiltool press "$(pull "$1")"
    if ! hiltool wait "$(value "$2")" 1 10000 >/dev/null; then
        hiltool release "$(pull "$1")"
        WHY="relay line $2 never went active (no approval?)"
        return 1
    fi
    hiltool release "$(pull "$1")"
    if [ "$3" = drop ]; then
        sleep 0.1
        hiltool press "$(pull 4)"; sleep 0.05; hiltool release "$(pull 4)"
    fi
    hiltool wait "$(value "$2")" 0 3000 >/dev/null || { WHY="relay line $2 stayed active"; return 1; }
}

scenario_card_over_ttyS2() {
    # amd64: qemu wires this UART to IRQ 5 (see run.sh); a PCI UART (arm64) has its own.
    if [ -n "${HIL_MDB_UART_IRQ:-}" ]; then
        hiltool uart-irq /dev/ttyS2 "$HIL_MDB_UART_IRQ" || { fail "cannot set the IRQ of /dev/ttyS2"; return; }
    fi
    start_vendd nocredit /etc/vendd/hil-card.yaml || { fail "vendd did not start"; return; }
    within 300 logged "MDB interface ready on /dev/ttyS2" 1 || { fail "the MDB interface on /dev/ttyS2 never answered"; return; }
    within 300 reader_ready || { fail "the card reader at 10h was never ready: $(vendctl status | grep '^card')"; return; }
    # 1. Selection first: the press sends VEND REQUEST; approved, vended, seen falling: SUCCESS.
    card_vend 0 1 drop || { fail "selection first, A1: $WHY"; return; }
    within 100 logged "settled as sold: VEND SUCCESS sent" 1 || { fail "vend 1 never settled as sold with the reader"; return; }
    logged "(drop-sensor, cashless1)" 1 || { fail "the first card sale was not confirmed by the drop sensor"; return; }
    # 2. Selection first, nothing falls within the drop window: VEND FAILURE, the reader refunds.
    card_vend 0 1 nodrop || { fail "selection first, A1, no drop: $WHY"; return; }
    within 100 logged "settled as not sold: refunded" 1 || { fail "the vend that did not drop was never refunded by the reader"; return; }
    logged "failed (not-dropped)" 1 || { fail "the vend that did not drop was not booked as failed"; return; }
    # 3. Card first: the card is tapped on the reader (BEGIN SESSION with 3,000원 of funds); the
    # bank denies the first choice (A2: nothing moves), the second (A1) is sold and the session
    # ends. mdb-sim takes the tap once vendd has enabled the reader, the denial before the tap.
    echo "HIL-MDB: card 1 wait-enabled"
    echo "HIL-MDB: card 1 deny"
    echo "HIL-MDB: card 1 tap 300"
    within 300 card_session_open || { fail "no card session 30 s after the tap"; return; }
    hiltool press "$(pull 2)"
    within 100 logged "denied by cashless #1: nothing charged" 1; denied=$?
    hiltool release "$(pull 2)"
    [ $denied = 0 ] || { fail "the denied choice was never reported denied"; return; }
    [ "$(level 3)" = 0 ] && [ "$(books itemsSold)" = 1 ] || { fail "relay A2 moved, or a sale was booked, for a denied vend"; return; }
    card_session_open || { fail "the session ended with the denial (funds left, one vend per session)"; return; }
    card_vend 0 1 drop || { fail "card first, A1: $WHY"; return; }
    within 100 logged "settled as sold: VEND SUCCESS sent" 2 || { fail "the card-first vend never settled as sold"; return; }
    logged "(drop-sensor, cashless1)" 2 || { fail "the card-first sale was not confirmed by the drop sensor"; return; }
    within 100 card_session_closed || { fail "the session was never ended (SESSION COMPLETE, END SESSION)"; return; }
    expect_books 2 1 0 || { fail "$BOOKS"; return; }
    card=$(books cashless1) lost=$(books cardRefundsLost) cash=$(books sales)
    [ "$card/$lost/$cash" = 2000/0/0 ] || { fail "card sales/refunds lost/cash sales $card/$lost/$cash, want 2000/0/0"; return; }
    stop_vendd
    [ "$STOP_STATUS" = 0 ] || { fail "vendd exited with $STOP_STATUS after SIGTERM"; return; }
    echo "HIL-MDB: status"
    pass "selection first (sold, drop sensed), selection first not dropped (refunded), card first denied then sold (drop sensed); card books: sales $card, refunds lost $lost"
}

# The DEX port: a route driver's handheld on the machine's DEX jack, here /dev/ttyS3 (qemu's
# fourth UART) with dex-handheld on the host behind it (Tests/DEXHandheld: DEX/UCS written from
# EVA-DTS chapter 4, a DDCMP master from chapter 3). "HIL-DEX: <command>" lines go to its stdin;
# `expect` lines give it, segment by segment, the file its next read must be (vendd's own
# `vendctl audit --dex`, made just before), and it checks the G85 CRC and SE count itself. Two
# sales, then DEX/UCS reads whose cable is pulled after the first block and before the last
# block's acknowledgement (nothing reset), a whole read (the interim figures reset once the last
# block is acknowledged), a price download, a sale at the new price and a DDCMP read of it.
# run.sh checks the handheld's side afterwards.

# dex_audit FILE: the audit vendd would send now, as `vendctl audit --dex` writes it (with the
# IDs of hil-dex.yaml's dex: section).
dex_audit() { vendctl audit --dex "$1" --comm-id VDD0000042 --asset HIL-GUEST >/dev/null; }
# segment_of TAG FILE [N]: the audit's Nth (default first) segment starting TAG*, without CR LF.
segment_of() { tr -d '\r' <"$2" | grep "^$1\*" | sed -n "${3:-1}p"; }
# same_audit A B: the same report but for EA3's date, time and reader of the read (EA302-EA304,
# when the file was made) and so G85.
same_audit() {
    strip='s/^(EA3\*[^*]*)\*[^*]*\*[^*]*\*[^*]*/\1***/; /^G85\*/d'
    tr -d '\r' <"$1" | sed -E "$strip" >/tmp/same-a.dex
    tr -d '\r' <"$2" | sed -E "$strip" >/tmp/same-b.dex
    cmp -s /tmp/same-a.dex /tmp/same-b.dex
}
# expect_audit FILE: the handheld's next whole read must be this file (dex-handheld allows the
# same differences as same_audit).
expect_audit() { tr -d '\r' <"$1" | while IFS= read -r segment; do echo "HIL-DEX: expect $segment"; done; }

# sell BUTTON RELAY: a customer with credit presses; the relay pulses.
sell() {
    hiltool press "$(pull "$1")"
    pulse_of "$2"; result=$?
    hiltool release "$(pull "$1")"
    return $result
}

scenario_dex_over_ttyS3() {
    started=$(date +%s)
    # amd64: qemu wires this UART (COM4) to IRQ 7 (see run.sh); the kernel's legacy table says 3,
    # COM2's. A PCI UART (arm64) has its interrupt from the bus.
    if [ -n "${HIL_DEX_UART_IRQ:-}" ]; then
        hiltool uart-irq /dev/ttyS3 "$HIL_DEX_UART_IRQ" || { fail "cannot set the IRQ of /dev/ttyS3"; return; }
    fi
    start_vendd credit /etc/vendd/hil-dex.yaml || { fail "vendd did not start"; return; }
    within 300 logged "DEX port /dev/ttyS3 (9600 8N1) open (DEX/UCS)" 1 || { fail "the DEX port /dev/ttyS3 never opened"; return; }
    sell 2 3 || { fail "the sale at A2 did not pulse its relay"; return; }
    sell 5 6 || { fail "the sale at A3 did not pulse its relay"; return; }
    within 30 books_are itemsSold 2 || { fail "$(books itemsSold) sold after two sales, want 2"; return; }
    dex_audit /tmp/sold.dex || { fail "vendctl audit --dex failed"; return; }
    va1=$(segment_of VA1 /tmp/sold.dex)
    [ "$va1" = "VA1*2000*2*2000*2" ] || { fail "vendctl's audit says $va1 after two sales at 1000, want VA1*2000*2*2000*2"; return; }
    # 1. The cable pulled twice: after the first block, before its acknowledgement; then with the
    # whole audit received but the last block unacknowledged. Each time the handheld goes silent,
    # vendd asks with ENQ, gives up, and resets nothing.
    cuts=
    for stage in inData beforeLastAck; do
        failed=$(grep -cF "DEX HHD0000001 read: failed" /tmp/vendd.log)
        echo "HIL-DEX: read $stage"
        within 300 logged "DEX HHD0000001 read: failed" $((failed + 1)) || { fail "the read whose cable was pulled ($stage) was not logged as failed"; return; }
        dex_audit /tmp/cut.dex
        same_audit /tmp/sold.dex /tmp/cut.dex || { fail "the read pulled $stage changed the audit: $(segment_of VA1 /tmp/cut.dex)"; return; }
        cuts="$cuts${cuts:+; }$stage: $(grep -F "DEX HHD0000001 read: failed" /tmp/vendd.log | tail -n 1 | sed 's/^.*read: failed: //; s/; nothing reset.*//')"
        echo "HIL-DEX: replug"
    done
    # 2. Back on the jack: the whole audit, the interim figures reset after the last block.
    expect_audit /tmp/sold.dex
    echo "HIL-DEX: read"
    within 300 logged "DEX HHD0000001 read: delivered" 1 || { fail "no whole read 30 s after the replug"; return; }
    logged "paid vends in all: 2; interim figures reset (SD105 AUTO) DEX_HANDHELD=HHD0000001 DEX_OPERATION=read DEX_RESULT=delivered" 1 ||
        { fail "the delivered read's log line lacks the reset or its DEX_ fields: $(grep -F 'read: delivered' /tmp/vendd.log)"; return; }
    vendctl status | grep -qF "HHD0000001 read: delivered" || { fail "vendctl status does not show the read"; return; }
    dex_audit /tmp/read.dex
    [ "$(segment_of VA1 /tmp/read.dex)/$(segment_of PA2 /tmp/read.dex 2)" = "VA1*2000*2*0*0/PA2*1*1000*0*0" ] ||
        { fail "after the read: $(segment_of VA1 /tmp/read.dex), A2 $(segment_of PA2 /tmp/read.dex 2); want VA1*2000*2*0*0, PA2*1*1000*0*0"; return; }
    # 3. A price download: A2 at 1200, through the path of `vendctl price`.
    echo "HIL-DEX: prices 0 A2=1200"
    within 300 logged "DEX HHD0000001 configure: configured" 1 || { fail "the price download was not logged as configured"; return; }
    logged "slot A2 price 1,000원 → 1,200원" 1 || { fail "the log does not show A2's new price: $(grep -F 'configure:' /tmp/vendd.log)"; return; }
    # 4. A sale at the new price, then the DDCMP master reads it (vendd restarted on the same state
    # with protocol: ddcmp, 2400 8N1).
    sell 2 3 || { fail "the sale at A2's new price did not pulse"; return; }
    within 30 books_are credit 1800 || { fail "credit $(books credit) after sales of 1000, 1000 and 1200 from 5000, want 1800"; return; }
    stop_vendd
    launch_vendd /etc/vendd/hil-ddcmp.yaml || { fail "vendd did not restart with protocol: ddcmp"; return; }
    within 300 logged "DEX port /dev/ttyS3 (2400 8N1) open (DDCMP)" 1 || { fail "the DEX port /dev/ttyS3 never opened for DDCMP"; return; }
    dex_audit /tmp/priced.dex
    ddcmp_va1=$(segment_of VA1 /tmp/priced.dex)
    [ "$ddcmp_va1/$(segment_of PA1 /tmp/priced.dex 2)" = "VA1*3200*3*1200*1/PA1*A2*1200" ] ||
        { fail "vendctl's audit after the sale at 1200: $ddcmp_va1, $(segment_of PA1 /tmp/priced.dex 2); want VA1*3200*3*1200*1, PA1*A2*1200"; return; }
    expect_audit /tmp/priced.dex
    echo "HIL-DEX: ddcmp-read"
    within 300 logged "DEX DDCMP route person 'RP' read: delivered" 1 || { fail "no DDCMP read delivered within 30 s"; return; }
    logged "paid vends in all: 3; interim figures reset" 1 || { fail "the DDCMP read did not reset the interim figures"; return; }
    dex_audit /tmp/ddcmp.dex
    [ "$(segment_of VA1 /tmp/ddcmp.dex)" = "VA1*3200*3*0*0" ] || { fail "after the DDCMP read: $(segment_of VA1 /tmp/ddcmp.dex), want VA1*3200*3*0*0"; return; }
    stop_vendd
    [ "$STOP_STATUS" = 0 ] || { fail "vendd exited with $STOP_STATUS after SIGTERM"; return; }
    echo "HIL-DEX: status"
    pass "in $(($(date +%s) - started)) s: cable pulled twice ($cuts): nothing reset; whole DEX/UCS read, then reset; A2 priced 1200 by the handheld; DDCMP read, then reset; reads: $va1, $ddcmp_va1"
}

# The food-safety lock on a real kernel's hwmon path: an LM75 (i2c-stub, the lm75 driver) read by
# vendd's hwmon sensor. Warmed past the limit, the zone locks its perishable slot (A2) while A3
# sells; the lock survives SIGKILL and a restart on a cold cabinet, and only a technician's zone
# service clears it; the sensor taken away locks it again after its grace time.
zone_line() { vendctl status | grep '^zone '; }
zone_reads() { zone_line | grep -qF "chilled (cold) $1 °C"; }
zone_locked() { zone_line | grep -qF "HEALTH LOCKED: $1"; }
zone_unlocked() { zone_line | grep -qF "health ok"; }
# refused_press BUTTON RELAY: pressed with credit, the relay stays off for a second.
refused_press() {
    hiltool press "$(pull "$1")"
    hiltool hold "$(value "$2")" 0 1000; held=$?
    hiltool release "$(pull "$1")"
    return $held
}

scenario_health_over_i2c() {
    started=$(date +%s)
    i2c=/sys/bus/i2c/devices
    [ -e $i2c/i2c-0 ] || insmod /i2c-stub.ko chip_addr=0x48 || { fail "cannot load i2c-stub"; return; }
    [ -e $i2c/0-0048 ] || echo lm75 0x48 >$i2c/i2c-0/new_device || { fail "cannot bind lm75 at 0x48 on i2c-0"; return; }
    hiltool lm75-set /dev/i2c-0 0x48 3000 || { fail "cannot set the LM75's temperature"; return; }
    start_vendd credit /etc/vendd/hil-health.yaml || { fail "vendd did not start with the chilled zone"; return; }
    within 50 zone_reads 3.0 || { fail "the zone does not read the LM75's 3.0 °C: $(zone_line)"; return; }
    grep -qF "zone chilled (cold): hwmon:lm75" /tmp/vendd.log || { fail "the start-up log does not name the lm75 sensor"; return; }
    grep -qF "relay on line 8" /tmp/vendd.log || { fail "the start-up log does not name the compressor's line 8"; return; }
    [ "$(level 8)" = 0 ] || { fail "the compressor (line 8) is on at 3.0 °C, inside the differential"; return; }

    # Warm: the compressor starts; cold at once: it keeps its 3 s minimum run, then stops.
    hiltool lm75-set /dev/i2c-0 0x48 9000
    hiltool wait "$(value 8)" 1 5000 >/dev/null || { fail "9 °C did not start the compressor (line 8): $(zone_line)"; return; }
    hiltool lm75-set /dev/i2c-0 0x48 1000
    ran_ms=$(hiltool wait "$(value 8)" 0 8000) || { fail "1 °C did not stop the compressor (line 8): $(zone_line)"; return; }
    [ "$ran_ms" -ge 2500 ] || { fail "the compressor stopped $ran_ms ms after it started, inside its 3 s minimum run"; return; }
    hiltool lm75-set /dev/i2c-0 0x48 9000
    within 100 zone_locked "temperature past the limit of 5.0 °C" || { fail "9 °C did not lock the zone: $(zone_line)"; return; }
    logged "zone chilled locked" 1 || { fail "the lock was not logged"; return; }
    refused_press 2 3 || { fail "A2's relay moved while its zone is locked"; return; }
    logged "slot A2 is locked" 1 || { fail "the refusal of A2 was not logged"; return; }
    sell 5 6 || { fail "A3 (not perishable) did not sell: relay line 6"; return; }
    # The sale is booked just after the pulse ends; the power cut comes after it.
    within 20 books_are itemsSold 1 || { fail "A3's sale was not booked"; return; }

    # A power cut with the cabinet cold again: the lock is state, not a reading.
    kill -KILL "$VPID"; wait "$VPID" 2>/dev/null; VPID=
    hiltool lm75-set /dev/i2c-0 0x48 3000
    launch_vendd /etc/vendd/hil-health.yaml || { fail "vendd did not restart"; return; }
    within 50 zone_reads 3.0 || { fail "after the restart the zone reads $(zone_line)"; return; }
    zone_locked "temperature past the limit" || { fail "the lock did not survive SIGKILL: $(zone_line)"; return; }
    refused_press 2 3 || { fail "A2's relay moved after the restart while still locked"; return; }

    vendctl zone service chilled >/dev/null 2>&1 && { fail "zone service outside service mode was accepted"; return; }
    vendctl service on >/dev/null && vendctl zone service chilled >/dev/null && vendctl service off >/dev/null ||
        { fail "the technician's zone service failed"; return; }
    within 20 zone_unlocked || { fail "the service did not clear the lock: $(zone_line)"; return; }
    sell 2 3 || { fail "A2 did not sell after the service"; return; }
    within 20 books_are itemsSold 2
    expect_books 2 0 3000 || { fail "$BOOKS"; return; }

    # The sensor taken away: after its 3 s grace the zone locks again (no reading is no safety).
    echo 0x48 >$i2c/i2c-0/delete_device
    within 100 zone_locked "sensor" || { fail "the missing sensor did not lock the zone: $(zone_line)"; return; }
    # The sensor back and warm: the compressor runs, and SIGTERM switches it off.
    echo lm75 0x48 >$i2c/i2c-0/new_device && hiltool lm75-set /dev/i2c-0 0x48 9000 || { fail "cannot put the LM75 back"; return; }
    hiltool wait "$(value 8)" 1 8000 >/dev/null || { fail "the compressor (line 8) did not start with the sensor back at 9 °C: $(zone_line)"; return; }
    stop_vendd
    [ "$STOP_STATUS" = 0 ] || { fail "vendd exited with $STOP_STATUS after SIGTERM"; return; }
    [ "$(level 8)" = 0 ] || { fail "the compressor (line 8) is still on after SIGTERM"; return; }
    logged "every zone relay off" 1 || { fail "the stop did not log the zones' relays off"; return; }
    pass "in $(($(date +%s) - started)) s: lm75 on i2c-stub read through hwmon; 9 °C started the compressor (line 8), 1 °C stopped it after $ran_ms ms (3 s minimum run); 9 °C locked A2 (A3 sold), the lock outlived SIGKILL, zone service cleared it, A2 sold; the sensor removed locked it again; SIGTERM switched the running compressor off"
}

# The spiral motors: the 60-selection matrix machine of /etc/vendd/hil-motors.yaml (run.sh's
# motor_machine, which describes the layout) on three gpio-sim chips of one device: the SoC's
# (bank0, "vendd-soc", 64 lines) and two MCP23017 expanders' (bank1 and bank2, "mcp23017-20" and
# "mcp23017-21", 16 lines each). motor-model turns the motors vendd powers and moves their cams;
# its faults and the technician's hand go through its control file, /tmp/motors.control.
MCFS=/sys/kernel/config/gpio-sim/vendd-motors
MODEL_LOG=/tmp/motor-model.log
MODEL_CONTROL=/tmp/motors.control
MODEL=

# make_motor_chips: the three chips, afresh (every pull back to its default).
make_motor_chips() {
    if [ -d "$MCFS" ]; then
        echo 0 >"$MCFS/live"
        rmdir "$MCFS"/bank0 "$MCFS"/bank1 "$MCFS"/bank2 "$MCFS"
    fi
    mkdir -p "$MCFS/bank0" "$MCFS/bank1" "$MCFS/bank2"
    echo 64 >"$MCFS/bank0/num_lines"; echo vendd-soc >"$MCFS/bank0/label"
    echo 16 >"$MCFS/bank1/num_lines"; echo mcp23017-20 >"$MCFS/bank1/label"
    echo 16 >"$MCFS/bank2/num_lines"; echo mcp23017-21 >"$MCFS/bank2/label"
    echo 1 >"$MCFS/live"
    device=/sys/devices/platform/$(cat "$MCFS/dev_name")
    SOC=$device/$(cat "$MCFS/bank0/chip_name")
    EXP0=$device/$(cat "$MCFS/bank1/chip_name")
    EXP1=$device/$(cat "$MCFS/bank2/chip_name")
}

# button_pull ROW COLUMN: the `pull` file of that selection's button.
button_pull() {
    index=$((($1 - 1) * 10 + $2 - 1))
    if [ $index -lt 40 ]; then echo "$SOC/sim_gpio$((20 + index))/pull"
    elif [ $index -lt 46 ]; then echo "$EXP0/sim_gpio$((10 + index - 40))/pull"
    else echo "$EXP1/sim_gpio$((index - 46))/pull"; fi
}

# motor_spec LEAVE_MS TURN_MS [buttons]: the model's spec for this wiring (motor-model.c).
motor_spec() {
    echo "leave_ms $1"
    echo "turn_ms $2"
    for row in 0 1 2 3 4 5; do echo "row $((row + 1)) $SOC/sim_gpio$row/value"; done
    for column in 0 1 2 3 4 5 6 7 8 9; do echo "column $((column + 1)) $EXP0/sim_gpio$column/value"; done
    echo "home * $SOC/sim_gpio6/pull"
    for column in 1 2 3 4 5 6 7 8 9 10; do echo "home 6 $column $SOC/sim_gpio$((7 + column))/pull"; done
    if [ "${3:-}" = buttons ]; then
        for row in 1 2 3 4 5 6; do
            for column in 1 2 3 4 5 6 7 8 9 10; do echo "button $row $column $(button_pull $row $column)"; done
        done
    fi
}

# start_motors LEAVE_MS TURN_MS [CONTROL_LINE...]: fresh chips and the model on them, before vendd.
start_motors() {
    make_motor_chips
    motor_spec "$1" "$2" >/tmp/motors.spec
    shift 2
    : >"$MODEL_CONTROL"
    for line in "$@"; do echo "$line" >>"$MODEL_CONTROL"; done
    motor-model /tmp/motors.spec "$MODEL_CONTROL" >"$MODEL_LOG" 2>&1 &
    MODEL=$!
    within 30 grep -q "MODEL ready" "$MODEL_LOG"
}

stop_motors() {
    [ -n "$MODEL" ] && kill "$MODEL" 2>/dev/null && wait "$MODEL" 2>/dev/null
    MODEL=
}

# model_says TEXT [COUNT]: the model's log has at least COUNT (default 1) lines holding TEXT.
model_says() { [ "$(grep -cF "$1" "$MODEL_LOG")" -ge "${2:-1}" ]; }
# model_control LINE...: the control file becomes these lines (the model reads it within 50 ms).
model_control() {
    : >"$MODEL_CONTROL.new"
    for line in "$@"; do echo "$line" >>"$MODEL_CONTROL.new"; done
    mv "$MODEL_CONTROL.new" "$MODEL_CONTROL"
    sleep 0.2
}
# motor_fail WHY: a FAIL with the model's last lines too.
motor_fail() {
    fail "$*"
    echo "--- motor model (last 10 lines) ---"
    tail -n 10 "$MODEL_LOG"
    stop_motors
}
no_violation() { ! grep -q "MODEL VIOLATION" "$MODEL_LOG"; }
slot_fault() { vendctl status | grep '^out of service' | grep -qF "$1 ($2)"; }
slot_stock() { vendctl status | grep -qE "^$1 .* $2/"; }
# refused_select SLOT: `vendctl select` refuses it (exit 1) and the reason says why.
refused_select() {
    REFUSAL=$(vendctl select "$1" 2>&1) && return 1
    echo "$REFUSAL" | grep -qF "$2"
}
# sells SLOT ROW COLUMN SOLD: selected with vendctl, the motor at ROW,COLUMN turns and the sale
# is booked (SOLD items sold in all); else WHY says what did not happen.
sells() {
    answer=$(vendctl select "$1") || { WHY="vendctl select $1 refused: $answer"; return 1; }
    within 80 model_says "MODEL released $2 $3: turned" || { WHY="motor $2,$3 ($1) did not turn"; return 1; }
    within 30 books_are itemsSold "$4" || { WHY="$1's sale was not booked: $(books itemsSold) sold, want $4"; return 1; }
}

# faults SLOT ROW COLUMN FAULT: selected, the motor at ROW,COLUMN is cut without a full turn, the
# vend is booked as failed, and SLOT is out of service (FAULT) and refused when selected again.
faults() {
    failed=$(books failedVends)
    answer=$(vendctl select "$1") || { WHY="vendctl select $1 refused: $answer"; return 1; }
    within 80 model_says "MODEL released $2 $3 after" || { WHY="vendd did not cut motor $2,$3 ($1)"; return 1; }
    within 30 books_are failedVends $((failed + 1)) || { WHY="$1's vend was not booked as failed"; return 1; }
    slot_fault "$1" "$4" || { WHY="$1 is not out of service ($4): $(vendctl status | tail -n 2)"; return 1; }
    refused_select "$1" "make another selection" || { WHY="$1 selected again was not refused as out of service: $REFUSAL"; return 1; }
}

# clears_and_sells SLOT ROW COLUMN SOLD: the technician frees the spiral and turns its cam home
# by hand (the model's faults gone) and clears the slot in service mode; then SLOT sells.
clears_and_sells() {
    vendctl service on >/dev/null || { WHY="vendctl service on failed"; return 1; }
    model_control "home $2 $3"
    vendctl slot clear "$1" >/dev/null || { WHY="vendctl slot clear $1 failed"; return 1; }
    vendctl service off >/dev/null || { WHY="vendctl service off failed"; return 1; }
    sells "$@" || { WHY="after the clear: $WHY"; return 1; }
}

# motors_done: the model saw no misuse of the matrix; vendd stops cleanly; the model stops.
motors_done() {
    no_violation || { WHY="the matrix was misused: $(grep -m1 VIOLATION "$MODEL_LOG")"; return 1; }
    stop_vendd
    [ "$STOP_STATUS" = 0 ] || { WHY="vendd exited with $STOP_STATUS after SIGTERM"; return 1; }
    stop_motors
}

# A sale on a matrix motor whose button is on the SoC and home line shared (A3, pressed), and one
# whose button is on an expander and home line its own (F9, selected with vendctl): each motor
# powered, turned by the model, released, sold, stock down.
scenario_motor_vend() {
    start_motors 200 1200 || { motor_fail "the motor model did not start"; return; }
    start_vendd motors /etc/vendd/hil-motors.yaml || { motor_fail "vendd did not start on the matrix machine"; return; }
    hiltool press "$(button_pull 1 3)"
    within 30 model_says "MODEL powered 1 3"; powered=$?
    hiltool release "$(button_pull 1 3)"
    [ $powered = 0 ] || { motor_fail "A3's button (vendd-soc line 22) did not power motor 1,3"; return; }
    within 50 model_says "MODEL released 1 3: turned" || { motor_fail "motor 1,3 was not released after its turn"; return; }
    within 30 books_are itemsSold 1 || { motor_fail "A3's turn was not booked as a sale"; return; }
    sells F9 6 9 2 || { motor_fail "$WHY"; return; }
    expect_books 2 0 2700 || { motor_fail "$BOOKS"; return; }
    slot_stock A3 7 && slot_stock F9 7 || { motor_fail "stock after the sales: $(vendctl status | grep -E '^(A3|F9) ')"; return; }
    overshoots=$(sed -n 's/.*overshoot \([0-9]*\) us/\1/p' "$MODEL_LOG" | tr '\n' ' ')
    motors_done || { motor_fail "$WHY"; return; }
    pass "A3 (button vendd-soc:22, shared home) and F9 (button mcp23017-21:12, own home) each powered, turned, released; 2 sold, credit 5000 -> 2700, stock 8 -> 7; cam home -> release ${overshoots}us (1 ms polling)"
}

# A jammed spiral (F3: its cam leaves home and never comes back): the vend fails after turn_ms
# and the price goes back to the credit (failed_vend: keep-credit), F3 is out of service and
# refused while C5 sells; the technician frees it, `vendctl slot clear F3`, and it sells.
scenario_motor_jam() {
    start_motors 200 1200 "jam 6 3" || { motor_fail "the motor model did not start"; return; }
    start_vendd motors /etc/vendd/hil-motors.yaml || { motor_fail "vendd did not start on the matrix machine"; return; }
    faults F3 6 3 jammed || { motor_fail "$WHY"; return; }
    model_says "cam stopped away from home" || { motor_fail "the jammed cam did not stay away"; return; }
    expect_books 0 1 5000 || { motor_fail "$BOOKS"; return; }
    refusal=$REFUSAL
    [ "$(grep -cF "MODEL powered 6 3" "$MODEL_LOG")" = 1 ] || { motor_fail "the jammed motor was powered again"; return; }
    sells C5 3 5 1 || { motor_fail "$WHY"; return; }
    clears_and_sells F3 6 3 2 || { motor_fail "$WHY"; return; }
    expect_books 2 1 2900 || { motor_fail "$BOOKS"; return; }
    motors_done || { motor_fail "$WHY"; return; }
    pass "F3 jammed: cut after turn_ms, failed vend, 1,100원 back to credit; F3 out of service, refused ($refusal); C5 sold; slot clear in service mode; F3 sold; books sold 2, failed 1, credit 2900"
}

# A missing motor (B3, on the shared home line: its cam never leaves home): the vend fails after
# departure_ms, the price goes back to the credit, B3 is out of service (motor-missing) and
# refused; A1, on the same home line, sells.
scenario_motor_missing() {
    start_motors 200 1200 "missing 2 3" || { motor_fail "the motor model did not start"; return; }
    start_vendd motors /etc/vendd/hil-motors.yaml || { motor_fail "vendd did not start on the matrix machine"; return; }
    faults B3 2 3 motor-missing || { motor_fail "$WHY"; return; }
    model_says "cam still at home" || { motor_fail "the missing motor's cam moved"; return; }
    expect_books 0 1 5000 || { motor_fail "$BOOKS"; return; }
    sells A1 1 1 1 || { motor_fail "$WHY"; return; }
    expect_books 1 1 3800 || { motor_fail "$BOOKS"; return; }
    motors_done || { motor_fail "$WHY"; return; }
    pass "B3's motor missing: cut after departure_ms, failed vend, credit kept; B3 out of service (motor-missing), refused; A1 on the same home line sold"
}

# A power cut mid-turn: vendd killed (SIGKILL) while F7's cam is away from home; the kernel
# releases the lines and the cam stays where it stopped. Restarted, vendd resolves the vend in
# flight from its journal (unknown_outcome: refund-credit) and finds F7 away from home: F7 is
# locked (away-from-home), never turned; the rest sells; the technician turns it home, clears it.
scenario_motor_away_at_boot() {
    start_motors 200 4000 || { motor_fail "the motor model did not start"; return; }
    start_vendd motors /etc/vendd/hil-motors.yaml || { motor_fail "vendd did not start on the matrix machine"; return; }
    answer=$(vendctl select F7) || { motor_fail "vendctl select F7 refused: $answer"; return; }
    within 30 model_says "MODEL left home 6 7" || { motor_fail "motor 6,7 did not leave home"; return; }
    kill -KILL "$VPID"; wait "$VPID" 2>/dev/null; VPID=
    within 30 model_says "MODEL released 6 7 after" || { motor_fail "the killed vendd's motor lines were not released"; return; }
    model_says "cam stopped away from home" || { motor_fail "the cam did not stop away from home"; return; }
    powered=$(grep -c "MODEL powered" "$MODEL_LOG")
    launch_vendd /etc/vendd/hil-motors.yaml || { motor_fail "vendd did not restart"; return; }
    within 30 logged "found away from home at start" 1 || { motor_fail "vendd did not report F7 away from home at start"; return; }
    logged "at slot F7 was in flight when vendd stopped" 1 || { motor_fail "the vend in flight was not resolved from the journal"; return; }
    books_are unknownOutcomes 1 || { motor_fail "unknown outcomes $(books unknownOutcomes), want 1"; return; }
    expect_books 0 0 5000 || { motor_fail "$BOOKS (the interrupted vend's price back: refund-credit)"; return; }
    slot_fault F7 away-from-home || { motor_fail "F7 is not out of service as away-from-home: $(vendctl status | tail -n 2)"; return; }
    refused_select F7 "make another selection" || { motor_fail "F7 was not refused: $REFUSAL"; return; }
    sells F6 6 6 1 || { motor_fail "$WHY"; return; }
    [ "$(grep -c "MODEL powered" "$MODEL_LOG")" = $((powered + 1)) ] || { motor_fail "a motor other than F6's was powered after the restart"; return; }
    clears_and_sells F7 6 7 2 || { motor_fail "$WHY"; return; }
    expect_books 2 0 2800 || { motor_fail "$BOOKS"; return; }
    motors_done || { motor_fail "$WHY"; return; }
    pass "SIGKILL mid-turn at F7: the vend in flight resolved from the journal (unknown, refund-credit, credit 5000); F7 away from home at start: locked, never powered; F6 sold; cam turned home by hand, slot clear, F7 sold"
}

# The overshoot benchmark: gpio-mirror's edge -> output on the relay machine's chip, then vendd
# (release build) on the matrix machine with motor-model pressing the buttons of all 60
# selections in turn, 500 turns (HIL_TURNS), each cam back home 120 ms after power; the time from
# the cam's return (the model's write of the home line's pull) to vendd's release of the column.
run_bench_motors() {
    make_chip
    SCENARIO=bench-motors
    gpio-mirror "/dev/$(cat "$CFS/bank0/chip_name")" 0 1 &
    mirror=$!
    sleep 1
    echo "BENCH gpio-mirror (edge -> output): $(hiltool latency "$(pull 0)" "$(value 1)" "${HIL_PRESSES:-500}" "${HIL_GAP_MS:-100}")"
    kill "$mirror"; wait "$mirror" 2>/dev/null
    make_motor_chips
    motor_spec 30 120 buttons >/tmp/motors.spec
    : >"$MODEL_CONTROL"
    start_vendd bench-motors /etc/vendd/bench-motors.yaml || { fail "vendd did not start"; echo "HIL done"; return; }
    motor-model /tmp/motors.spec "$MODEL_CONTROL" --bench "${HIL_TURNS:-500}" "${HIL_GAP_MS:-100}" >"$MODEL_LOG" 2>&1
    grep '^BENCH' "$MODEL_LOG"
    grep -m 3 'VIOLATION\|did not turn' "$MODEL_LOG"
    echo "BENCH vendd books: sold $(books itemsSold), failed $(books failedVends), slots out of service: $(vendctl status | sed -n 's/^out of service: //p')"
    stop_vendd
    echo "HIL done"
}

run_scenarios() {
    check_uarts || { echo "HIL done"; return; }
    make_chip
    planned=${HIL_SCENARIOS:-libgpiod_api press_with_credit bouncing_press drop_confirms_vend no_drop_aborts_vend \
             two_buttons_at_once press_without_credit sigterm_mid_vend busy_line chip_errors coin_over_ttyS1 \
             mdb_over_ttyS2 card_over_ttyS2 dex_over_ttyS3 health_over_i2c \
             motor_vend motor_jam motor_missing motor_away_at_boot}
    echo "HIL planned: $(echo $planned | wc -w)"
    for SCENARIO in $planned; do
        "scenario_$SCENARIO"
    done
    echo "HIL done"
}

# The benchmark: button edge -> relay active, for gpio-mirror (libgpiod directly) then vendd.
# Both with the same gap between presses (vendd's relay pulses 50 ms, so 100 ms): under TCG an
# idle guest CPU takes milliseconds to wake, so a baseline pressed every 2 ms while vendd waits
# 100 ms would measure a hot CPU against a cold one (gpio-mirror: 0.5 ms at 2 ms, 4.9 ms at 100 ms).
bench_latency() {
    make_chip
    SCENARIO=bench
    gpio-mirror "/dev/$(cat "$CFS/bank0/chip_name")" 0 1 &
    mirror=$!
    sleep 1
    echo "BENCH gpio-mirror: $(hiltool latency "$(pull 0)" "$(value 1)" "${HIL_PRESSES:-500}" "${HIL_GAP_MS:-100}")"
    kill "$mirror"; wait "$mirror" 2>/dev/null
    start_vendd bench /etc/vendd/bench.yaml || { fail "vendd did not start"; return 1; }
    echo "BENCH vendd: $(hiltool latency "$(pull 0)" "$(value 1)" "${HIL_PRESSES:-500}" "${HIL_GAP_MS:-100}")"
    echo "BENCH vendd books: sold $(books itemsSold), failed $(books failedVends)"
    stop_vendd
}

# The same presses with a temperature zone whose sensor read blocks in the kernel for 750 ms, as
# a DS18B20's conversion does (w1_therm's read waits for it): /sys/class/hwmon is covered by a
# tmpfs holding one hwmon directory named "slowtemp" whose temp1_input is a FIFO; the writer's
# open returns when vendd's read opens it (the rendezvous), it answers 750 ms later and closes (the
# read's end of file), then rests 50 ms so that vendd's read has closed before it opens again. The
# zone reads every second, so a read is in flight about three quarters of the time; once more with
# the writer answering at once, to tell the zone's own cost from the read in flight.
# bench_latency_zone DELAY LABEL: DELAY is the writer's sleep in seconds ("0" answers at once).
bench_latency_zone() {
    delay=$1 label=$2
    hwmon=/sys/class/hwmon
    mount -t tmpfs tmpfs $hwmon && mkdir $hwmon/hwmon90 && echo slowtemp >$hwmon/hwmon90/name &&
        mkfifo $hwmon/hwmon90/temp1_input || { fail "cannot make the slow hwmon input"; return 1; }
    : >/tmp/sensor-reads
    (while :; do { [ "$delay" = 0 ] || sleep "$delay"; echo 4000; } >$hwmon/hwmon90/temp1_input; echo >>/tmp/sensor-reads; sleep 0.05; done) &
    writer=$!
    start_vendd bench /etc/vendd/bench-zone.yaml || { fail "vendd did not start with the zone"; kill "$writer"; umount $hwmon; return 1; }
    within 50 zone_reads 4.0 || { fail "the zone does not read the slow sensor: $(zone_line)"; kill "$writer"; umount $hwmon; return 1; }
    reads_before=$(wc -l </tmp/sensor-reads) started=$(date +%s)
    echo "BENCH vendd, $label: $(hiltool latency "$(pull 0)" "$(value 1)" "${HIL_PRESSES:-500}" "${HIL_GAP_MS:-100}")"
    echo "BENCH vendd, $label: $(($(wc -l </tmp/sensor-reads) - reads_before)) sensor reads of ${delay} s in $(($(date +%s) - started)) s; books: sold $(books itemsSold), failed $(books failedVends)"
    stop_vendd
    kill "$writer"; wait "$writer" 2>/dev/null
    # A sleep the writer left may hold the FIFO open for up to its delay.
    within 20 umount $hwmon 2>/dev/null || { fail "cannot unmount the slow hwmon tree"; return 1; }
}

run_bench() {
    bench_latency || return
    bench_latency_zone 0 "zone, its sensor answering at once" || return
    bench_latency_zone 0.75 "zone, a 750 ms sensor read in flight" || return
    echo "HIL done"
}

# The throttled-disk benchmark: the figures above, then vendd's state on ext4 on /dev/vda, which
# qemu throttles (run.sh --bench-throttled) so that no fsync takes less than 100 ms; measured here
# first as vendd's journal does it. Then 500 vends while cctalk-sim on ttyS1 takes a 10원 coin
# (one vend's price) every second, each coin an fsync'd journal record that holds the machine
# while a relay pulses: press -> relay active, and each relay pulse's length on the line against
# the configured pulse_ms. (A coin every 0.5 s would keep this disk busy for good, and measure
# its queue instead.) gpio-mirror's timed pulse on the same guest comes first: how much this
# guest stretches a pulse with nothing else to do, the floor vendd's figure stands on.
# books_settle: the books stood still for a second (every coin credited, every vend's end journaled).
books_settle() {
    was="$(books itemsSold) $(books failedVends) $(books coinsIn)"
    sleep 1
    [ "$(books itemsSold) $(books failedVends) $(books coinsIn)" = "$was" ]
}

run_bench_throttled() {
    bench_latency || return
    pulse_ms=$(sed -n 's/.*pulse_ms: \([0-9]*\).*/\1/p' /etc/vendd/bench.yaml)
    gpio-mirror "/dev/$(cat "$CFS/bank0/chip_name")" 0 1 "$pulse_ms" >/dev/null &
    mirror=$!
    sleep 1
    hiltool latency "$(pull 0)" "$(value 1)" "${HIL_PRESSES:-500}" "${HIL_GAP_MS:-100}" "$pulse_ms" 2>&1 | sed 's/^/BENCH gpio-mirror timed pulse: /'
    kill "$mirror"; wait "$mirror" 2>/dev/null
    rm -rf "$STATE" /run/vendd && mkdir -p "$STATE" /run/vendd
    mount -t ext4 /dev/vda "$STATE" || { fail "cannot mount /dev/vda (ext4) on $STATE"; return; }
    echo "BENCH fsync on /dev/vda, idle disk (1 s apart): $(hiltool fsync "$STATE/fsync-probe" 10 1000)"
    echo "BENCH fsync on /dev/vda, back to back: $(hiltool fsync "$STATE/fsync-probe" 10 0)"
    rm "$STATE/fsync-probe"
    launch_vendd /etc/vendd/bench-coin.yaml || { fail "vendd did not start on /dev/vda"; return; }
    within 300 logged "ccTalk acceptor ready" 1 || { fail "the acceptor on /dev/ttyS1 never became ready"; return; }
    coins_in=$(books coinsIn)
    # The count goes first: a feeder killed between the two has not sent more than it counted.
    (sent=0; while :; do sent=$((sent + 1)); echo $sent >/tmp/coins-sent; echo "HIL-HOST: coin 1"; sleep 1; done) &
    feeder=$!
    hiltool latency "$(pull 0)" "$(value 1)" "${HIL_PRESSES:-500}" "${HIL_GAP_MS:-100}" "$pulse_ms" 2>&1 | sed 's/^/BENCH vendd, throttled disk, coins: /'
    kill "$feeder"; wait "$feeder" 2>/dev/null
    within 30 books_settle || { fail "the books still changed 30 s after the last press"; return; }
    echo "BENCH vendd, throttled disk, books: sold $(books itemsSold), failed $(books failedVends), unknown outcome $(books unknownOutcomes), coins sent $(cat /tmp/coins-sent), coins in +$(($(books coinsIn) - coins_in))원"
    stop_vendd
    umount "$STATE"
    echo "HIL done"
}
