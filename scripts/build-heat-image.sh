#!/usr/bin/env bash
# Builds the local Heat image for heat_type container/pod from Debian packages
# only (no container registry is needed): debootstrap a minimal bookworm from
# the mirror apt uses on this host, install Heat, MariaDB and RabbitMQ in it,
# and `podman import` it as localhost/ephemeral-heat:<heat version> (also
# tagged :latest, the module's default image).
#
#   scripts/build-heat-image.sh [--force]
#
# Needs root (debootstrap, chroot), debootstrap and podman (`make deps`).
# Takes about 3-4 minutes on 2 cores with a nearby mirror.
set -euo pipefail

REPO=${HEAT_IMAGE_REPO:-localhost/ephemeral-heat}
SUITE=${HEAT_IMAGE_SUITE:-bookworm}
force=0
[ "${1:-}" = "--force" ] && force=1

here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}

die() { echo "build-heat-image: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and chroot need it); try: sudo $0"
for c in debootstrap podman; do
  command -v "$c" >/dev/null || die "$c is missing: run 'make deps' (apt-get install -y podman runc debootstrap)"
done

# The mirror apt uses here: first debian URI of deb822 sources, else of sources.list.
mirror=${HEAT_IMAGE_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(awk '/^URIs:/{print $2}' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v -- '-security' | grep '/debian/\?$' | head -1 || true)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1=="deb" && $2 !~ /^\[/ {print $2} $1=="deb" && $2 ~ /^\[/ {print $3}' /etc/apt/sources.list | grep -v -- '-security' | head -1 || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}
security=${HEAT_IMAGE_SECURITY_MIRROR:-${mirror%/debian}/debian-security}

# Nothing to do when the default image is there (the expensive part is debootstrap).
if [ $force -eq 0 ] && podman image exists "$REPO:latest"; then
  echo "build-heat-image: $REPO:latest exists already (use --force to rebuild)"
  exit 0
fi

work=$(mktemp -d /var/tmp/heat-image.XXXXXX)
root=$work/rootfs
cleanup() {
  for m in proc sys dev/pts dev; do mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m" || true; done
  rm -rf "$work"
}
trap cleanup EXIT

start=$(date +%s)
echo "build-heat-image: debootstrap $SUITE from $mirror into $root"
debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed (is $mirror reachable?); set HEAT_IMAGE_MIRROR to another Debian mirror"; }

cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $SUITE main
deb $mirror $SUITE-updates main
deb $security $SUITE-security main
EOF
# Services must not start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
mount -t proc proc "$root/proc"
packages=(heat-common heat-api heat-engine python3-pymysql mariadb-server rabbitmq-server procps)
echo "build-heat-image: installing ${packages[*]}"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 \
  sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends ${packages[*]}" >"$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log" >&2; die "installing Heat into the image failed"; }

version=$(chroot "$root" dpkg-query -W -f='${Version}' heat-common)
tag=${version#*:}         # drop the epoch
tag=${tag//[^A-Za-z0-9_.-]/_}
image=$REPO:$tag
if [ $force -eq 0 ] && podman image exists "$image"; then
  echo "build-heat-image: $image exists already (use --force to rebuild); tagging it $REPO:latest"
  podman tag "$image" "$REPO:latest"
  exit 0
fi

umount -l "$root/proc"
rm -f "$root/usr/sbin/policy-rc.d"
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/debconf/*-old "$root"/usr/share/doc/* "$root"/usr/share/man/* \
  "$root"/var/lib/mysql/* "$root"/var/lib/rabbitmq/mnesia
echo "build-heat-image: importing $image"
tar -C "$root" --numeric-owner -c . | podman import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "LABEL ephemeral-heat.heat-version=$version" \
  --change 'CMD ["/usr/bin/heat-all", "--config-file", "/etc/heat/heat.conf"]' \
  - "$image" >/dev/null
podman tag "$image" "$REPO:latest"
echo "build-heat-image: built $image (and $REPO:latest) in $(( $(date +%s) - start )) s"
