# shellcheck shell=sh disable=SC3028  # busybox ash has $RANDOM
# The power-cut test's guest side (host side: scripts/hil/powercut.py), sourced by /init after
# scenarios.sh (make_chip, pull, value, books). One boot = reconcile the previous cut, then run a
# transaction stream until the host kills qemu (the power cut). The machine gives change: a ccTalk
# hopper of 500s on the acceptor's bus (/dev/ttyS1) pays the 500s of it, an MDB changer (mdb-sim,
# /dev/ttyS2) the rest, both slowly, so that many cuts land while they pay. A card reader (mdb-sim's
# cashless #1, 10h, on the changer's bus) takes card vends between the cash customers. Everything
# the host needs is printed on the console as it happens, so it survives the cut:
#   OBS relay-on|relay-off ...    every relay change (hiltool monitor, started before vendd)
#   PC resolved <log line>        vendd resolving a vend that was in flight (unknown_outcome)
#   PC payout-resolved <log line> vendd resolving a payout that was in flight, from the devices
#   PC card-settled <log line>    vendd telling the reader, at start, how a card vend that was
#                                 approved (or may have been) ended: before any reset of the reader
#   PC store <log line>           what vendd's store repaired at restore (a torn last record…)
#   PC books <status JSON>        the books once vendd has restored its state, polled the
#                                 acceptor and resolved any payout in flight
#   PC stream-start               from here on the host may cut at any instant
#   EVT <event JSON>              `vendctl --json watch`: vends and payouts started and ended
#   HIL-HOST: coin P              a coin the host inserts into cctalk-sim (ttyS1)
#   HIL-MDB: card 1 ...           a card tapped on the reader, or the bank's answer to come
#                                 (mdb-sim on ttyS2)
#   PC customer <choice>          what the customer chose (for an inquest)
#   LOG <line>                    vendd's log since its start, once the stream starts (ditto)
#   MODEL <line>                  the spiral motors' model (motor-model.c): each motor powered,
#                                 its cam leaving and coming home, released; any misuse
#   PC locked <slot> (<fault>)    a slot out of service once vendd has started (away-from-home…)
#   PC cam-home R C               the technician turned motor R,C's cam home by hand
# The kernel command line says whether to run a stream after reconciling (pc.stream=1), or
# to stop (the last boot, which only reconciles the last cut); pc.aim=card when the host aims
# this boot's cut at a card vend (its first customer then pays by card), pc.aim=motor at a spiral
# motor's turn (its first customer buys from B1-B3). The cams of the motors are where the host saw
# them at the cut: pc.away=R.C,... names those away from home, which the model puts there before
# vendd starts (the cams do not move while the power is off).

PC_CONFIG=/etc/vendd/hil-powercut.yaml
# Payout starts and ends seen by the watch, for the stream to know when the change is out.
PC_PAYOUTS=/tmp/payouts

# The spiral motors' chip, "pc-motors" (laid out as run.sh's hil-powercut.yaml says), and its model.
PCMFS=/sys/kernel/config/gpio-sim/vendd-pc-motors
PC_MODEL_CONTROL=/tmp/pc-motors.control

pc_motor_line() { echo "$PCM/sim_gpio$1/$2"; }

# pc_start_motors: the chip and the model on it, the cams the host names away from home put
# there, before vendd starts. The model prints on the console: the host follows every cam.
pc_start_motors() {
    mkdir -p "$PCMFS/bank0"
    echo 10 >"$PCMFS/bank0/num_lines"
    echo pc-motors >"$PCMFS/bank0/label"
    echo 1 >"$PCMFS/live"
    PCM=/sys/devices/platform/$(cat "$PCMFS/dev_name")/$(cat "$PCMFS/bank0/chip_name")
    {
        echo "leave_ms 200"
        echo "turn_ms 1200"
        echo "row 1 $(pc_motor_line 0 value)"
        for column in 1 2 3; do echo "column $column $(pc_motor_line "$column" value)"; done
        echo "home * $(pc_motor_line 4 pull)"
        echo "home 1 3 $(pc_motor_line 5 pull)"
    } >/tmp/pc-motors.spec
    : >"$PC_MODEL_CONTROL"
    for motor in $(sed -n 's/.*pc\.away=\([0-9.,]*\).*/\1/p' /proc/cmdline | tr ',' ' '); do
        echo "away ${motor%.*} ${motor#*.}" >>"$PC_MODEL_CONTROL"
    done
    motor-model /tmp/pc-motors.spec "$PC_MODEL_CONTROL" 2>&1 | tee /tmp/pc-model.log &
    tries=0
    until grep -q "MODEL ready" /tmp/pc-model.log 2>/dev/null; do
        tries=$((tries + 1)); [ $tries -gt 50 ] && pc_fail "the motor model did not start"
        sleep 0.1
    done
}

