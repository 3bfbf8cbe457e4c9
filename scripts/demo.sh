#!/usr/bin/env bash
# make demo: deploy the standalone sample overcloud on this host with a native
# ephemeral Heat + sqlite (launch -> prechecks -> stack -> config-download ->
# deploy steps -> dump -> teardown), then relaunch Heat on the saved dump to
# show `openstack stack list`, and stop it again.
#   DEMO_WORK_DIR (default ~/overcloud-deploy/standalone), DEMO_API_PORT (8006)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${DEMO_WORK_DIR:-$HOME/overcloud-deploy/standalone}
port=${DEMO_API_PORT:-8006}
samples=$root/samples/overcloud
export ANSIBLE_CONFIG=$root/ansible.cfg ANSIBLE_COLLECTIONS_PATH=$root/.collections

vars=$(cat <<JSON
{"stack_name": "standalone", "work_dir": "$work", "heat_api_port": $port, "run_deploy": true,
 "template": "$samples/overcloud.yaml",
 "environment_files": ["$samples/overcloud-resource-registry.yaml", "$samples/environments/standalone.yaml",
                       "$samples/environments/network-isolation.yaml", "$samples/environments/ceph.yaml"],
 "parameters": {"SampleMarkerDir": "$work/markers"}}
JSON
)

# Real overcloud images carry heat-agents, which applies software
# deployments; this host gets its stand-in, a test fixture.
echo "== installing the heat-config hook runner fixture (tests/heatagent) for the sample's software deployments"
"$root/tests/heatagent/install.sh"

echo "== deploying the standalone sample overcloud on this host (work dir $work)"
ansible-playbook -i localhost, "$root/playbooks/deploy-overcloud.yml" -e "$vars"

echo "== relaunching Heat on the saved database to inspect the deployment"
trap 'ansible-playbook -i localhost, "$root/playbooks/kill-heat.yml" -e "{\"work_dir\": \"$work\", \"heat_api_port\": $port}" >/dev/null || true' EXIT
ansible-playbook -i localhost, "$root/playbooks/launch-heat.yml" -e "{\"work_dir\": \"$work\", \"heat_api_port\": $port}" >/dev/null
( . "$work/heat-launcher/heatrc" && openstack stack list )
trap - EXIT
ansible-playbook -i localhost, "$root/playbooks/kill-heat.yml" -e "{\"work_dir\": \"$work\", \"heat_api_port\": $port}" >/dev/null

cat <<EOF2

demo done; nothing of Heat runs any more. Artifacts:
  config-download (git):   $work/config-download/standalone   (git -C ... log)
  inventory:               $work/config-download/standalone/tripleo-ansible-inventory.yaml
  stack outputs:           $work/outputs/standalone-outputs.yaml
  merged environment:      $work/environment/tripleo-standalone-environment.yaml
  Heat database dumps:     $(ls "$work"/heat-launcher/heat-db-*.sql.gz | tail -1)
  what the deploy steps did on this host: $work/markers/ (the post-deploy script: $work/markers/standalone.post-config)
  software deployments applied here: /var/lib/heat-config/deployed/*.notify.json
Inspect again later:  ansible-playbook playbooks/launch-heat.yml -e work_dir=$work ; . $work/heat-launcher/heatrc ; openstack stack list
EOF2
