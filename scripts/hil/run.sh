#!/usr/bin/env bash
# Hardware-in-the-loop: the real vendd (the unit tests' build, with the Swift runtime's libraries) on libgpiod v1
# (Debian 12's) or v2 (bookworm-backports), booted in a qemu guest whose kernel has gpio-sim.
# The guest runs scripts/hil/guest/scenarios.sh and prints "HIL <scenario>: PASS|FAIL ..." lines;
# cctalk-sim, mdb-sim and dex-handheld run here, behind the guest's /dev/ttyS1, ttyS2 and ttyS3.
#
# With --arch arm64 the guest is what a Raspberry Pi class board runs: vendd and vendctl as the
# arm64 packages build them (scripts/debian-swift-build: Debian 13's Swift, release), against
# Debian 12's libgpiod 1.6 (--libgpiod v1) or Debian 13's libgpiod 2 (--libgpiod v2) and the rest
# of that release's arm64 libraries, booted under qemu-system-aarch64's `virt` machine (Cortex-A53,
# TCG) on an arm64 build of the same kernel (scripts/hil/build-kernel.sh --arch arm64); the same
# scenarios, the simulators still on this machine. Needs root (debian-swift-build's chroot).
#
# Usage: scripts/hil/run.sh [--arch amd64|arm64] [--libgpiod v1|v2] [--bench | --bench-throttled | --bench-motors]
#                           [--scenarios "a b ..."] [--powercut N] [--source DIR]
#   --arch         the guest's architecture (default amd64); arm64 runs the scenarios and --bench
#   --bench        instead of the scenarios, measure button edge -> relay active latency for
#                  vendd (release build) and for a minimal C program on libgpiod (500 presses each)
#   --bench-throttled
#                  --bench, then vendd's state on ext4 on a virtio disk that qemu throttles to
#                  VENDD_HIL_DISK_IOPS requests a second (default 10: no fsync under 100 ms): the
#                  fsync time, then relay pulse lengths and press -> relay over 500 vends while coins
#                  arrive over ttyS1
#   --bench-motors instead of the scenarios, the spiral motors' overshoot: vendd (release build) on
#                  the 60-selection matrix, the guest's motor model (scripts/hil/guest/motor-model.c)
#                  turning 500 motors; the time from the cam's return home to vendd's release of the
#                  motor's column line, p50/p99, beside gpio-mirror's edge -> output in the same guest
#   --powercut N   instead of the scenarios, N power cuts: the state on ext4 on a virtio disk,
#                  qemu killed at random instants of a transaction stream whose change a ccTalk
#                  hopper and an MDB changer pay, slowly (scripts/hil/powercut.py)
#   --source DIR   build vendd and the simulators from the checkout in DIR (another commit's
#                  worktree, to compare), with this checkout's guest scripts and benchmark
# Exits 0 only when every scenario printed PASS (or the benchmark finished, or every cut reconciled).
#
# Environment: VENDD_HIL_BOOT_TIMEOUT (seconds, default 600, 1800 with --bench-throttled or
# --arch arm64); VENDD_DEBIAN_MIRROR (arm64: where the guest's busybox comes from, default
# http://deb.debian.org/debian, as for scripts/debian-swift-build).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$SCRIPT_DIR/lib.sh"
# shellcheck source=../lib/common.sh
source "$ROOT/scripts/lib/common.sh"

arch=amd64 api=v1 mode=scenarios scenarios="" cuts=0 source="$ROOT"
while (($#)); do
    case "$1" in
    --arch) arch="$2"; shift 2 ;;
    --libgpiod) api="$2"; shift 2 ;;
    --bench) mode=bench; shift ;;
    --bench-throttled) mode=bench-throttled; shift ;;
    --bench-motors) mode=bench-motors; shift ;;
    --scenarios) scenarios="$2"; shift 2 ;;
    --powercut) mode=powercut; cuts="$2"; shift 2 ;;
    --source) source="$(cd "$2" && pwd)"; shift 2 ;;
    *) hil_die "unknown argument '$1' (see the comment at the top of $0)" ;;
    esac
done
[[ "$api" == v1 || "$api" == v2 ]] || hil_die "--libgpiod takes v1 or v2, not '$api'"
case "$arch" in
amd64) ;;
arm64)
    # The power cuts (scripts/hil/powercut.py boots its own x86_64 qemu) and the throttled disk's
    # benchmark were made for the amd64 guest; arm64 has the scenarios and the latency benchmark.
    [[ "$mode" == scenarios || "$mode" == bench || "$mode" == bench-motors ]] ||
        hil_die "--arch arm64 runs the scenarios, --bench and --bench-motors only; --bench-throttled and --powercut need --arch amd64"
    # The libgpiod APIs as Debian ships them for arm64: 1.6 in Debian 12, 2.x in Debian 13.
    release=bookworm
    [[ "$api" == v2 ]] && release=trixie
    [[ "$(id -u)" -eq 0 ]] || hil_die "--arch arm64 builds vendd with scripts/debian-swift-build, which needs root (chroot, mount): run as root"
    ;;
*) hil_die "--arch takes amd64 or arm64, not '$arch'" ;;
esac

ensure_swift
ensure_build_dependencies
hil_ensure_packages cpio
if [[ "$arch" == amd64 ]]; then
    hil_ensure_packages qemu-system-x86 busybox-static gcc libc6-dev
