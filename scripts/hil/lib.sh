# shellcheck shell=bash
# Helpers shared by the scripts/hil/*.sh scripts. Source it; do not run it.
#
# Everything here writes to stderr: the scripts keep stdout for their one
# machine-readable result (e.g. the bzImage path).

# hil_log MSG... : progress line on stderr, prefixed with the calling script's name.
hil_log() {
    printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# hil_die MSG... : report and stop.
hil_die() {
    hil_log "error: $*"
    exit 1
}

# hil_is_installed PKG : true when dpkg has PKG fully installed. Checking the
# status (not just presence in the database) skips half-removed packages.
hil_is_installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}

# Set once per script run so a script that calls hil_ensure_packages twice
# does not refresh the package lists twice.
_hil_apt_updated=0

# hil_ensure_packages PKG... : install the packages that are missing.
# Machines are not kept between sessions and CI clones afresh, so the scripts
# must install their own tools. The install is retried once because a mirror
# hiccup is the common failure, not a bad package name.
hil_ensure_packages() {
    local missing=() pkg
    for pkg in "$@"; do
        hil_is_installed "$pkg" || missing+=("$pkg")
    done
    ((${#missing[@]} == 0)) && return 0

    hil_log "installing with apt: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ((_hil_apt_updated == 0)); then
        apt-get update >&2 || hil_die "apt-get update failed"
        _hil_apt_updated=1
    fi
    if ! apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
        hil_log "apt-get install failed; retrying once"
        sleep 5
        apt-get install -y --no-install-recommends "${missing[@]}" >&2 \
            || hil_die "apt-get install failed twice: ${missing[*]}"
    fi
}
