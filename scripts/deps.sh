#!/usr/bin/env bash
# Installs the Debian packages ephemeral.heat needs, skipping those already
# installed; uses sudo when not root. Safe to run repeatedly.
set -euo pipefail
packages=(
  ansible-core ansible-lint git sqlite3 ca-certificates curl
  heat-common heat-api heat-engine python3-pymysql
  python3-openstackclient python3-heatclient
  # THT's tools/process-templates.py and tests/tht's tripleo-common reader
  python3-jinja2 python3-yaml python3-six
  # tripleo-common's own config download and inventory, run beside ours by
  # the differential test (tests/tripleocommon) and make bench
  python3-git python3-pbr python3-eventlet python3-openstacksdk
  # the collections THT's playbooks and tripleo-ansible's roles use
  # (community.general, ansible.posix, containers.podman, openstack.cloud):
  # the differential test syntax-checks and lists the rendered playbooks
  ansible
  # the sample's software deployments on this host become root as TripleO's
  # deployments.yaml does
  sudo
  mariadb-server mariadb-client
  podman runc catatonit debootstrap
  # make sanity: ansible-test's yamllint and runtime-metadata checks run with
  # Debian's yamllint and voluptuous (offline); its sanity venvs need venv.
  yamllint python3-voluptuous python3-venv python3-pycodestyle
  # the TLS tests of where Heat is: a test CA and certificate (openssl) and a
  # TLS proxy in front of a test Heat on 127.0.0.1 (socat)
  openssl socat
  # C headers of the podman bindings' cgo dependencies: a plain `go vet ./...`
  # or `go build ./...` (cgo on, no build tags) compiles too. The Makefile's
  # tags build without them (CGO_ENABLED=0, static binaries).
  libgpgme-dev libdevmapper-dev libbtrfs-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Packages must not start their services (mariadb, heat) on install: tests start their own.
  policy=/usr/sbin/policy-rc.d
  created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    created_policy=1
  fi
  trap '[ $created_policy -eq 1 ] && $SUDO rm -f "$policy"' EXIT
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
  go_min=$(awk '/^go /{print $2}' "$(dirname "$0")/../go.mod")
  echo "deps: Go is missing: install Go $go_min or newer (go.mod) from https://go.dev/dl/ into /usr/local/go" >&2
  exit 1
fi
