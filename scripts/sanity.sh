#!/usr/bin/env bash
# `make sanity`: ansible-test sanity on the staged collection (build/stage, what
# `make collection` packs) laid out as ansible_collections/ephemeral/heat/ in a
# temporary directory, offline, with Debian's packages only. The tests that
# would fetch pip from the internet are skipped (SANITY_SKIP, from the
# Makefile, which says why) and covered here instead:
#   yamllint          ansible-test's own yamllinter.py and configs, with Debian's yamllint,
#                     on every YAML file and on the EXAMPLES of the sidecar docs;
#   runtime-metadata  ansible-test's own runtime-metadata.py, with Debian's python3-voluptuous,
#                     on meta/runtime.yml;
#   pep8              Debian's pycodestyle with ansible-test's ignore list and line length;
#   ansible-doc       (ansible-test's only looks at .py plugins) ansible-doc of every module;
#   action-plugin-docs (ansible-test's counts .py modules only) each plugins/action/NAME.py
#                     has a module NAME, documented by plugins/modules/NAME.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=${1:-build/stage}
[ -f "$stage/galaxy.yml" ] || { echo "sanity: $stage is not a staged collection: run 'make sanity'" >&2; exit 2; }
py=/usr/bin/python3
sanity=/usr/lib/python3/dist-packages/ansible_test/_util/controller/sanity
for need in "$py" /usr/bin/ansible-test "$sanity/yamllint/yamllinter.py" "$sanity/code-smell/runtime-metadata.py"; do
  [ -e "$need" ] || { echo "sanity: $need is missing: run 'make deps' (Debian's ansible-core)" >&2; exit 2; }
done
"$py" -c 'import yamllint, voluptuous, pycodestyle' 2>/dev/null ||
  { echo "sanity: Debian's yamllint, python3-voluptuous and python3-pycodestyle are needed: run 'make deps'" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
coll=$tmp/ansible_collections/ephemeral/heat
mkdir -p "$coll"
cp -a "$stage/." "$coll/"
cd "$coll"
fail=0

skips=()
for t in ${SANITY_SKIP:-}; do skips+=(--skip-test "$t"); done
echo "sanity: ansible-test sanity (skipped: ${SANITY_SKIP:-none})"
ansible-test sanity --local --python 3.11 --python-interpreter "$py" --color no "${skips[@]}" || fail=1

echo "sanity: yamllint (ansible-test's configuration)"
out=$(find . -type f \( -name '*.yml' -o -name '*.yaml' \) | sed 's|^\./||' | sort |
  "$py" "$sanity/yamllint/yamllinter.py")
"$py" - "$out" <<'EOF' || fail=1
import json, sys
msgs = json.loads(sys.argv[1])["messages"]
for m in msgs:
    print("%(path)s:%(line)s:%(column)s: %(code)s: %(message)s" % m)
sys.exit(1 if msgs else 0)
EOF
# EXAMPLES of the sidecar docs, as ansible-test lints a Python module's (its modules.yml).
"$py" - "$sanity/yamllint/config/modules.yml" plugins/modules/*.yml <<'EOF' || fail=1
import sys, yaml
from yamllint import linter
from yamllint.config import YamlLintConfig
conf = YamlLintConfig(file=sys.argv[1])
bad = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    ex = doc.get("EXAMPLES") if isinstance(doc, dict) else None
    if not isinstance(ex, str) or not ex.strip():
        print("%s: EXAMPLES is missing or empty" % path)
        bad = 1
        continue
    for p in linter.run(ex, conf, path):
        print("%s: EXAMPLES line %d:%d: %s: %s" % (path, p.line, p.column, p.rule or p.level, p.desc))
        bad = 1
sys.exit(bad)
EOF

echo "sanity: pep8 (Debian's pycodestyle, ansible-test's settings)"
pyfiles=$(find . -type f -name '*.py' | sort)
if [ -n "$pyfiles" ]; then
  ignore=$(paste -sd, "$sanity/pep8/current-ignore.txt")
  # shellcheck disable=SC2086
  "$py" -m pycodestyle --max-line-length 160 --ignore "$ignore" $pyfiles || fail=1
fi

echo "sanity: runtime-metadata (meta/runtime.yml)"
out=$("$py" "$sanity/code-smell/runtime-metadata.py" meta/runtime.yml 2>&1) || fail=1
[ -z "$out" ] || { echo "$out"; fail=1; }

echo "sanity: action-plugin-docs (an action plugin per documented module)"
for plugin in plugins/action/*.py; do
  [ -e "$plugin" ] || continue
  m=$(basename "$plugin" .py)
  [ -f "plugins/modules/$m.yml" ] || { echo "$plugin: action plugin has no module $m documented by plugins/modules/$m.yml"; fail=1; }
done

echo "sanity: ansible-doc of every module"
for doc in plugins/modules/*.yml; do
  m=$(basename "$doc" .yml)
  if ! out=$(ANSIBLE_COLLECTIONS_PATH=$tmp PAGER=cat ansible-doc "ephemeral.heat.$m" 2>&1) ||
     ! grep -q "^> EPHEMERAL.HEAT.${m^^} " <<<"$out" || grep -q WARNING <<<"$out"; then
    echo "ansible-doc ephemeral.heat.$m:"; head -n 5 <<<"$out"; fail=1
  fi
done

if [ $fail -ne 0 ]; then
  echo "sanity: FAILED" >&2
  exit 1
fi
echo "sanity: clean"
