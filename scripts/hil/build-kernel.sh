#!/usr/bin/env bash
# Build, and cache, the small guest kernel for the hardware-in-the-loop tests,
# for amd64 (qemu-system-x86_64, the default) or arm64 (qemu-system-aarch64's
# `virt` machine, cross-compiled): Debian's linux-source-6.1, `make
# tinyconfig`, plus the fragments scripts/hil/kernel.config (common: gpio-sim,
# GPIO character device, 8250 UARTs, initramfs, and what glibc/Swift programs
# need) and scripts/hil/kernel-<arch>.config (the machine's console and buses).
#
# Usage:   kernel=$(scripts/hil/build-kernel.sh [--arch amd64|arm64] | tail -1)
#          scripts/hil/build-kernel.sh --packages [--arch amd64|arm64]
#
# --packages prints the Debian packages a build needs and exits, so that a caller can install
# them before building in the background (scripts/test): two apt-gets at once would fail.
#
# The last line of stdout is the absolute path of the image (bzImage for
# amd64, Image for arm64); i2c-stub.ko lies beside it; progress goes to stderr. A build takes about 7
# minutes on 2 cores, so the result is kept in
#   ${VENDD_HIL_CACHE:-/var/cache/vendd-hil}/kernel-<key>/<image>
# where <key> is the sha256 of the architecture, both fragments, the exact
# linux-source-6.1 package version (and the cross compiler's, for arm64) and
# RECIPE_VERSION below. A cache hit prints the path and exits at once.
set -euo pipefail

# Bump this whenever the build steps below change in a way that changes the
# kernel, so old cache entries are not reused.
readonly RECIPE_VERSION="vendd-hil-kernel-recipe-3"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR
readonly CACHE_DIR="${VENDD_HIL_CACHE:-/var/cache/vendd-hil}"
readonly SOURCE_PKG=linux-source-6.1
readonly SOURCE_TARBALL=/usr/src/linux-source-6.1.tar.xz
# What the kernel build itself needs. libssl-dev is not listed: tinyconfig
# has no modules and no trusted keyring, so sign-file/extract-cert are never
# built. libelf-dev is for objtool, which x86_64 runs even under tinyconfig.
readonly BUILD_PKGS=(bc flex bison libelf-dev build-essential xz-utils cpio)
# verify_config's exit status: the build log adds nothing to its message.
readonly EXIT_CONFIG_MISMATCH=3

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$SCRIPT_DIR/lib.sh"

# Debian's names for the architectures, as scripts/debian-swift-build takes them.
arch=amd64
print_packages=0
while (($#)); do
    case "$1" in
    --arch) [[ $# -ge 2 ]] || hil_die "--arch needs amd64 or arm64"; arch="$2"; shift 2 ;;
    --packages) print_packages=1; shift ;;
    *) hil_die "unknown argument '$1' (usage: $0 [--packages] [--arch amd64|arm64])" ;;
    esac
done
# Per architecture: the kernel's ARCH, the cross compiler (none on the
# amd64 build machines for amd64), the image make builds and where it lands.
case "$arch" in
amd64)
    readonly KERNEL_ARCH=x86_64 CROSS_COMPILE="" CROSS_PKGS=()
    readonly IMAGE_TARGET=bzImage IMAGE_PATH=arch/x86/boot/bzImage
    ;;
arm64)
    # The cross compiler's version is part of the cache key: it makes the code.
    readonly KERNEL_ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CROSS_PKGS=(gcc-aarch64-linux-gnu)
    readonly IMAGE_TARGET=Image IMAGE_PATH=arch/arm64/boot/Image
    ;;
*) hil_die "--arch takes amd64 or arm64, not '$arch'" ;;
esac
readonly FRAGMENTS=("$SCRIPT_DIR/kernel.config" "$SCRIPT_DIR/kernel-$arch.config")
readonly IMAGE_NAME="${IMAGE_PATH##*/}"

# cache_key : sha256 over everything that decides what the kernel is.
cache_key() {
    local version fragment package
    version="$(dpkg-query -W -f='${Version}' "$SOURCE_PKG")"
    [[ -n "$version" ]] || hil_die "cannot read the $SOURCE_PKG version"
    {
        printf 'arch: %s\n' "$arch"
        for fragment in "${FRAGMENTS[@]}"; do
            printf 'fragment %s:\n' "${fragment##*/}"
            cat "$fragment"
        done
        printf '\nsource-version: %s\nrecipe: %s\n' "$version" "$RECIPE_VERSION"
        for package in "${CROSS_PKGS[@]}"; do
            printf 'compiler %s: %s\n' "$package" "$(dpkg-query -W -f='${Version}' "$package")"
        done
    } | sha256sum | cut -d' ' -f1
}