# pc_technician: a slot out of service because its cam was found away from home: the
# technician turns the cam home by hand and clears the slot, so that later cuts keep selling.
pc_technician() {
    away=$(vendctl status | grep '^out of service' | grep -o 'B[1-3] (away-from-home)' | cut -c2)
    [ -n "$away" ] || return 0
    vendctl service on >/dev/null || pc_fail "vendctl service on failed"
    : >"$PC_MODEL_CONTROL.new"
    for column in $away; do echo "home 1 $column" >>"$PC_MODEL_CONTROL.new"; done
    mv "$PC_MODEL_CONTROL.new" "$PC_MODEL_CONTROL"
    sleep 0.2   # the model reads its control file every 50 ms
    for column in $away; do
        echo "PC cam-home 1 $column"
        vendctl slot clear "B$column" >/dev/null || pc_fail "vendctl slot clear B$column failed"
    done
    vendctl service off >/dev/null || pc_fail "vendctl service off failed"
}

# pc_motor_press COLUMN: a customer presses B<COLUMN>; if its motor (row 1, that column) is
# powered within 600 ms, the button is let go and the turn waited for (the model's turn, 1.2 s).
pc_motor_press() {
    hiltool press "$(pc_motor_line $(($1 + 5)) pull)"
    if hiltool wait "$(pc_motor_line "$1" value)" 1 600 >/dev/null; then
        hiltool release "$(pc_motor_line $(($1 + 5)) pull)"
        hiltool wait "$(pc_motor_line "$1" value)" 0 3000 >/dev/null
    else
        hiltool release "$(pc_motor_line $(($1 + 5)) pull)"
    fi
}

pc_fail() {
    echo "PC error: $*"
    echo "--- vendd log (last 20 lines) ---"
    tail -n 20 /tmp/vendd.log 2>/dev/null
    poweroff -f
}

# pc_wait_log TEXT TENTHS: until vendd's log has TEXT, at most TENTHS tenths of a second.
pc_wait_log() {
    tries=0
    until grep -qF "$1" /tmp/vendd.log; do
        tries=$((tries + 1)); [ $tries -gt "$2" ] && return 1
        kill -0 "$VPID" 2>/dev/null || return 1
        sleep 0.1
    done
}

# pc_paying: vendd has a payout in flight (held, neither credit nor paid).
pc_paying() { vendctl --json status | grep -q '"payoutInProgress"'; }

# pc_change_out: every payout the watch showed started has ended.
pc_change_out() {
    [ "$(grep -c payout-started "$PC_PAYOUTS")" = "$(grep -c payout-ended "$PC_PAYOUTS")" ]
}

# pc_press SLOT_BUTTON RELAY DROP [WAIT_MS]: one customer: press, and if the relay moves within
# WAIT_MS (default 600; longer for a card, whose relay waits for the reader's approval), maybe a
# drop. No relay: not enough credit, a vend or payout in progress, no stock, or a card denied.
pc_press() {
    hiltool press "$(pull "$1")"
    if hiltool wait "$(value "$2")" 1 "${4:-600}" >/dev/null; then
        hiltool release "$(pull "$1")"
        if [ "$3" = drop ]; then
            sleep 0.1
            hiltool press "$(pull 4)"; sleep 0.03; hiltool release "$(pull 4)"
        fi
        hiltool wait "$(value "$2")" 0 1500 >/dev/null
    else
        hiltool release "$(pull "$1")"
    fi
}

# pc_card_press SLOT_BUTTON RELAY DROP: a customer paying by card presses; the approval may be
# slow (asked for with `card 1 slow`).
pc_card_press() { pc_press "$1" "$2" "$3" 6000; }

pc_card_session() { vendctl --json status | grep -q '"cardSession"'; }

