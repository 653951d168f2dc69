#!/usr/bin/env bash
# SGLang router (sglang-router) in front of 4 data-parallel servers.
# Rendered by `fabric launch dp --front sglang-router` for topology ring4 (intent b479ba72fc5ac8a6).
# Run it on the API gateway, where `pip install sglang-router` put sglang_router. It checks
# every server's /health and takes one out of rotation after 3 failed checks.
# Do not edit: re-render after any change to the fabric, and re-validate first.
set -euo pipefail
exec python3 -m sglang_router.launch_router \
  --host 0.0.0.0 --port 8080 \
  --policy cache_aware \
  --health-check-interval-secs 10 --health-failure-threshold 3 \
  --request-timeout-secs 3600 \
  --worker-urls \
  http://spark01.mgmt.studio.lan:30000 \
  http://spark02.mgmt.studio.lan:30000 \
  http://spark03.mgmt.studio.lan:30000 \
  http://spark04.mgmt.studio.lan:30000
