#!/usr/bin/env bash
# Runs molecule scenarios with plain ansible-playbook, in molecule's order
# (molecule itself is not installable here): for each scenario, the steps of
# its molecule.yml scenario.test_sequence among
#   syntax prepare converge idempotence side_effect verify cleanup
# cleanup also runs when an earlier step failed. Usage:
#   molecule/run.sh [SCENARIO ...]     (default: every scenario)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
export ANSIBLE_COLLECTIONS_PATH="$root/.collections"
export ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 PY_COLORS=0
export MOLECULE_PROJECT_DIRECTORY="$root"

if [ ! -d "$ANSIBLE_COLLECTIONS_PATH/ansible_collections/ephemeral/heat" ]; then
  echo "molecule/run.sh: the collection is not installed; run 'make install' first" >&2
  exit 2
fi

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

sequence() {
  "$py" - "$1" <<'PY'
import sys, yaml
conf = yaml.safe_load(open(sys.argv[1])) or {}
seq = (conf.get("scenario") or {}).get("test_sequence") or \
    ["syntax", "prepare", "converge", "idempotence", "side_effect", "verify", "cleanup"]
known = {"syntax", "prepare", "converge", "idempotence", "side_effect", "verify", "cleanup"}
print(" ".join(s for s in seq if s in known))
PY
}

recap_changed() { # prints the sum of changed= over the recap lines of a log
  awk '/^PLAY RECAP/{r=1;next} r && /changed=/{for(i=1;i<=NF;i++) if($i ~ /^changed=/){split($i,a,"=");s+=a[2]}} END{print s+0}' "$1"
}

run_step() { # scenario dir, playbook name, log
  local dir=$1 book=$2 log=$3
  ansible-playbook -i "$MOLECULE_INVENTORY" "$dir/$book" >"$log" 2>&1
}

run_scenario() {
  local name=$1 dir="$root/molecule/$1" failed=0 step
  [ -f "$dir/molecule.yml" ] || { echo "no scenario $name"; return 1; }
  export MOLECULE_SCENARIO_NAME=$name MOLECULE_SCENARIO_DIRECTORY=$dir
  export MOLECULE_EPHEMERAL_DIRECTORY; MOLECULE_EPHEMERAL_DIRECTORY=$(mktemp -d "/tmp/molecule-$name.XXXXXX")
  export MOLECULE_HEAT_API_PORT; MOLECULE_HEAT_API_PORT=$(free_port)
  export MOLECULE_INVENTORY="$MOLECULE_EPHEMERAL_DIRECTORY/inventory"
  printf 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n' >"$MOLECULE_INVENTORY"
  local logs="$MOLECULE_EPHEMERAL_DIRECTORY/logs"; mkdir -p "$logs"
  echo "== scenario $name (work dir $MOLECULE_EPHEMERAL_DIRECTORY, api port $MOLECULE_HEAT_API_PORT)"
  for step in $(sequence "$dir/molecule.yml"); do
    [ $failed -eq 0 ] || [ "$step" = cleanup ] || continue
    local book=$step.yml log="$logs/$step.log"
    case $step in
      syntax) book=converge.yml ;;
      idempotence) book=converge.yml ;;
      side_effect) book=side_effect.yml ;;
    esac
    if [ ! -f "$dir/$book" ]; then
      [ "$step" = converge ] && { echo "   $step: $book missing"; failed=1; }
      continue
    fi
    local start=$SECONDS
    case $step in
      syntax) ansible-playbook -i "$MOLECULE_INVENTORY" --syntax-check "$dir/converge.yml" >"$log" 2>&1 ;;
      *) run_step "$dir" "$book" "$log" ;;
    esac
    local rc=$?
    if [ $rc -eq 0 ] && [ "$step" = idempotence ]; then
      local c; c=$(recap_changed "$log")
      if [ "$c" != 0 ]; then
        echo "   idempotence: the second converge changed $c task(s):"
        grep -B1 -E '^changed:' "$log" | grep -E '^TASK|^changed' | sed 's/^/     /' | head -20
        rc=1
      fi
    fi
    if [ $rc -eq 0 ]; then
      echo "   $step: ok ($((SECONDS-start)) s)"
    else
      echo "   $step: FAILED ($((SECONDS-start)) s); last lines of $log:"
      tail -n 40 "$log" | sed 's/^/     /'
      failed=1
    fi
  done
  if [ $failed -eq 0 ]; then rm -rf "$MOLECULE_EPHEMERAL_DIRECTORY"; fi
  return $failed
}

scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  for d in "$root"/molecule/*/molecule.yml; do scenarios+=("$(basename "$(dirname "$d")")"); done
fi
passed=0 failed=0
for s in "${scenarios[@]}"; do
  if run_scenario "$s"; then passed=$((passed+1)); else failed=$((failed+1)); fi
done
echo "molecule: $passed passed, $failed failed"
[ $failed -eq 0 ]