# pc_card_customer: one customer paying by card. vendd takes no card while there is cash
# credit (cash and cards never mix), so what the last customer left is returned first. Then a
# selection first (the press sends VEND REQUEST, the relay waits for the approval): A1 with or
# without a drop, A2 (no sensor: sold), A1 after a slow approval (an online authorisation, so that
# cuts fall between the request and the approval), or A3 denied by the bank; or card first (the
# card tapped with some funds: BEGIN SESSION, then the choice). A bank's answer asked for here
# may reach the reader after this customer's request: a later one gets it, which is as random.
pc_card_customer() {
    if [ "$(books credit)" != 0 ]; then
        echo "PC customer coin return, then a card"
        vendctl coin-return >/dev/null 2>&1
        sleep 0.5
        tries=0
        until pc_change_out || [ $tries -ge 150 ]; do tries=$((tries + 1)); sleep 0.1; done
    fi
    case $((RANDOM % 8)) in
    0 | 1) echo "PC customer card A1, drop"; pc_card_press 0 1 drop ;;
    2) echo "PC customer card A1, no drop"; pc_card_press 0 1 nodrop ;;
    3) echo "PC customer card A2"; pc_card_press 2 3 nodrop ;;
    4)
        polls=$((4 + RANDOM % 16))
        echo "PC customer card A1, drop, approved after $polls polls"
        echo "HIL-MDB: card 1 slow $polls"
        sleep 0.1
        pc_card_press 0 1 drop
        ;;
    5)
        echo "PC customer card A3, denied"
        echo "HIL-MDB: card 1 deny"
        sleep 0.1
        pc_card_press 5 6 nodrop
        ;;
    *)
        echo "PC customer card first, A1, drop"
        echo "HIL-MDB: card 1 tap $((100 + RANDOM % 400))"
        # A tap while vendd keeps the reader disabled is not seen: the customer walks away.
        tries=0
        until pc_card_session || [ $tries -ge 30 ]; do tries=$((tries + 1)); sleep 0.1; done
        pc_card_session && pc_card_press 0 1 drop
        # One vend per session: it ends by itself; a session left open (the press refused) is
        # ended by taking the card away, so that the next customer's coins are taken.
        pc_card_session && echo "HIL-MDB: card 1 remove"
        ;;
    esac
}

pc_coin() {
    echo "HIL-HOST: coin $1"
    sleep 0.1
}

# The stream, one customer after another, each once the last one's change is out (coins are
# refused while a payout runs). Below 1,500원 of credit (what an interrupted payout gave back),
# two 500s for the price and most often a third; then one or two smaller coins, to be given back
# (the hopper pays the 500s of the change, the changer the rest). Then a slot: A1 with a drop
# (sale confirmed), A1 without (vend failed, credit kept for the next customer), A2 or A3 (no
# sensor: sold), B1-B3 (spiral motors: sold when the cam is home again); after a sale the change
# is paid. Or coin return: the whole credit is refunded
# through the same devices. At most five coins per customer, 0.1 s apart, and the acceptor is
# polled every 200 ms, so its 5-event buffer never overflows. Runs until the power is cut.
pc_stream() {
    card_first=0 motor_first=0
    grep -q 'pc.aim=card' /proc/cmdline && card_first=1
    grep -q 'pc.aim=motor' /proc/cmdline && motor_first=1
    while :; do
        tries=0
        until pc_change_out || [ $tries -ge 150 ]; do tries=$((tries + 1)); sleep 0.1; done
        # About one customer in three pays by card (the first, when the cut is aimed at a card vend;
        # not the first when it is aimed at a spiral motor's turn).
        if [ $motor_first = 0 ] && { [ $card_first = 1 ] || [ $((RANDOM % 3)) = 0 ]; }; then
            card_first=0
            pc_card_customer
            sleep 0.5   # its settlement reaches the watch
            continue
        fi
        credit=$(books credit)
        if [ "${credit:-0}" -lt 1500 ]; then
            pc_coin 4; pc_coin 4
            [ $((RANDOM % 10)) -lt 7 ] && pc_coin 4
        fi
        small=$((1 + RANDOM % 2))
        while [ "$small" -gt 0 ]; do
            pick=$((RANDOM % 10))
            if [ $pick -lt 7 ]; then pc_coin 3; elif [ $pick -lt 9 ]; then pc_coin 2; else pc_coin 1; fi
            small=$((small - 1))
        done
        sleep 0.3   # a poll or two: the coins are credited before the choice
        choice=$((RANDOM % 11))
        [ $motor_first = 1 ] && choice=$((8 + RANDOM % 3))
        motor_first=0
        case $choice in
        0 | 1) echo "PC customer A1, drop"; pc_press 0 1 drop ;;
        2) echo "PC customer A1, no drop"; pc_press 0 1 nodrop ;;
        3 | 4) echo "PC customer A2"; pc_press 2 3 nodrop ;;
        5 | 6) echo "PC customer A3"; pc_press 5 6 nodrop ;;
        7) echo "PC customer coin return"; vendctl coin-return >/dev/null 2>&1 ;;
        *) echo "PC customer B$((choice - 7)) (spiral)"; pc_motor_press $((choice - 7)) ;;
        esac
        sleep 0.5   # the sale, then its payout, reach the watch
        [ $((RANDOM % 8)) = 0 ] && vendctl restock all >/dev/null 2>&1
    done
}

