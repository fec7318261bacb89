# shellcheck shell=bash
# Shared by the scripts in scripts/: finding Swift and installing Debian packages.
# Source it; it defines functions and sets nothing else.

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Swift is preinstalled on the build machines at /opt/swift; it is not a Debian package.
ensure_swift() {
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 ||
        die "swift is not installed (expected on PATH or at /opt/swift). Install Swift 6.x from swift.org first."
}

# Installs the Debian packages that are missing, with one retry (mirrors fail transiently).
ensure_packages() {
    local missing=()
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    local attempt
    for attempt in 1 2; do
        if $sudo apt-get update -q >&2 &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
            return 0
        fi
        log "apt-get failed (attempt $attempt)"
        sleep 5
    done
    die "could not install: ${missing[*]}"
}

# The programs the Debian packages hold, in the order scripts/build-deb builds them (also what
# scripts/warm-caches builds ahead for the arm64 packages).
packaged_products() {
    printf '%s\n' vendd vendctl vendfleet vendd-display vendstore
}

# The Debian packages a build of vendd needs besides Swift itself: the headers and pkg-config
# files of the C libraries the GPIO and serial drivers link (Package.swift's systemLibrary
# targets find them through pkg-config). This is the one list: every script that builds
# (run-simulation, test, install, build-deb, hil/run.sh, fetch-libgpiod-v2) calls
# ensure_build_dependencies, so a new C dependency is added here and nowhere else.
build_dependencies() {
    printf '%s\n' pkg-config libgpiod-dev libserialport-dev libyaml-dev libmosquitto-dev libsqlite3-dev libpq-dev \
        libmicrohttpd-dev libsodium-dev
}

# What the fleet tests (Tests/VenddProcessTests/Fleet, Tests/VendFleetStoreTests) start: a real
# broker, its command-line clients, openssl for the test CA, and PostgreSQL's server binaries
# (initdb, postgres; `postgresql` is Debian's current major: 15 in Debian 12, 17 in Debian 13).
ensure_fleet_test_dependencies() {
    ensure_packages mosquitto mosquitto-clients openssl postgresql
}

# ensure_build_dependencies [EXTRA_PACKAGE...]: installs what is missing of the list above (and
# of the extra packages the caller needs for its own steps).
ensure_build_dependencies() {
    local packages
    mapfile -t packages < <(build_dependencies)
    ensure_packages "${packages[@]}" "$@"
}

# ensure_foreign_emulation ARCH: makes this machine run ARCH's Linux programs (a foreign Debian
# root in a chroot) through qemu-user-static and binfmt_misc: installs the packages, mounts
# binfmt_misc if it is not, enables the interpreter, and proves it with arch-test.
ensure_foreign_emulation() {
    local arch="$1" qemu
    case "$arch" in
        arm64) qemu=qemu-aarch64 ;;
        *) die "no emulation set up for $arch (only arm64)" ;;
    esac
    ensure_packages qemu-user-static binfmt-support arch-test
    if ! mountpoint -q /proc/sys/fs/binfmt_misc; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
            die "cannot mount binfmt_misc (needed to run $arch programs through qemu)"
    fi
    if ! grep -qx enabled "/proc/sys/fs/binfmt_misc/$qemu" 2>/dev/null; then
        update-binfmts --enable "$qemu" >&2 || die "update-binfmts --enable $qemu failed"
    fi
    # The F flag makes the kernel open the interpreter at registration, so it works in chroots.
    grep -q '^flags: .*F' "/proc/sys/fs/binfmt_misc/$qemu" ||
        die "$qemu is registered without the F flag: it would not run inside a chroot"
    arch-test "$arch" >/dev/null || die "arch-test $arch: this machine cannot run $arch programs"
}
