#!/usr/bin/env bash
# System packages some slow suites need: nginx (tests/cluster: replicas behind a balancer) and
# wrk (bench/: load generator); and Debian's chromium + chromium-driver for the web console's
# browser tests (tests/ui: Playwright drives /usr/bin/chromium; no browser download).
# Idempotent: installs only what is missing, only as root via apt-get, and says what it did.
# Without root/apt it only reports; the tests then skip.
#   bash scripts/install_system_deps.sh
set -euo pipefail

missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_system_deps: nginx, wrk and chromium already present; nothing to do"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install_system_deps: missing ${missing[*]} but not root with apt-get; install them" \
       "yourself (tests that need them will skip)" >&2
  exit 0
fi

pkgs=()
for m in "${missing[@]}"; do
  if [ "$m" = nginx ]; then
    # nginx-light is enough (proxy + upstream); newer Debian folds the flavours into "nginx"
    if apt-cache show nginx-light >/dev/null 2>&1; then pkgs+=(nginx-light); else pkgs+=(nginx); fi
  else
    pkgs+=("$m")
  fi
done

echo "install_system_deps: apt-get update"
apt-get update -qq
# Debian's nginx postinst starts a system nginx on :80 through invoke-rc.d; the tests run
# their own nginx, so forbid service starts during the install (policy-rc.d exit 101 = deny).
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
trap '[ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
echo "install_system_deps: apt-get install ${pkgs[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
echo "install_system_deps: installed ${pkgs[*]} ($(nginx -v 2>&1 || true); wrk: $(command -v wrk || echo none);" \
     "$(chromium --version 2>/dev/null || echo 'chromium: none'))"
