# shellcheck shell=sh disable=SC3028  # busybox ash has $RANDOM
# The power-cut test's guest side (host side: scripts/hil/powercut.py), sourced by /init after
# scenarios.sh (make_chip, pull, value, books). One boot = reconcile the previous cut, then run a
# transaction stream until the host kills qemu (the power cut). Everything the host needs is
# printed on the console as it happens, so it survives the cut:
#   OBS relay-on|relay-off ...   every relay change (hiltool monitor, started before vendd)
#   PC resolved <log line>       vendd resolving a vend that was in flight (unknown_outcome)
#   PC store <log line>          what vendd's store repaired at restore (a torn last record…)
#   PC books <status JSON>       the books once vendd has restored its state and polled the acceptor
#   PC stream-start              from here on the host may cut at any instant
#   EVT <event JSON>             `vendctl --json watch`: which vends were started
#   HIL-HOST: coin P             a coin the host inserts into cctalk-sim (ttyS1)
# The kernel command line says whether to run a stream after reconciling (pc.stream=1), or
# to stop (the last boot, which only reconciles the last cut).

PC_CONFIG=/etc/vendd/hil-coin.yaml

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

# pc_press SLOT_BUTTON RELAY DROP: one customer: press, and if the relay moves, maybe a drop.
pc_press() {
    hiltool press "$(pull "$1")"
    if hiltool wait "$(value "$2")" 1 600 >/dev/null; then
        hiltool release "$(pull "$1")"
        if [ "$3" = drop ]; then
            sleep 0.1
            hiltool press "$(pull 4)"; sleep 0.03; hiltool release "$(pull 4)"
        fi
        hiltool wait "$(value "$2")" 0 1500 >/dev/null
    else
        hiltool release "$(pull "$1")"   # not enough credit, a vend in progress, or no stock
    fi
}

# The stream: coins (mostly 500, some smaller), then a customer at a random slot: A1 with a
# drop (sale confirmed), A1 without (vend failed, credit kept), A2 or A3 (no sensor: sold).
# At most two coins per round, and a round lasts longer than a poll, so the acceptor's
# 5-event buffer never overflows. Runs until the power is cut.
pc_stream() {
    while :; do
        coins=$((RANDOM % 3))
        while [ "$coins" -gt 0 ]; do
            pick=$((RANDOM % 10))
            if [ $pick -lt 6 ]; then position=4; elif [ $pick -lt 8 ]; then position=3
            elif [ $pick -lt 9 ]; then position=2; else position=1; fi
            echo "HIL-HOST: coin $position"
            coins=$((coins - 1))
            sleep 0.1
        done
        case $((RANDOM % 4)) in
        0) pc_press 0 1 drop ;;
        1) pc_press 0 1 nodrop ;;
        2) pc_press 2 3 nodrop ;;
        3) pc_press 5 6 nodrop ;;
        esac
        [ $((RANDOM % 8)) = 0 ] && vendctl restock all >/dev/null 2>&1
    done
}

run_powercut() {
    make_chip
    # The witness starts before vendd: a relay moved at start-up (a vend pulsed twice) is seen.
    hiltool monitor A1="$(value 1)" A2="$(value 3)" A3="$(value 6)" &
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
    sleep 0.5
    grep -F "was in flight when vendd stopped" /tmp/vendd.log | sed 's/^/PC resolved /'
    grep -F ": state: " /tmp/vendd.log | sed 's/^/PC store /'
    echo "PC books $(vendctl --json status)"
    if ! grep -q 'pc.stream=1' /proc/cmdline; then
        kill -TERM "$VPID"; wait "$VPID"
        umount "$STATE"
        echo "PC done"
        poweroff -f
    fi
    vendctl restock all >/dev/null 2>&1
    vendctl --json watch | while IFS= read -r event; do echo "EVT $event"; done &
    sleep 0.3   # the watch connects before the first customer
    echo "PC stream-start"
    pc_stream
}
