#!/usr/bin/env bash
# Installs everything cogmem-pg needs on Debian 12 or 13: PostgreSQL with pgvector, pg_cron, PL/Python
# and PL/Proxy (sharding, docs/scaling.md), then a virtualenv (.venv) with the package and its dev,
# embed, gut, mcp, langgraph and dashboard extras.
# With --browser (the tests: make test) also Debian's Chromium, which Playwright drives for the dashboard's
# tests (tests/test_dashboard.py); make demo does not need it.
# Idempotent: a second run only checks. Needs root or sudo for the system packages.
set -euo pipefail
cd "$(dirname "$0")/.."
BROWSER=0
for arg in "$@"; do
    case "$arg" in
        --browser) BROWSER=1 ;;
        *) echo "usage: scripts/setup.sh [--browser]" >&2; exit 2 ;;
    esac
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
# Progress goes to stderr: stdout belongs to functions whose output is captured.
log() { printf '==> %s\n' "$*" >&2; }

# pgvector 0.8.0 from Debian trixie, built where the release packages no pgvector for its PostgreSQL.
# The .dsc is verified by apt against the signed Release file; the tarball also against this pin.
PGVECTOR_VERSION=0.8.0
PGVECTOR_ORIG_SHA256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0

apt_updated=0
apt_update() {
    if [ "$apt_updated" -eq 0 ]; then
        log "apt-get update"
        $SUDO apt-get update -q >/dev/null
        apt_updated=1
    fi
}
apt_install() {
    apt_update
    log "apt-get install $*"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "$@" >/dev/null
}
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
available() { apt_update; [ -n "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}' | grep -v '(none)')" ]; }

# --- PostgreSQL major version: the installed server if any, else the release's default. ---------
# Called in this shell, never in $(...): apt_update must remember that it ran.
installed_pg_major() {
    local v
    v=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1 || true)
    if [ -n "$v" ] && [ -x "/usr/lib/postgresql/$v/bin/postgres" ]; then echo "$v"; fi
}
release_pg_major() {
    apt-cache depends postgresql 2>/dev/null | awk '/Depends: postgresql-[0-9]+$/ {sub("postgresql-","",$2); print $2; exit}'
}

PG_MAJOR="${PG_MAJOR:-$(installed_pg_major)}"
if [ -z "$PG_MAJOR" ]; then
    apt_update
    PG_MAJOR=$(release_pg_major)
fi
[ -n "$PG_MAJOR" ] || { echo "could not determine a PostgreSQL version to install" >&2; exit 1; }
log "PostgreSQL $PG_MAJOR ($(. /etc/os-release && echo "$PRETTY_NAME"))"

# Real packages only: postgresql-contrib is a virtual package on Debian 13 (the server ships contrib,
# pgcrypto among it, since PostgreSQL 10), so dpkg never reports it installed.
need=()
for p in "postgresql-$PG_MAJOR" "postgresql-$PG_MAJOR-cron" "postgresql-plpython3-$PG_MAJOR" \
         "postgresql-$PG_MAJOR-plproxy"; do
    installed "$p" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"

PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
PG_SHARE="/usr/share/postgresql/$PG_MAJOR"

if [ ! -f "$PG_SHARE/extension/vector.control" ]; then
    if available "postgresql-$PG_MAJOR-pgvector"; then
        apt_install "postgresql-$PG_MAJOR-pgvector"
    else
        log "pgvector is not packaged for PostgreSQL $PG_MAJOR here: building $PGVECTOR_VERSION from Debian's source"
        apt_install "postgresql-server-dev-$PG_MAJOR" build-essential dpkg-dev ca-certificates
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        mkdir -p "$work/lists/partial"
        # apt downloads as the unprivileged _apt user where it can: let it write here.
        if [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1; then chown -R _apt "$work"; fi
        cat > "$work/trixie-src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        # A private source list and state dir: the machine's own apt configuration is left untouched.
        aptopts=(-q -o "Dir::Etc::SourceList=$work/trixie-src.sources" -o Dir::Etc::SourceParts=/dev/null
                 -o "Dir::State::Lists=$work/lists")
        $SUDO apt-get "${aptopts[@]}" update >/dev/null
        (cd "$work" && $SUDO apt-get "${aptopts[@]}" source --download-only "pgvector=$PGVECTOR_VERSION-1" >/dev/null 2>&1)
        echo "$PGVECTOR_ORIG_SHA256  $work/pgvector_$PGVECTOR_VERSION.orig.tar.gz" | sha256sum -c --quiet -
        tar -C "$work" -xzf "$work/pgvector_$PGVECTOR_VERSION.orig.tar.gz"
        make -s -C "$work/pgvector-$PGVECTOR_VERSION" PG_CONFIG="$PG_BIN/pg_config" >/dev/null
        $SUDO make -s -C "$work/pgvector-$PGVECTOR_VERSION" PG_CONFIG="$PG_BIN/pg_config" install >/dev/null
    fi
fi
for ext in vector pg_cron plpython3u pgcrypto plproxy; do
    [ -f "$PG_SHARE/extension/$ext.control" ] || { echo "extension $ext missing after install" >&2; exit 1; }
done

# --- Chromium for the dashboard's browser tests (Debian's package; Playwright downloads nothing). -----
if [ "$BROWSER" -eq 1 ]; then
    browser=()
    for p in chromium fonts-dejavu-core; do installed "$p" || browser+=("$p"); done
    [ ${#browser[@]} -eq 0 ] || apt_install "${browser[@]}"
    command -v chromium >/dev/null || { echo "chromium missing after install" >&2; exit 1; }
fi

# --- Python virtualenv ------------------------------------------------------------------------
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then apt_install python3-venv python3-dev; PY=python3; fi
if [ ! -x .venv/bin/python ]; then
    log "creating .venv"
    "$PY" -m venv .venv
fi
stamp=.venv/.cogmem-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    log "pip install -e .[dev,embed,gut,mcp,langgraph,dashboard] (log: .venv/pip.log)"
    if ! { .venv/bin/python -m pip install -q --upgrade pip && .venv/bin/python -m pip install -q -e '.[dev,embed,gut,mcp,langgraph,dashboard]'; } \
        > .venv/pip.log 2>&1; then
        grep -v '^WARNING: Location' .venv/pip.log | tail -n 30 >&2
        exit 1
    fi
    touch "$stamp"
fi
log "ready: PostgreSQL $PG_MAJOR with pgvector, pg_cron, plpython3u; .venv$([ "$BROWSER" -eq 1 ] && echo '; chromium')"