# verify_config CONFIG : every assignment in the fragments must survive
# `make olddefconfig` unchanged. Kconfig silently drops an option whose
# dependencies are off, which would otherwise show up only at boot.
verify_config() {
    local config="$1" fragment line name bad=0
    for fragment in "${FRAGMENTS[@]}"; do
        while IFS= read -r line; do
            [[ "$line" =~ ^(CONFIG_[A-Za-z0-9_]+)= ]] || continue
            name="${BASH_REMATCH[1]}"
            if ! grep -qxF -- "$line" "$config"; then
                hil_log "${fragment##*/} wants '$line' but the final $arch .config has:" \
                    "'$(grep -E "^(# )?${name}[= ]" "$config" || echo "$name absent")'"
                bad=1
            fi
        done <"$fragment"
    done
    if ((bad != 0)); then
        hil_log "error: options were dropped (missing dependencies?); fix ${FRAGMENTS[*]}"
        exit "$EXIT_CONFIG_MISMATCH"
    fi
}

# build_kernel WORKDIR LOG : the recipe. Runs inside WORKDIR; all tool output
# goes to LOG. Leaves WORKDIR/out/{<image>,config,i2c-stub.ko}.
build_kernel() {
    local work="$1" log="$2" src="$1/linux-source-6.1"
    # make reads both from the environment; CROSS_COMPILE is empty for amd64.
    export ARCH="$KERNEL_ARCH" CROSS_COMPILE
    hil_log "unpacking $SOURCE_TARBALL"
    tar -C "$work" -xf "$SOURCE_TARBALL" >>"$log" 2>&1
    cd "$src"
    hil_log "configuring for $arch: tinyconfig + ${FRAGMENTS[*]}"
    {
        make tinyconfig
        ./scripts/kconfig/merge_config.sh -m .config "${FRAGMENTS[@]}"
        make olddefconfig
    } >>"$log" 2>&1
    verify_config .config
    hil_log "building $IMAGE_TARGET with $(nproc) jobs (about 7 minutes on 2 cores; log: $log)"
    make -j"$(nproc)" "$IMAGE_TARGET" modules >>"$log" 2>&1
    mkdir "$work/out"
    cp "$IMAGE_PATH" "$work/out/$IMAGE_NAME"
    # The only module: the guest's I2C bus for its LM75 (kernel.config).
    cp drivers/i2c/i2c-stub.ko "$work/out/i2c-stub.ko"
    cp .config "$work/out/config"   # kept beside the image for debugging
}

main() {
    if ((print_packages)); then
        printf '%s\n' "$SOURCE_PKG" "${CROSS_PKGS[@]}" "${BUILD_PKGS[@]}"
        return 0
    fi
    local fragment
    for fragment in "${FRAGMENTS[@]}"; do
        [[ -r "$fragment" ]] || hil_die "missing $fragment"
    done
    # The source package (and the cross compiler) are needed to compute the
    # key; the other build tools are installed later, on a cache miss.
    hil_ensure_packages "$SOURCE_PKG" "${CROSS_PKGS[@]}"

    local key dest
    key="$(cache_key)"
    dest="$CACHE_DIR/kernel-$key"
    if [[ -f "$dest/$IMAGE_NAME" ]]; then
        hil_log "cached"
        printf '%s\n' "$dest/$IMAGE_NAME"
        return 0
    fi

    mkdir -p "$CACHE_DIR"
    # Serialise concurrent runs (e.g. two test jobs) so they do not build
    # twice; the winner's result is then a cache hit for the other.
    exec 9>"$CACHE_DIR/.lock"
    flock 9
    if [[ -f "$dest/$IMAGE_NAME" ]]; then
        hil_log "cached (built by a concurrent run)"
        printf '%s\n' "$dest/$IMAGE_NAME"
        return 0
    fi
    # Holding the lock, any leftover temp dir is from a killed run.
    rm -rf "$CACHE_DIR"/tmp.build-*

    hil_ensure_packages "${BUILD_PKGS[@]}"

    local work log start
    work="$(mktemp -d "$CACHE_DIR/tmp.build-XXXXXX")"
    # shellcheck disable=SC2064  # expand $work now: it is local to main
    trap "rm -rf '$work'" EXIT
    log="$CACHE_DIR/build-$key.log"
    : >"$log"
    hil_log "cache miss: building the $arch kernel $key"
    start=$SECONDS
    # A subshell so `cd` and `export ARCH` stay inside. Not `( ... ) || x`:
    # bash turns errexit off inside anything on the left of `||`, so a failed
    # step would be ignored. Hence set -e inside, and +e around it.
    local status
    set +e
    (set -e; build_kernel "$work" "$log")
    status=$?
    set -e
    if ((status == EXIT_CONFIG_MISMATCH)); then
        exit "$status"
    elif ((status != 0)); then
        hil_log "build failed (exit $status); last lines of $log:"
        tail -n 40 "$log" >&2
        exit "$status"
    fi

    # Rename within one filesystem is atomic: readers see no image or a
    # complete one, never a partial file.
    rm -rf "$dest"   # a leftover without an image would make mv fail
    mv -T "$work/out" "$dest"
    hil_log "built in $((SECONDS - start)) s"
    printf '%s\n' "$dest/$IMAGE_NAME"
}

main "$@"
