#!/usr/bin/env bash
# Make the image's base without any image registry: a Debian 12 root filesystem built by
# mmdebstrap from Debian's own packages (python3, python3-venv, ca-certificates), imported into
# the local Docker engine under the name the Dockerfile's FROM uses, so that the Dockerfile
# builds unchanged. On a machine that can pull from Docker Hub this is not needed (the real
# python:3.11-slim-bookworm is used); it is what `make image` and tests/container do here.
#   bash scripts/build_base_image.sh [NAME]      (root, Debian/Ubuntu with mmdebstrap; DOCKER_HOST
#                                                 as usual; NAME defaults to the Dockerfile's)
# The rootfs tarball is cached in $HYBRIDSERVE_CACHE (default /var/cache/hybridserve), keyed by
# everything that goes into it (this script, the suite, the packages, the extra CA certificates),
# so a second run only re-imports it (seconds).
# Package downloads that pass through a TLS-intercepting proxy need its CA: the host's extra CA
# certificates (/usr/local/share/ca-certificates/*) are copied into the base and trusted there
# (and pip is pointed at the system bundle). The Dockerfile itself never carries them.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:-$(sed -n 's/^ARG BASE_IMAGE=//p' Dockerfile)}
docker=${DOCKER:-docker}
cache=${HYBRIDSERVE_CACHE:-/var/cache/hybridserve}
suite=bookworm
packages=python3,python3-venv,ca-certificates
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

key=$( { cat "$0"; echo "$suite $packages $mirror $security"
         cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true; } | sha256sum | cut -c1-16)
tarball="$cache/base-$suite-$key.tar"
if [ ! -s "$tarball" ]; then
  command -v mmdebstrap >/dev/null || { echo "build_base_image: needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 1; }
  mkdir -p "$cache"
  rm -f "$cache"/base-$suite-*.tar      # older keys: replaced, not accumulated
  echo "build_base_image: mmdebstrap $suite ($packages) -> $tarball"
  # customize: the host's extra CAs (if any), then drop what a server image never reads
  # merged-usr hook: /usr merged without the usrmerge package (which drags in 45 MB of perl)
  mmdebstrap --quiet --variant=minbase --include="$packages" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --customize-hook='if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
        cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/"
        chroot "$1" update-ca-certificates >/dev/null
        printf "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n" > "$1/etc/pip.conf"; fi' \
    --customize-hook='cd "$1" && rm -rf var/lib/apt/lists/* var/cache/apt/* usr/share/doc/* \
        usr/share/man/* usr/share/info/* usr/share/locale/* var/log/*.log' \
    "$suite" "$cache/partial-$key.tar" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main" \
    >/dev/null       # the hooks chatter on stdout; errors go to stderr
  mv "$cache/partial-$key.tar" "$tarball"
fi
$docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
  --change 'CMD ["python3"]' \
  --change "LABEL org.hybridserve.base-standin=\"mmdebstrap $suite $packages ($key)\"" \
  "$tarball" "$name" >/dev/null
echo "build_base_image: $name <- $tarball ($(du -m "$tarball" | cut -f1) MB)"
