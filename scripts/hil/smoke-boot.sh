#!/usr/bin/env bash
# Smoke test for the HIL guest kernel: boot it under qemu (TCG) with a tiny
# busybox initramfs whose /init creates a gpio-sim chip through configfs,
# checks its character device and sysfs pull/value files, checks that the
# second UART (/dev/ttyS1) opens, that an LM75 on i2c-stub appears as an hwmon
# device whose temperature follows its register (hiltool lm75-set), prints a
# marker line and powers off.
#
# Usage:   scripts/hil/smoke-boot.sh [path/to/bzImage]
#
# Without an argument the kernel comes from build-kernel.sh (cached build).
# Exits 0 only if the marker was seen and the guest powered off by itself.
# The guest console goes to stderr, each line prefixed with the seconds since
# qemu started; the last line of stdout is a one-line summary.
#
# Environment:
#   VENDD_HIL_BOOT_TIMEOUT  seconds before qemu is killed (default 120)
#   VENDD_HIL_KERNEL_ARGS   kernel command line (default: quiet console)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR
readonly BOOT_TIMEOUT="${VENDD_HIL_BOOT_TIMEOUT:-120}"
# panic=-1 reboots at once on a panic, and -no-reboot turns that into a qemu
# exit, so a broken guest fails fast instead of hanging until the timeout.
readonly KERNEL_ARGS="${VENDD_HIL_KERNEL_ARGS:-console=ttyS0 quiet panic=-1}"
readonly MARKER="VENDD-HIL-SMOKE: OK"
readonly PKGS=(qemu-system-x86 busybox-static cpio gzip)

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$SCRIPT_DIR/lib.sh"

# write_init FILE : the guest's PID 1. Any failed check prints a
# "VENDD-HIL-SMOKE: FAIL <why>" line instead of the marker.
write_init() {
    cat >"$1" <<'INIT'
#!/bin/busybox sh
# PID 1 of the smoke-test guest.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# The kernel does not automount devtmpfs on an initramfs root.
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t configfs configfs /sys/kernel/config

fail() {
    echo "VENDD-HIL-SMOKE: FAIL $*"
    poweroff -f
    exit 1   # only if poweroff failed: the panic then ends qemu
}

echo "kernel: $(uname -r)"

# gpio-sim: one chip, one bank of 8 lines (layout: the kernel's gpio-sim.rst).
cfg=/sys/kernel/config/gpio-sim/chip0
[ -d /sys/kernel/config/gpio-sim ] || fail "no gpio-sim in configfs"
mkdir "$cfg" "$cfg/bank0" || fail "cannot create the gpio-sim chip"
echo 8 >"$cfg/bank0/num_lines"
echo vendd-smoke >"$cfg/bank0/label"
echo 1 >"$cfg/live" || fail "cannot bring the gpio-sim chip live"
dev=$(cat "$cfg/dev_name")
chip=$(cat "$cfg/bank0/chip_name")
echo "gpio-sim: device $dev, chip $chip, label $(cat "$cfg/bank0/label")"
echo "gpio devices: $(ls /sys/bus/gpio/devices | tr '\n' ' ')"
ls -l /dev/gpiochip*
[ -c "/dev/$chip" ] || fail "/dev/$chip is not a character device"
# Drive an input from "outside" and read it back, as the HIL tests will.
sim=/sys/devices/platform/$dev/$chip/sim_gpio3
echo pull-up >"$sim/pull" && [ "$(cat "$sim/value")" = 1 ] || fail "pull-up not seen on $sim"
echo pull-down >"$sim/pull" && [ "$(cat "$sim/value")" = 0 ] || fail "pull-down not seen on $sim"
echo "gpio-sim: $sim pull-up -> 1, pull-down -> 0"

# Second UART: qemu's second -serial. It must be a real 16550A that opens.
ls -l /dev/ttyS*
grep '^[01]:' /proc/tty/driver/serial
[ -c /dev/ttyS1 ] || fail "/dev/ttyS1 missing"
grep -q '^1: uart:16550A' /proc/tty/driver/serial || fail "ttyS1 is not a 16550A"
stty -F /dev/ttyS1 9600 raw -echo || fail "cannot open and configure /dev/ttyS1"
echo "ttyS1: $(stty -F /dev/ttyS1 speed) baud, opened"

# An LM75 at 0x48 on i2c-stub, bound to the kernel's lm75 driver: found by its hwmon name.
insmod /i2c-stub.ko chip_addr=0x48 || fail "cannot load i2c-stub"
echo lm75 0x48 >/sys/bus/i2c/devices/i2c-0/new_device || fail "cannot instantiate lm75 on i2c-0"
hwmon=""
for dir in /sys/class/hwmon/hwmon*; do [ "$(cat "$dir/name")" = lm75 ] && hwmon=$dir; done
[ -n "$hwmon" ] || fail "no hwmon device named lm75"
for milli in 4500 -2000 25000; do
    hiltool lm75-set /dev/i2c-0 0x48 "$milli" || fail "cannot set the LM75 register"
    [ "$(cat "$hwmon/temp1_input")" = "$milli" ] || fail "$hwmon/temp1_input is $(cat "$hwmon/temp1_input"), not $milli"
done
echo "lm75: $hwmon follows its register (4.5, -2, 25 °C)"

echo "VENDD-HIL-SMOKE: OK uptime $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
INIT
    chmod 755 "$1"
}