else
    # The cross compiler (and its libc) builds the guest's C tools; its binutils strip and read
    # the arm64 programs; mmdebstrap fetches the arm64 busybox.
    hil_ensure_packages qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu \
        mmdebstrap debian-archive-keyring
fi
[[ "$mode" == powercut ]] && hil_ensure_packages e2fsprogs python3
[[ "$mode" == bench-throttled ]] && hil_ensure_packages e2fsprogs
kernel="$("$SCRIPT_DIR/build-kernel.sh" --arch "$arch" | tail -n 1)"

# libgpiod v2 comes from an unpacked prefix; headers, library and runtime all from there. On
# arm64 only the guest's vendd uses libgpiod: the host's vendd just prepares states in simulation.
library_path=""
if [[ "$api" == v2 && "$arch" == amd64 ]]; then
    export PKG_CONFIG_PATH
    PKG_CONFIG_PATH="$("$ROOT/scripts/fetch-libgpiod-v2" | tail -n 1)"
    library_path="$(pkg-config --variable=libdir libgpiod)"
fi

host_api="$api"
[[ "$arch" == arm64 ]] && host_api=v1
# The build `swift build` and the unit tests make (on libgpiod v1), so that after them this only
# links: the guest gets the Swift runtime's shared libraries with the others ldd lists.
scratch="$source/.build"
[[ "$host_api" == v2 ]] && scratch="$source/.build-v2"
# Scenarios check behaviour: a debug build is quicker to make. Figures come from a release build
# (on arm64 the guest's vendd always is one; the host's programs only prepare and simulate).
configuration=debug
[[ "$mode" == bench* && "$arch" == amd64 ]] && configuration=release
built_from="$(git -C "$source" describe --always --dirty)"
hil_log "building vendd, vendctl and the simulators ($configuration, libgpiod $host_api) from $source ($built_from) in $scratch"
for product in vendd vendctl cctalk-sim mdb-sim dex-handheld; do
    (cd "$source" && swift build -c "$configuration" --scratch-path "$scratch" --product "$product" >&2)
done
bin="$scratch/$configuration"

work="$(mktemp -d "${TMPDIR:-/tmp}/vendd-hil.XXXXXX")"
trap 'rm -rf "$work"; [[ -n "${prep_pid:-}" ]] && kill "$prep_pid" 2>/dev/null; true' EXIT
root="$work/root"
mkdir -p "$root"/{bin,usr/bin,etc/vendd,prepared,proc,sys,dev,tmp,run,var/lib}

if [[ "$arch" == amd64 ]]; then
    guest_bin="$bin"
    gcc -static -O2 -Wall -Wextra -Werror -o "$root/usr/bin/hiltool" "$SCRIPT_DIR/guest/hiltool.c"
    gcc -static -O2 -Wall -Wextra -Werror -o "$root/usr/bin/motor-model" "$SCRIPT_DIR/guest/motor-model.c"
    # shellcheck disable=SC2046  # pkg-config output is a list of flags
    gcc -O2 -Wall -Wextra -Werror -o "$root/usr/bin/gpio-mirror" "$SCRIPT_DIR/guest/gpio-mirror.c" \
        $(pkg-config --cflags --libs libgpiod)
else
    # The guest's vendd and vendctl: the arm64 packages' build, against this release's sysroot.
    guest_bin="$work/arm64"
    debian_swift_build="$source/scripts/debian-swift-build"
    [[ -x "$debian_swift_build" ]] || hil_die "$source has no scripts/debian-swift-build to build the arm64 vendd; use a newer checkout"
    hil_log "building the arm64 vendd and vendctl for Debian $release (libgpiod $api) with $debian_swift_build"
    "$debian_swift_build" --arch arm64 --release "$release" --output "$guest_bin" vendd vendctl >&2
    sysroot="$(cat "$guest_bin/sysroot")"
    [[ -d "$sysroot/usr/include" ]] || hil_die "the arm64 sysroot named in $guest_bin/sysroot ($sysroot) has no usr/include"
    aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror -o "$root/usr/bin/hiltool" "$SCRIPT_DIR/guest/hiltool.c"
    aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror -o "$root/usr/bin/motor-model" "$SCRIPT_DIR/guest/motor-model.c"
    # gpio-mirror links the release's libgpiod (the API vendd was built against), from the sysroot.
    # shellcheck disable=SC2046  # pkg-config output is a list of flags
    aarch64-linux-gnu-gcc --sysroot="$sysroot" -O2 -Wall -Wextra -Werror -o "$root/usr/bin/gpio-mirror" \
        "$SCRIPT_DIR/guest/gpio-mirror.c" $(PKG_CONFIG_SYSROOT_DIR="$sysroot" \
        PKG_CONFIG_LIBDIR="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig" \
        pkg-config --cflags --libs libgpiod)
fi

