#!/usr/bin/env bash
# The lab part of `make demo`: build the star4 lab, show it, push the intent to it (dry run,
# then --apply) and validate it. Usage: scripts/demo.sh [LABNAME]   (needs root; leaves the lab up)
set -euo pipefail

LAB="${1:-demo}"
cd "$(dirname "$0")/.."
FABRIC="${FABRIC:-.venv/bin/fabric}"

if [[ $EUID -ne 0 ]]; then
  echo "demo: the lab needs root (network namespaces, sshd); run: sudo $0 $LAB" >&2
  exit 2
fi

echo "== fabric lab up star4 --name $LAB" >&2
"$FABRIC" lab down --name "$LAB"
"$FABRIC" lab up star4 --name "$LAB" --switch-prepared

echo "== fabric lab status" >&2
"$FABRIC" lab status

echo "== fabric push --lab $LAB (dry run: what would change)" >&2
"$FABRIC" push --lab "$LAB"

echo "== fabric push --lab $LAB --apply" >&2
"$FABRIC" push --lab "$LAB" --apply

echo "== fabric validate --lab $LAB" >&2
"$FABRIC" validate --lab "$LAB" --html "demo-report.html"
echo "HTML report: $(pwd)/demo-report.html" >&2

echo >&2
echo "The lab $LAB is still up. Try: ssh -i /run/fabric/labs/$LAB/ssh/id_ed25519" \
  "-o UserKnownHostsFile=/run/fabric/labs/$LAB/ssh/known_hosts dgxadmin@<mgmt ip>" >&2
echo "Tear it down with: $FABRIC lab down --name $LAB" >&2
