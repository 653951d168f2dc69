#!/usr/bin/env bash
# The lab part of `make demo`: build the star4 lab, show it, then push and validate it when
# those commands exist. Usage: scripts/demo.sh [LABNAME]   (needs root; leaves the lab up)
set -euo pipefail

LAB="${1:-demo}"
cd "$(dirname "$0")/.."
FABRIC="${FABRIC:-.venv/bin/fabric}"

if [[ $EUID -ne 0 ]]; then
  echo "demo: the lab needs root (network namespaces, sshd); run: sudo $0 $LAB" >&2
  exit 2
fi

has_command() {  # does `fabric --help` list this command?
  "$FABRIC" --help 2>/dev/null | grep -Eq "^[│| ]+$1[[:space:]]"
}

echo "== fabric lab up star4 --name $LAB" >&2
"$FABRIC" lab down --name "$LAB"
"$FABRIC" lab up star4 --name "$LAB"

echo "== fabric lab status" >&2
"$FABRIC" lab status

for step in "push --lab $LAB --apply" "validate --lab $LAB"; do
  cmd="${step%% *}"
  if has_command "$cmd"; then
    echo "== fabric $step" >&2
    # shellcheck disable=SC2086  # the step is a fixed word list
    "$FABRIC" $step
  else
    echo "== fabric $cmd: not available in this build yet, skipped" >&2
  fi
done

echo >&2
echo "The lab $LAB is still up. Try: ssh -i /run/fabric/labs/$LAB/ssh/id_ed25519" \
  "-o UserKnownHostsFile=/run/fabric/labs/$LAB/ssh/known_hosts root@<mgmt ip>" >&2
echo "Tear it down with: $FABRIC lab down --name $LAB" >&2