# prepare NAME CONFIG COINS: a state directory made by this vendd in simulation on the host:
# every slot filled, COINS coins of 1000 or 2000 (written "1000 2000 ...") inserted.
prepare() {
    local name="$1" config="$2" coins="$3" sim_config="$work/$1.yaml" socket="$work/$1.sock"
    cat "$config" - >"$sim_config" <<'COINS'
coin_acceptor:
  port: /dev/null
  protocol: bytecode
  channels: [{ channel: 1, value: "1000" }, { channel: 2, value: "2000" }]
COINS
    LD_LIBRARY_PATH="$library_path" "$bin/vendd" run --simulate --config "$sim_config" \
        --state-dir "$root/prepared/$name" --socket "$socket" 2>"$work/$name.log" &
    prep_pid=$!
    local tries=0
    until "$bin/vendctl" --socket "$socket" status >/dev/null 2>&1; do
        ((++tries < 200)) || { cat "$work/$name.log" >&2; hil_die "host vendd did not start to prepare '$name'"; }
        sleep 0.1
    done
    "$bin/vendctl" --socket "$socket" restock all >/dev/null
    for coin in $coins; do "$bin/vendctl" --socket "$socket" sim coin "$coin" >/dev/null; done
    kill -TERM "$prep_pid" && wait "$prep_pid"
    prep_pid=""
}
# motor_machine NAME PRICES CAPACITY DEBOUNCE_MS CAM_DEBOUNCE_MS DEPARTURE_MS TURN_MS: the
# 60-selection snack machine of config/examples/spiral-matrix.yaml (6 rows × 10 columns of spirals,
# one product a row; PRICES the six rows' prices, written "1200 1500 ...") wired to the guest's
# three gpio-sim chips, which scripts/hil/guest/scenarios.sh (make_motor_chips) lays out the same:
#   vendd-soc (64 lines, the SoC):  rows 1-6 on 0-5, the home line rows A-E share on 6, row F's
#                                   own home lines on 8-17, the buttons of A1..D10 on 20-59;
#   mcp23017-20 (16, an expander):  columns 1-10 on 0-9, the buttons of E1..E6 on 10-15;
#   mcp23017-21 (16, an expander):  the buttons of E7..E10 on 0-3, of F1..F10 on 4-13.
# The home switches are active-low with no bias requested (as-is: the board's pull-up), so the
# level the guest's motor model gives them through gpio-sim's `pull` stays when vendd requests
# them (a bias request would reset it).
motor_machine() {
    local name="$1" capacity="$3" debounce="$4" cam_debounce="$5" departure="$6" turn="$7"
    local -a prices products=(crisps choc nuts bar gum cookie)
    read -r -a prices <<<"$2"
    local row column index letter button letters=ABCDEF
    cat <<HEAD
# Generated by scripts/hil/run.sh (motor_machine): config/examples/spiral-matrix.yaml's machine on
# the HIL guest's three gpio-sim chips.
machine:
  name: "$name"
  currency: { code: KRW, minor_digits: 0, format: "{amount}원" }
  maximum_credit: "20000"
  failed_vend: keep-credit
  vend_timeout_ms: $((turn + 3000))

gpio:
  chip: vendd-soc
  debounce_ms: $debounce

state:
  directory: /var/lib/vendd

control:
  socket: /run/vendd/control.sock

products:
HEAD
    for row in 0 1 2 3 4 5; do
        echo "  - { id: ${products[row]}, name: \"${products[row]^}\", category: [snack, ${products[row]}] }"
    done
    echo
    echo "motors:"
    echo "  rows:"
    for row in 0 1 2 3 4 5; do echo "    - { line: $row }"; done
    echo "  columns:"
    for column in 0 1 2 3 4 5 6 7 8 9; do echo "    - { line: $column, chip: mcp23017-20 }"; done
    cat <<MOTORS
  home: { line: 6, active_low: true }
  departure_ms: $departure
  turn_ms: $turn
  cam_debounce_ms: $cam_debounce

slots:
MOTORS
    for row in 1 2 3 4 5 6; do
        letter="${letters:row-1:1}"
        for column in 1 2 3 4 5 6 7 8 9 10; do
            index=$(((row - 1) * 10 + column - 1))
            if ((index < 40)); then button="line: $((20 + index))"
            elif ((index < 46)); then button="line: $((10 + index - 40)), chip: mcp23017-20"
            else button="line: $((index - 46)), chip: mcp23017-21"
            fi
            cat <<SLOT
  - id: $letter$column
    product: ${products[row - 1]}
    price: "${prices[row - 1]}"
    capacity: $capacity
    button: { $button, active_low: true, bias: pull-up }
    drive: matrix
    motor: { row: $row, column: $column }
SLOT
            ((row == 6)) && echo "    home: { line: $((7 + column)), active_low: true }"
        done
    done
}
motor_machine "HIL snack 60" "1200 1500 1000 900 600 1100" 8 20 20 1000 5000 >"$root/etc/vendd/hil-motors.yaml"
# The overshoot benchmark's: every selection 10원 and 10 deep (500 turns fit), no debounce on the
# buttons or the cams (the figure is vendd's own path, as gpio-mirror has no debounce either),
# the shortest turn limits the file allows.
motor_machine "HIL motor bench" "10 10 10 10 10 10" 10 0 0 300 1000 >"$root/etc/vendd/bench-motors.yaml"
prepare credit "$SCRIPT_DIR/hil.yaml" "1000 2000 2000"
prepare motors "$root/etc/vendd/hil-motors.yaml" "1000 2000 2000"
prepare nocredit "$SCRIPT_DIR/hil.yaml" ""
prepare bench "$SCRIPT_DIR/bench.yaml" "$(printf '2000 %.0s' {1..10})"
# Half the maximum credit: 500 vends and the coins that arrive meanwhile stay within it.
[[ "$mode" == bench-motors ]] && prepare bench-motors "$root/etc/vendd/bench-motors.yaml" "$(printf '2000 %.0s' {1..10})"
[[ "$mode" == bench-throttled ]] && prepare bench-disk "$SCRIPT_DIR/bench.yaml" "$(printf '2000 %.0s' {1..5})"

