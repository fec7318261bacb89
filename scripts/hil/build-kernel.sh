#!/usr/bin/env bash
# Build, and cache, the small x86_64 guest kernel for the hardware-in-the-loop
# tests: Debian's linux-source-6.1, `make tinyconfig`, plus the fragment
# scripts/hil/kernel.config (gpio-sim, GPIO character device, a second 8250
# UART, initramfs, and what glibc/Swift programs need).
#
# Usage:   kernel=$(scripts/hil/build-kernel.sh | tail -1)
#
# The last line of stdout is the absolute path of bzImage; progress goes to
# stderr. A build takes about 7 minutes on 2 cores, so the result is kept in
#   ${VENDD_HIL_CACHE:-/var/cache/vendd-hil}/kernel-<key>/bzImage
# where <key> is the sha256 of the fragment, the exact linux-source-6.1
# package version and RECIPE_VERSION below. A cache hit prints the path and
# exits at once.
set -euo pipefail

# Bump this whenever the build steps below change in a way that changes the
# kernel, so old cache entries are not reused.
readonly RECIPE_VERSION="vendd-hil-kernel-recipe-1"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR
readonly FRAGMENT="$SCRIPT_DIR/kernel.config"
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

# cache_key : sha256 over everything that decides what the kernel is.
cache_key() {
    local version
    version="$(dpkg-query -W -f='${Version}' "$SOURCE_PKG")"
    [[ -n "$version" ]] || hil_die "cannot read the $SOURCE_PKG version"
    {
        printf 'fragment:\n'
        cat "$FRAGMENT"
        printf '\nsource-version: %s\nrecipe: %s\n' "$version" "$RECIPE_VERSION"
    } | sha256sum | cut -d' ' -f1
}

# verify_config CONFIG : every assignment in the fragment must survive
# `make olddefconfig` unchanged. Kconfig silently drops an option whose
# dependencies are off, which would otherwise show up only at boot.
verify_config() {
    local config="$1" line name bad=0
    while IFS= read -r line; do
        [[ "$line" =~ ^(CONFIG_[A-Za-z0-9_]+)= ]] || continue
        name="${BASH_REMATCH[1]}"
        if ! grep -qxF -- "$line" "$config"; then
            hil_log "fragment wants '$line' but the final .config has:" \
                "'$(grep -E "^(# )?${name}[= ]" "$config" || echo "$name absent")'"
            bad=1
        fi
    done <"$FRAGMENT"
    if ((bad != 0)); then
        hil_log "error: options were dropped (missing dependencies?); fix $FRAGMENT"
        exit "$EXIT_CONFIG_MISMATCH"
    fi
}

# build_kernel WORKDIR LOG : the recipe. Runs inside WORKDIR; all tool output
# goes to LOG. Leaves WORKDIR/out/{bzImage,config}.
build_kernel() {
    local work="$1" log="$2" src="$1/linux-source-6.1"
    export ARCH=x86_64
    hil_log "unpacking $SOURCE_TARBALL"
    tar -C "$work" -xf "$SOURCE_TARBALL" >>"$log" 2>&1
    cd "$src"
    hil_log "configuring: tinyconfig + $FRAGMENT"
    {
        make tinyconfig
        ./scripts/kconfig/merge_config.sh -m .config "$FRAGMENT"
        make olddefconfig
    } >>"$log" 2>&1
    verify_config .config
    hil_log "building bzImage with $(nproc) jobs (about 7 minutes on 2 cores; log: $log)"
    make -j"$(nproc)" bzImage >>"$log" 2>&1
    mkdir "$work/out"
    cp arch/x86/boot/bzImage "$work/out/bzImage"
    cp .config "$work/out/config"   # kept beside the image for debugging
}

main() {
    [[ -r "$FRAGMENT" ]] || hil_die "missing $FRAGMENT"
    # Only the source package is needed to compute the key; the build tools
    # are installed later, on a cache miss.
    hil_ensure_packages "$SOURCE_PKG"

    local key dest
    key="$(cache_key)"
    dest="$CACHE_DIR/kernel-$key"
    if [[ -f "$dest/bzImage" ]]; then
        hil_log "cached"
        printf '%s\n' "$dest/bzImage"
        return 0
    fi

    mkdir -p "$CACHE_DIR"
    # Serialise concurrent runs (e.g. two test jobs) so they do not build
    # twice; the winner's result is then a cache hit for the other.
    exec 9>"$CACHE_DIR/.lock"
    flock 9
    if [[ -f "$dest/bzImage" ]]; then
        hil_log "cached (built by a concurrent run)"
        printf '%s\n' "$dest/bzImage"
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
    hil_log "cache miss: building kernel $key"
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

    # Rename within one filesystem is atomic: readers see no bzImage or a
    # complete one, never a partial file.
    rm -rf "$dest"   # a leftover without bzImage would make mv fail
    mv -T "$work/out" "$dest"
    hil_log "built in $((SECONDS - start)) s"
    printf '%s\n' "$dest/bzImage"
}

main "$@"