# build_initramfs DIR OUT KERNEL : busybox, hiltool, the kernel's i2c-stub.ko and /init packed
# as a gzip'd newc cpio.
build_initramfs() {
    local root="$1/root" out="$2" kernel="$3"
    mkdir -p "$root/bin"
    cp /bin/busybox "$root/bin/busybox"
    gcc -static -O2 -Wall -Wextra -Werror -o "$root/bin/hiltool" "$SCRIPT_DIR/guest/hiltool.c"
    cp "$(dirname "$kernel")/i2c-stub.ko" "$root/i2c-stub.ko"
    write_init "$root/init"
    (cd "$root" && find . | cpio --quiet -o -H newc -R 0:0) | gzip -9 >"$out"
}

# now_us : wall clock in microseconds (bash 5's EPOCHREALTIME, no forks).
now_us() {
    local t="${EPOCHREALTIME/[.,]/}"
    printf '%s' "$((10#$t))"
}

# stamp START_US : prefix each input line with seconds since START_US and
# drop the serial console's carriage returns.
stamp() {
    local start="$1" line us
    while IFS= read -r line || [[ -n "$line" ]]; do
        us=$(($(now_us) - start))
        printf '[%3d.%02d] %s\n' $((us / 1000000)) $((us % 1000000 / 10000)) "${line//$'\r'/}"
    done
}

main() {
    local kernel="${1:-}"
    if [[ -z "$kernel" ]]; then
        kernel="$("$SCRIPT_DIR/build-kernel.sh" | tail -n 1)"
    fi
    [[ -f "$kernel" ]] || hil_die "no kernel at '$kernel'"
    hil_ensure_packages "${PKGS[@]}"

    local tmp
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/vendd-hil-smoke.XXXXXX")"
    # shellcheck disable=SC2064  # expand $tmp now: it is local to main
    trap "rm -rf '$tmp'" EXIT
    build_initramfs "$tmp" "$tmp/initramfs.gz" "$kernel"

    hil_log "booting $kernel (timeout ${BOOT_TIMEOUT} s)"
    local console="$tmp/console.log" start statuses
    start="$(now_us)"
    # The second -serial is ttyS1 in the guest; null is enough to have the UART.
    set +e
    timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -m 256 \
        -kernel "$kernel" -initrd "$tmp/initramfs.gz" -append "$KERNEL_ARGS" \
        -nographic -no-reboot -serial mon:stdio -serial null \
        </dev/null 2>&1 | stamp "$start" | tee "$console" >&2
    statuses=("${PIPESTATUS[@]}")
    set -e
    local qemu_status="${statuses[0]}" total_us
    total_us=$(($(now_us) - start))

    local marker_line
    marker_line="$(grep -F "] $MARKER" "$console" | head -n 1 || true)"
    if [[ -z "$marker_line" ]]; then
        grep -F 'VENDD-HIL-SMOKE: FAIL' "$console" >&2 || true
        hil_die "marker '$MARKER' not seen (qemu exit $qemu_status)"
    fi
    if ((qemu_status != 0)); then
        # timeout(1) says 124: the guest printed the marker but qemu did not
        # exit, so poweroff (ACPI) is broken and every HIL test would hang.
        hil_die "marker seen but qemu did not exit cleanly (status $qemu_status)"
    fi
    local marker_time="${marker_line%%]*}"
    marker_time="${marker_time//[[ ]/}"
    printf 'smoke-boot: ok: marker at %s s, qemu exited after %d.%02d s\n' \
        "$marker_time" $((total_us / 1000000)) $((total_us % 1000000 / 10000))
}

main "$@"