# copy_arm64_libraries PROGRAM...: the programs' ELF interpreter and every shared library they
# load, transitively, from the arm64 sysroot into the guest (ldd cannot run arm64 programs here,
# so the DT_NEEDED entries are read and resolved as the loader would, in the multiarch
# directories, where the guest's loader finds them too).
copy_arm64_libraries() {
    local pending=("$@") seen=" " program library interpreter found directory
    while ((${#pending[@]})); do
        program="${pending[0]}"
        pending=("${pending[@]:1}")
        interpreter="$(aarch64-linux-gnu-readelf -l "$program" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')"
        if [[ -n "$interpreter" && ! -e "$root$interpreter" ]]; then
            [[ -e "$sysroot$interpreter" ]] || hil_die "$program wants the loader $interpreter, which the arm64 sysroot $sysroot lacks"
            mkdir -p "$root$(dirname "$interpreter")"
            cp -L "$sysroot$interpreter" "$root$interpreter"
        fi
        while read -r library; do
            [[ "$seen" == *" $library "* ]] && continue
            seen+="$library "
            found=""
            for directory in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu lib usr/lib; do
                [[ -e "$sysroot/$directory/$library" ]] && { found="$sysroot/$directory/$library"; break; }
            done
            [[ -n "$found" ]] || hil_die "$program needs $library, which is in no library directory of the arm64 sysroot $sysroot (scripts/debian-swift-build makes it from the build dependencies: is a package missing there?)"
            [[ -e "$root/lib/aarch64-linux-gnu/$library" ]] || cp -L "$found" "$root/lib/aarch64-linux-gnu/$library"
            pending+=("$root/lib/aarch64-linux-gnu/$library")
        done < <(aarch64-linux-gnu-readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
    done
}

# The guest's files: the binaries, every shared library they load, busybox, the test files.
for program in vendd vendctl; do
    cp "$guest_bin/$program" "$root/usr/bin/$program"
done
if [[ "$arch" == amd64 ]]; then
    cp /bin/busybox "$root/bin/busybox"
    strip "$root/usr/bin/vendd" "$root/usr/bin/vendctl"
    for program in "$root/usr/bin/vendd" "$root/usr/bin/vendctl" "$root/usr/bin/gpio-mirror"; do
        LD_LIBRARY_PATH="$library_path" ldd "$program" | grep -o '/[^ ]*' | while read -r library; do
            mkdir -p "$root$(dirname "$library")"
            cp -L "$library" "$root$library"
        done
    done
    if [[ -n "$library_path" ]]; then
        # The guest's loader looks in the standard directories; v2's libgpiod.so.3 joins them there.
        cp -L "$library_path"/libgpiod.so.3 "$root/lib/x86_64-linux-gnu/"
    fi
else
    # Debian's static busybox for arm64, unpacked from its package (this machine's is x86_64).
    mmdebstrap --quiet --variant=extract --arch=arm64 --include=busybox-static "$release" "$work/busybox" \
        "${VENDD_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2 ||
        hil_die "cannot fetch Debian $release's arm64 busybox-static (mirror: ${VENDD_DEBIAN_MIRROR:-http://deb.debian.org/debian}; set VENDD_DEBIAN_MIRROR for another)"
    # Debian 12's package has it in /bin, Debian 13's (merged /usr) in /usr/bin.
    for busybox in "$work/busybox/bin/busybox" "$work/busybox/usr/bin/busybox" ""; do
        [[ -f "$busybox" ]] && break
    done
    [[ -n "$busybox" ]] || hil_die "Debian $release's busybox-static for arm64 has no busybox in /bin or /usr/bin (unpacked in $work/busybox)"
    cp "$busybox" "$root/bin/busybox"
    aarch64-linux-gnu-strip "$root/usr/bin/vendd" "$root/usr/bin/vendctl"
    mkdir -p "$root/lib/aarch64-linux-gnu"
    copy_arm64_libraries "$root/usr/bin/vendd" "$root/usr/bin/vendctl" "$root/usr/bin/gpio-mirror"
fi
cp "$SCRIPT_DIR/hil.yaml" "$SCRIPT_DIR/bench.yaml" "$root/etc/vendd/"
# The same machine with a refrigerated zone read from an LM75 through the kernel's lm75 hwmon
# driver, on i2c-stub (the module built with the kernel; the guest writes the temperature register
# with hiltool lm75-set): A2's water is perishable in it, A3's is not. Windows and trip time short.
# Its compressor relay is line 8 of the gpio-sim chip (free in hil.yaml), with a 3 s minimum run.
cp "$(dirname "$kernel")/i2c-stub.ko" "$root/i2c-stub.ko"
{
    sed '/relay: { line: 3,/a\    zone: chilled\n    perishable: true' "$SCRIPT_DIR/hil.yaml"
    cat <<'ZONES'

zones:
  - id: chilled
    kind: cold
    sensors: [{ hwmon: lm75 }]
    set_point: 3
    read_interval_s: 1
    start_delay_s: 0
    min_on_s: 3
    min_off_s: 2
    relay: { line: 8 }
    health: { limit: 5, trip_s: 2, recovery_after_door_s: 1, recovery_after_power_on_s: 1, sensor_grace_s: 3 }
ZONES
} >"$root/etc/vendd/hil-health.yaml"
grep -q 'perishable: true' "$root/etc/vendd/hil-health.yaml" || hil_die "hil-health.yaml: slot A2 was not put in the chilled zone (hil.yaml changed?)"
# The latency benchmark's machine with a cold zone read every second from a slow hwmon input the
# guest makes (bench_latency_zone), its compressor relay on line 8.
{
    cat "$SCRIPT_DIR/bench.yaml"
    cat <<'ZONES'

zones:
  - id: chilled
    kind: cold
    sensors: [{ hwmon: slowtemp }]
    set_point: 4
    read_interval_s: 1
    start_delay_s: 0
    relay: { line: 8 }
ZONES
} >"$root/etc/vendd/bench-zone.yaml"
# The same machines with a ccTalk acceptor on the second UART; positions as cctalk-sim's coin ids.
cctalk_acceptor='coin_acceptor:
  port: /dev/ttyS1
  protocol: cctalk
  channels:
    - { channel: 1, value: "10" }
    - { channel: 2, value: "50" }
    - { channel: 3, value: "100" }
    - { channel: 4, value: "500" }'
printf '%s\n' "$(cat "$SCRIPT_DIR/hil.yaml")" "$cctalk_acceptor" >"$root/etc/vendd/hil-coin.yaml"
printf '%s\n' "$(cat "$SCRIPT_DIR/bench.yaml")" "$cctalk_acceptor" >"$root/etc/vendd/bench-coin.yaml"
# The same machine with an MDB interface on the third UART (mdb-sim on the host), its changer
# paying change; coin and bill types as mdb-sim's.
{
    sed 's/^machine:$/machine:\n  payout: change/' "$SCRIPT_DIR/hil.yaml"
    cat <<'MDB'
mdb:
  port: /dev/ttyS2
  currency_code: 410
  changer:
    coins:
      - { type: 0, value: 10 }
      - { type: 1, value: 50 }
      - { type: 2, value: 100 }
      - { type: 3, value: 500 }
  bill_validator:
    bills:
      - { type: 0, value: 1000 }
      - { type: 1, value: 5000 }
      - { type: 2, value: 10000 }
      - { type: 3, value: 50000 }
MDB
} >"$root/etc/vendd/hil-mdb.yaml"
# The same machine with a card reader at 10h (mdb-sim --cashless 1) on that interface and no cash
# device: card money only, so the changer's and validator's counts stay the MDB scenario's.
{
    cat "$SCRIPT_DIR/hil.yaml"
    cat <<'CARD'
mdb:
  port: /dev/ttyS2
  currency_code: 410
  cashless:
    - { reader: 1 }
CARD
} >"$root/etc/vendd/hil-card.yaml"
# The same machine with its DEX jack on the fourth UART (dex-handheld on the host): DEX/UCS at
# 9600 8N1, and DDCMP at 2400 8N1 as a European machine's optical port.
dex_port='dex:
  port: /dev/ttyS3
  communication_id: VDD0000042
  asset: HIL-GUEST'
printf '%s\n' "$(cat "$SCRIPT_DIR/hil.yaml")" "$dex_port" >"$root/etc/vendd/hil-dex.yaml"
printf '%s\n' "$(cat "$SCRIPT_DIR/hil.yaml")" "$dex_port" "  protocol: ddcmp" >"$root/etc/vendd/hil-ddcmp.yaml"
# The power cuts' machine: the ccTalk acceptor and a hopper of 500s on its bus (cctalk-sim
# --hopper 3:…), and an MDB changer on the third UART (mdb-sim, no bill validator), paying change
# after every sale: the hopper the 500s of it, the changer the rest; and a card reader at 10h on
# the changer's bus (mdb-sim --cashless 1). And three spiral motors of a one-row matrix on a
# second gpio-sim chip, "pc-motors" (scripts/hil/guest/powercut.sh lays it out the same): row 1
# on line 0, columns 1-3 on 1-3, the home line B1 and B2 share on 4, B3's own home line on 5,
# the buttons of B1-B3 on 6-8; the guest's motor model turns them, so that cuts land mid-turn.
pc_motor_slots="$work/pc-motor-slots.yaml"
for column in 1 2 3; do
    cat <<SLOT
  - id: B$column
    product: water
    price: "1000"
    capacity: 20
    button: { line: $((5 + column)), chip: pc-motors, active_low: true, bias: pull-up }
    drive: matrix
    motor: { row: 1, column: $column }
SLOT
done >"$pc_motor_slots"
echo "    home: { line: 5, chip: pc-motors, active_low: true }" >>"$pc_motor_slots"
{
    sed -e 's/^machine:$/machine:\n  payout: change/' -e "/^slots:\$/r $pc_motor_slots" "$root/etc/vendd/hil-coin.yaml"
    cat <<'MOTORS'
motors:
  rows:
    - { line: 0, chip: pc-motors }
  columns:
    - { line: 1, chip: pc-motors }
    - { line: 2, chip: pc-motors }
    - { line: 3, chip: pc-motors }
  home: { line: 4, chip: pc-motors, active_low: true }
  departure_ms: 600
  turn_ms: 2500
  cam_debounce_ms: 20
MOTORS
    cat <<'PAYOUT'
payout_devices:
  - { type: cctalk-hopper, coin: 500, address: 3 }
mdb:
  port: /dev/ttyS2
  currency_code: 410
  changer:
    coins:
      - { type: 0, value: 10 }
      - { type: 1, value: 50 }
      - { type: 2, value: 100 }
      - { type: 3, value: 500 }
  cashless:
    - { reader: 1 }
PAYOUT
} >"$root/etc/vendd/hil-powercut.yaml"
cp "$SCRIPT_DIR/guest/scenarios.sh" "$SCRIPT_DIR/guest/powercut.sh" "$root/"
# arm64: the ccTalk, MDB and DEX UARTs are ports 1, 2 and 3 of qemu's pci-serial-4x (PCI
# 1b36:0004, the `virt` machine has no ISA bus); 8250_pci registers a card's ports in order as the
# first free ttyS lines, and no other 8250 exists there, so they are /dev/ttyS1, ttyS2 and ttyS3
# as on amd64 (port 0, ttyS0, is left unconnected). The configuration files name those devices,
# as a board's do.
arm64_uart_pci_id=1b36:0004
# What the guest's scenarios must know of its machine (scripts/hil/guest/scenarios.sh): on amd64
# the MDB and DEX UARTs' IRQs, which qemu's third and fourth ISA UARTs have as their own; on arm64
# the PCI card whose ports ttyS1, ttyS2 and ttyS3 must be (the qemu command below), checked
# before anything runs.
if [[ "$arch" == amd64 ]]; then
    guest_machine="HIL_MDB_UART_IRQ=5 HIL_DEX_UART_IRQ=7"
else
    guest_machine="HIL_UART_PCI_ID=$arm64_uart_pci_id"
fi
cat >"$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t configfs configfs /sys/kernel/config
mount -t tmpfs tmpfs /run
exec </dev/console >/dev/console 2>&1
echo "guest: \$(uname -m), kernel \$(uname -r), vendd built against libgpiod $api"
HIL_SCENARIOS="$scenarios"
HIL_LIBGPIOD_API=$api
$guest_machine
. /scenarios.sh
case "$mode" in
bench) run_bench ;;
bench-throttled) run_bench_throttled ;;
bench-motors) run_bench_motors ;;
powercut) . /powercut.sh; run_powercut ;;
*) run_scenarios ;;
esac
poweroff -f
INIT
chmod 755 "$root/init"
(cd "$root" && find . | cpio --quiet -o -H newc -R 0:0) >"$work/initramfs.cpio"
hil_log "initramfs: $(du -m "$work/initramfs.cpio" | cut -f1) MiB; booting $kernel"

