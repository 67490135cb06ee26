#!/usr/bin/env bash
# Idempotent setup on Debian/Ubuntu: system packages (chromium, redis-server), the Python venv with the
# locked dependencies, and the capability packs' npm packages. Safe to run again; installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}

need_apt=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/lib/chromium/chromium ] || need_apt+=(chromium)
# a CJK font (1.6 MB): a game made from a Chinese brief shows its Chinese title and names in the headless browser
# that validates it (without one they render as empty boxes, and its screenshots show nothing readable)
[ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || need_apt+=(fonts-wqy-microhei)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
$PY -c "import venv, ensurepip" >/dev/null 2>&1 || need_apt+=(python3-venv)
# workspace kinds (docs/operations.md, "Workspace kinds"): bubblewrap for `isolated`, the Docker engine for `docker`.
# apt does not start dockerd here; tier2 starts a private one itself, never with the host-network defaults.
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v prlimit >/dev/null 2>&1 || need_apt+=(util-linux)
if [ "${TIER2_SKIP_DOCKER:-0}" != 1 ]; then
  command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} (apt)" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  # never let a package start its daemon during the install (docker.io's would set up a bridge, NAT rules and
  # ip_forward on the host): the standard policy-rc.d guard, only for this install and only if none is set
  guard=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null && $SUDO chmod +x /usr/sbin/policy-rc.d
    guard=1
  fi
  status=0
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null || status=$?
  if [ -n "$guard" ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
  [ "$status" -eq 0 ] || exit "$status"
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  $PY -m venv .venv
fi
stamp=.venv/.tier2-deps
# TIER2_MEMORY=1: also the `memory` extra (mem0 + a local embedder: the case library's near-match recall, about
# 1.5 GB); its lock is requirements.lock plus the extra, same versions. Without it mem0 is never installed.
lock=requirements.lock
if [ "${TIER2_MEMORY:-0}" = 1 ]; then lock=requirements-memory.lock; fi
want="$(cat "$lock" pyproject.toml | sha256sum | cut -d' ' -f1) $lock"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python dependencies ($lock)" >&2
  .venv/bin/pip install -q --disable-pip-version-check -r "$lock"
  .venv/bin/pip install -q --disable-pip-version-check --no-deps -e .
  echo "$want" > "$stamp"
fi

# the unprivileged host users of untrusted work (config/security/runtime.toml [sandbox.isolation]; docs/operations.md
# "Privilege separation"): tier2 uses the numeric ids whether or not these exist — the names make ps/ls readable
if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null 2>&1; then
  .venv/bin/python - <<'PY' | while read -r name uid gid; do
import tomllib
c = tomllib.load(open("config/security/runtime.toml", "rb")).get("sandbox", {}).get("isolation", {})
print("tier2-sandbox", c.get("uid", 70000), c.get("gid", 70000))
print("tier2-browser", c.get("browser_uid", 70001), c.get("browser_gid", 70001))
PY
    getent group "$gid" >/dev/null || groupadd --system --gid "$gid" "$name"
    getent passwd "$uid" >/dev/null || useradd --system --uid "$uid" --gid "$gid" --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin "$name"
  done
fi

for pack in capability_packs/*/; do
  [ -f "$pack/package-lock.json" ] || continue
  pstamp="$pack/node_modules/.tier2-lock"
  pwant=$(sha256sum "$pack/package-lock.json" | cut -d' ' -f1)
  if [ ! -f "$pstamp" ] || [ "$(cat "$pstamp")" != "$pwant" ]; then
    echo "setup: npm ci in $pack" >&2
    (cd "$pack" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$pwant" > "$pstamp"
  fi
done
echo "setup: ok ($ROOT)" >&2