run_powercut() {
    make_chip
    # qemu wires the MDB UART to IRQ 5 (see run.sh); the kernel's legacy table says 4.
    hiltool uart-irq /dev/ttyS2 5 || pc_fail "cannot set the IRQ of /dev/ttyS2"
    # The witness starts before vendd: a relay moved at start-up (a vend pulsed twice) is seen.
    hiltool monitor A1="$(value 1)" A2="$(value 3)" A3="$(value 6)" &
    # So does the motor model: a motor powered at start-up, or while its cam is away, is seen.
    pc_start_motors
    mkdir -p "$STATE" /run/vendd
    mount -t ext4 /dev/vda "$STATE" || pc_fail "cannot mount /dev/vda (ext4) on $STATE"
    echo "PC mounted /dev/vda on $STATE"
    vendd run --config "$PC_CONFIG" >/tmp/vendd.log 2>&1 &
    VPID=$!
    tries=0
    until vendctl status >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [ $tries -gt 600 ] || ! kill -0 "$VPID" 2>/dev/null; then pc_fail "vendd did not start"; fi
        sleep 0.1
    done
    # "ready" is logged after the first poll: the coins still in the acceptor's buffer are credited.
    pc_wait_log "ccTalk acceptor ready" 300 || pc_fail "the acceptor on /dev/ttyS1 never became ready"
    pc_wait_log "coin changer (08h) ready" 300 || pc_fail "the MDB changer on /dev/ttyS2 never became ready"
    # The reader is initialised only after vendd has told it how every card vend it may still
    # hold ended (the settlements at start); its books are read with the others.
    pc_wait_log "cashless device #1 (10h) ready" 400 || pc_fail "the card reader at 10h never became ready"
    # A payout in flight at the cut is resolved once the changer has read its tubes (vendd waits
    # up to 30 s for them); the books are read after that.
    tries=0
    while pc_paying; do
        tries=$((tries + 1)); [ $tries -gt 400 ] && pc_fail "a payout is still in flight 40 s after the start"
        sleep 0.1
    done
    sleep 0.5
    grep -F "was in flight when vendd stopped; resolving" /tmp/vendd.log | sed 's/^/PC resolved /'
    grep -F "was in flight when vendd stopped; the payout devices report" /tmp/vendd.log | sed 's/^/PC payout-resolved /'
    grep -F ": state: " /tmp/vendd.log | sed 's/^/PC store /'
    grep -E 'CASHLESS=.*RESULT=(success|failure|refund-lost|unknown)' /tmp/vendd.log | sed 's/^/PC card-settled /'
    vendctl status | grep '^out of service' | grep -o '[A-Z][0-9]* ([a-z-]*)' | sed 's/^/PC locked /'
    echo "PC books $(vendctl --json status)"
    if ! grep -q 'pc.stream=1' /proc/cmdline; then
        kill -TERM "$VPID"; wait "$VPID"
        umount "$STATE"
        echo "PC done"
        poweroff -f
    fi
    pc_technician
    vendctl restock all >/dev/null 2>&1
    : >"$PC_PAYOUTS"
    vendctl --json watch | while IFS= read -r event; do
        echo "EVT $event"
        case "$event" in *'"kind":"payout-started"'* | *'"kind":"payout-ended"'*) echo "$event" >>"$PC_PAYOUTS" ;; esac
    done &
    # vendd's log, from its start, for the console that VENDD_POWERCUT_KEEP keeps.
    # A shell loop, not busybox sed, which holds its output in a buffer the power cut loses.
    tail -n +1 -f /tmp/vendd.log | while IFS= read -r line; do echo "LOG $line"; done &
    sleep 0.3   # the watch connects before the first customer
    echo "PC stream-start"
    pc_stream
}