if [[ "$mode" == powercut ]]; then
    # One boot per cut, each with its own qemu; the script runs cctalk-sim (acceptor and hopper)
    # and mdb-sim (changer) for the whole series.
    status=0
    python3 "$SCRIPT_DIR/powercut.py" --cuts "$cuts" --kernel "$kernel" --initrd "$work/initramfs.cpio" \
        --simulator "$bin/cctalk-sim" --mdb-simulator "$bin/mdb-sim" --state "$root/prepared/nocredit" \
        --work "$work" || status=$?
    exit "$status"
fi

# start_simulator NAME FD PROGRAM [ARG...]: PROGRAM listening on $work/NAME.sock, where qemu
# connects a guest UART, printing to $work/NAME.out; its commands go to file descriptor FD (a
# fifo to its stdin). Closing FD ends it.
simulator_pids=()
start_simulator() {
    local name="$1" fd="$2"
    shift 2
    mkfifo "$work/$name.in"
    "$@" --socket "$work/$name.sock" <"$work/$name.in" >"$work/$name.out" 2>&1 &
    simulator_pids+=("$!")
    eval "exec $fd>\"\$work/\$name.in\""
    for _ in $(seq 100); do [[ -S "$work/$name.sock" ]] && break; sleep 0.1; done
    [[ -S "$work/$name.sock" ]] || hil_die "${1##*/} did not listen on $work/$name.sock: $(cat "$work/$name.out")"
}
# The throttled benchmark's state disk: ext4 holding the prepared state. qemu delays its reads and
# writes to the rate given; an fsync waits for several (the data, ext4's journal and commit).
disk=() boot_timeout=600
# TCG emulates an aarch64 CPU at a fraction of an x86_64 one's speed.
[[ "$arch" == arm64 ]] && boot_timeout=1800
if [[ "$mode" == bench-throttled ]]; then
    boot_timeout=1800
    mkfs.ext4 -q -F -L vendd-state -d "$root/prepared/bench-disk" "$work/state.ext4" 32M
    disk=(-drive "file=$work/state.ext4,format=raw,if=virtio,throttling.iops-total=${VENDD_HIL_DISK_IOPS:-10}")
