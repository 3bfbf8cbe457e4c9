#!/usr/bin/env bash
# make demo: launch a native ephemeral Heat (sqlite), show `openstack stack list`
# working against it, and stop it again. Heat is stopped even if a step fails.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
launch="$here/collection/plugins/modules/ephemeral_heat_launch"
work=${DEMO_WORK_DIR:-$HOME/overcloud-deploy/demo}
port=${DEMO_API_PORT:-8006}
heat_dir="$work/heat-launcher"

stop() { "$launch" --heat-dir "$heat_dir" --api-port "$port" --state stopped >/dev/null || true; }
trap stop EXIT

echo "== launching a native Heat in $heat_dir on 127.0.0.1:$port"
"$launch" --heat-dir "$heat_dir" --api-port "$port"

echo "== openstack stack list through $heat_dir/clouds.yaml"
. "$heat_dir/heatrc"
openstack stack list
echo "(no stacks yet: an empty list is the expected answer)"

echo "== stopping Heat (the database stays: relaunch with the same command)"
trap - EXIT
"$launch" --heat-dir "$heat_dir" --api-port "$port" --state stopped
echo "demo done: artifacts in $heat_dir"
