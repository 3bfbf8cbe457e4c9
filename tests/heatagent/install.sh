#!/bin/sh
# ephemeral.heat test fixture: installs the heat-config hook runner for the
# demo host (this machine), where config-download's deployments.yaml expects
# heat-agents: /usr/libexec/os-refresh-config/configure.d/55-heat-config and
# the script and hiera hooks in /var/lib/heat-config/hooks. Real overcloud
# images carry heat-agents instead. Idempotent; a file there that is not this
# fixture (heat-agents itself) is left alone. `install.sh --uninstall`
# removes what it installed. Needs root (uses sudo otherwise).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# One install at a time (test packages run side by side): a lock on this
# fixture's own directory.
exec 9<"$here"
flock 9
marker="ephemeral.heat test fixture"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
files="55-heat-config:/usr/libexec/os-refresh-config/configure.d/55-heat-config
hooks/script:/var/lib/heat-config/hooks/script
hooks/hiera:/var/lib/heat-config/hooks/hiera"
for f in $files; do
  src=$here/${f%%:*}
  dest=${f#*:}
  if [ -e "$dest" ] && ! grep -q "$marker" "$dest"; then
    echo "heatagent: $dest is not this fixture (heat-agents?): left alone"
    continue
  fi
  if [ "${1:-}" = "--uninstall" ]; then
    [ ! -e "$dest" ] || { $SUDO rm -f "$dest"; echo "heatagent: removed $dest"; }
    continue
  fi
  if [ -e "$dest" ] && cmp -s "$src" "$dest"; then
    continue
  fi
  $SUDO install -D -m 0755 "$src" "$dest"
  echo "heatagent: installed $dest"
done