fi

# The ccTalk acceptor on ttyS1; the MDB interface on ttyS2, with coins in every tube to pay change
# and a card reader at 10h; the route driver's handheld on ttyS3 (the DEX jack), keeping every
# audit it reads in $work/dex-reads.
start_simulator coin 7 "$bin/cctalk-sim"
start_simulator mdb 8 "$bin/mdb-sim" --tubes 10,10,10,10 --cashless 1
mkdir "$work/dex-reads"
start_simulator dex 9 "$bin/dex-handheld" --save "$work/dex-reads"
dex_pid="${simulator_pids[-1]}"

# forward_host_requests CONSOLE: the guest's console, line by line as it comes (no buffering
# filter in between: the guest waits for its requests), to CONSOLE and stderr; "HIL-HOST:
# <command>" lines also to cctalk-sim, "HIL-MDB: <command>" lines to mdb-sim, "HIL-DEX:
# <command>" lines to dex-handheld.
forward_host_requests() {
    local line
    while IFS= read -r line; do
        line="${line//$'\r'/}"
        printf '%s\n' "$line" >>"$1"
        printf '%s\n' "$line" >&2
        case "$line" in
        "HIL-HOST: "*) printf '%s\n' "${line#HIL-HOST: }" >&7 ;;
        "HIL-MDB: "*) printf '%s\n' "${line#HIL-MDB: }" >&8 ;;
        "HIL-DEX: "*) printf '%s\n' "${line#HIL-DEX: }" >&9 ;;
        esac
    done
    return 0
}

console="$work/console.log"
# Two vCPUs: the test hand spins on a sysfs file, and must not take the daemon's CPU away. qemu
# connects the MDB UART to mdb-sim again (reconnect=1) after the simulator's `unplug`/`replug`,
# and the DEX UART to dex-handheld after a pulled cable or a handheld swapped.
if [[ "$arch" == amd64 ]]; then
    # The MDB UART is the legacy COM3 (ttyS2) on IRQ 5 of its own (the guest tells its kernel
    # so): COM3's usual IRQ 4 is the console's, and qemu does not OR two devices' levels on one
    # ISA line, so one UART's interrupt could hide the other's. The DEX UART is COM4 (ttyS3) on
    # IRQ 7 for the same reason (COM4's usual IRQ 3 is the ccTalk UART's); IRQ 7 is the parallel
    # port's, which this machine goes without.
    qemu=(qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -append "console=ttyS0 quiet panic=-1"
        -serial mon:stdio -serial "unix:$work/coin.sock"
        -chardev "socket,id=mdb,path=$work/mdb.sock,reconnect=1" -device "isa-serial,chardev=mdb,index=2,irq=5"
        -chardev "socket,id=dex,path=$work/dex.sock,reconnect=1" -device "isa-serial,chardev=dex,index=3,irq=7" -parallel none)
else
    # A Cortex-A53 (Raspberry Pi 3 and Zero 2's core, the ARMv8.0 baseline Debian's arm64 code
    # is built for), the console on the PL011 (ttyAMA0); the payment UARTs and the DEX jack on
    # the PCI card whose ports 1, 2 and 3 are ttyS1, ttyS2 and ttyS3 (arm64_uart_pci_id above).
    qemu=(qemu-system-aarch64 -M virt -cpu cortex-a53 -accel tcg -m 1024 -smp 2
        -append "console=ttyAMA0 quiet panic=-1" -serial mon:stdio
        -chardev "socket,id=coin,path=$work/coin.sock"
        -chardev "socket,id=mdb,path=$work/mdb.sock,reconnect=1"
        -chardev "socket,id=dex,path=$work/dex.sock,reconnect=1"
        -device "pci-serial-4x,chardev2=coin,chardev3=mdb,chardev4=dex")
fi
set +e
timeout "${VENDD_HIL_BOOT_TIMEOUT:-$boot_timeout}" "${qemu[@]}" -kernel "$kernel" -initrd "$work/initramfs.cpio" \
    -nographic -no-reboot "${disk[@]}" </dev/null 2>&1 | forward_host_requests "$console"
qemu_status=${PIPESTATUS[0]}
set -e
# End of their input: the simulators finish the commands they were sent, then exit;
# dex-handheld with 1 if a session did not end as the guest asked.
exec 7>&- 8>&- 9>&-
dex_status=0
wait "$dex_pid" || dex_status=$?
wait "${simulator_pids[@]}" || true
if grep -q '^HIL coin_over_ttyS1: FAIL' "$console"; then
    echo "--- cctalk-sim output ---" >&2
    tail -n 20 "$work/coin.out" >&2
fi
if grep -qE '^HIL (mdb|card)_over_ttyS2: FAIL' "$console"; then
    echo "--- mdb-sim output ---" >&2
    tail -n 20 "$work/mdb.out" >&2
fi
if grep -q '^HIL dex_over_ttyS3: FAIL' "$console"; then
    echo "--- dex-handheld output ---" >&2
    tail -n 20 "$work/dex.out" >&2
fi

echo "HIL summary ($arch, libgpiod $api, $mode, vendd from $built_from):"
grep -E '^(HIL [A-Za-z0-9_]+: |BENCH )' "$console" || true
grep -q '^HIL done' "$console" || hil_die "the guest did not finish (qemu exit $qemu_status); console above"
# mdb-sim's own count of the money it took and paid must agree with the books vendd showed the
# guest (the PASS lines, summed: each run starts from fresh books): the simulator's last
# `status`, asked for by the guest at the end of the scenario.
mdb_runs=0 coins=0 bills=0 change=0
while IFS= read -r line; do
    [[ "$line" =~ books:\ coins\ in\ ([0-9]+),\ bills\ in\ ([0-9]+),\ change\ ([0-9]+) ]] ||
        hil_die "no books in the scenario's PASS line: $line"
    mdb_runs=$((mdb_runs + 1)) coins=$((coins + BASH_REMATCH[1]))
    bills=$((bills + BASH_REMATCH[2])) change=$((change + BASH_REMATCH[3]))
done < <(grep '^HIL mdb_over_ttyS2: PASS' "$console")
if ((mdb_runs > 0)); then
    simulator_books="$(grep '^changer: tubes' "$work/mdb.out" | tail -n 1)"
    [[ "$simulator_books" == *"taken $coins, paid $change,"*"stacked $bills,"* ]] ||
        hil_die "mdb-sim's own count disagrees with vendd's books in the guest (coins in $coins, bills in $bills, change $change): ${simulator_books:-no status line in $work/mdb.out}"
    echo "mdb-sim agrees: ${simulator_books%%; master mode*}"
fi
# The card reader's own books (what it charged, less what it refunded) must equal the card money
# in vendd's books (card sales, and refunds the reader could not make), summed the same way.
card_runs=0 card_money=0
while IFS= read -r line; do
    [[ "$line" =~ card\ books:\ sales\ ([0-9]+),\ refunds\ lost\ ([0-9]+) ]] ||
        hil_die "no card books in the scenario's PASS line: $line"
    card_runs=$((card_runs + 1)) card_money=$((card_money + BASH_REMATCH[1] + BASH_REMATCH[2]))
done < <(grep '^HIL card_over_ttyS2: PASS' "$console")
if ((card_runs > 0)); then
    reader_books="$(grep '^changer: tubes' "$work/mdb.out" | tail -n 1 | grep -o 'reader 1: [^;]*')" || true
    [[ "$reader_books" =~ charged\ \[([0-9, ]*)\],\ refunded\ \[([0-9, ]*)\] ]] ||
        hil_die "mdb-sim's status does not show reader 1's books: ${reader_books:-no status line in $work/mdb.out}"
    charged="${BASH_REMATCH[1]}" refunded="${BASH_REMATCH[2]}"
    net=$(( ${charged//,/+}+0 - (${refunded//,/+}+0) ))
    ((net == card_money)) ||
        hil_die "the card reader's own books disagree with vendd's in the guest (card sales + refunds lost $card_money): $reader_books (net $net)"
    echo "mdb-sim's card reader agrees: $reader_books (net $net)"
fi
# The handheld's side of the DEX reads: every session ended as the guest asked (dex-handheld's
# exit status), and each run's two whole reads (DEX/UCS, DDCMP) passed the handheld's own checks
# (block CRCs, G85, SE) and were, byte for byte, the audit `vendctl audit --dex` wrote in the
# guest just before, with the sales totals the PASS line names.
dex_runs=0 dex_reads=()
while IFS= read -r line; do
    [[ "$line" =~ reads:\ (VA1\*[0-9*]+),\ (VA1\*[0-9*]+)$ ]] || hil_die "no reads in the scenario's PASS line: $line"
    dex_runs=$((dex_runs + 1)) dex_reads+=("DEX/UCS read: audit" "${BASH_REMATCH[1]}" "DDCMP read: audit" "${BASH_REMATCH[2]}")
done < <(grep '^HIL dex_over_ttyS3: PASS' "$console")
if ((dex_runs > 0)); then
    ((dex_status == 0)) || hil_die "dex-handheld exited $dex_status (a session did not end as asked): $(grep UNEXPECTED "$work/dex.out")"
    mapfile -t heard < <(grep -E '^session [0-9]+, (DEX/UCS|DDCMP) read: audit' "$work/dex.out")
    ((${#heard[@]} == 2 * dex_runs)) || hil_die "dex-handheld read ${#heard[@]} whole audits, $((2 * dex_runs)) expected: $(cat "$work/dex.out")"
    for index in "${!heard[@]}"; do
        kind="${dex_reads[2 * index]}" va1="${dex_reads[2 * index + 1]}"
        [[ "${heard[index]}" == *"$kind "*"G85 and SE check, equal to the "*" expected segments; saved as "*"; $va1" ]] ||
            hil_die "the handheld's read $((index + 1)) is not the guest's audit ($kind, $va1): ${heard[index]}"
    done
    echo "dex-handheld agrees: ${#heard[@]} whole reads equal to vendd's own audit, $(grep -c 'as asked' "$work/dex.out") pulled cable(s) as asked, $(grep -c 'configuration.*: configured' "$work/dex.out") price download(s):"
    grep '^session ' "$work/dex.out" | sed "s|$work/||; s/^/  /"
fi
if grep -q '^HIL [A-Za-z0-9_]*: FAIL' "$console"; then
    hil_die "$(grep -c '^HIL [A-Za-z0-9_]*: FAIL' "$console") scenario(s) failed"
fi
if [[ "$mode" == scenarios ]]; then
    passed="$(grep -c '^HIL [A-Za-z0-9_]*: PASS' "$console")"
    expected="$(sed -n 's/^HIL planned: //p' "$console")"
    ((passed == expected)) || hil_die "$passed scenario(s) passed, $expected expected"
    echo "all $passed HIL scenarios passed ($arch, libgpiod $api) in $SECONDS s"
fi
