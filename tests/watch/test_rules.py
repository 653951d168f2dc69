"""The shipped alert rules: valid (`promtool check rules`), rendered from their template, and
behaving as documented on series of our own metrics (`promtool test rules`). promtool comes
from Debian's prometheus package (`make apt`); without it these fail, never skip."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fabric.watch.rules import DEFAULTS, render_rules, shipped_rules
from tests.watch.prom import tool

CABLE = "spark02:p0--crs804:qsfp56-dd-2-1"
LINK = (f'side="spark",cable="{CABLE}",spark="spark02",twin="enp1s0f0np0",rail="0",'
        'lane="qsfp56-dd-2-1"')
OTHER = ('side="spark",cable="spark01:p0--crs804:qsfp56-dd-1-1",spark="spark01",'
         'twin="enp1s0f0np0",rail="0",lane="qsfp56-dd-1-1"')


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("promtool"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False)


def test_the_shipped_file_is_the_template_rendered_with_the_defaults() -> None:
    assert shipped_rules() == render_rules(), "run: python -c 'from fabric.watch.rules import " \
        "render_rules; open(\"fabric/watch/alerts.yml\",\"w\").write(render_rules())'"


def test_unknown_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="windw"):
        render_rules(windw="1m")


def test_promtool_accepts_the_shipped_rules(tmp_path: Path) -> None:
    (tmp_path / "alerts.yml").write_text(shipped_rules())
    proc = promtool("check", "rules", "alerts.yml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 9 rules found" in proc.stdout


UNIT_TESTS = f"""
rule_files: [alerts.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'fabric_link_downs_total{{{LINK}}}'
        values: '0 1 2 3 4 5 6 6 6 6 6 6 6 6 6 6'
      - series: 'fabric_link_downs_total{{{OTHER}}}'
        values: '0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'fabric_watch_up{{host="spark03"}}'
        values: '1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0'
      - series: 'fabric_watch_up{{host="spark01"}}'
        values: '1x15'
      - series: 'fabric_link_errors_total{{{OTHER},direction="rx"}}'
        values: '0 0 0 10 20 30 40 50 60 70 80 90 100 110 120 130'
      - series: 'fabric_link_pause_frames_total{{{LINK},direction="rx"}}'
        values: '0+120000x15'
      - series: 'fabric_lldp_neighbor_match{{{LINK}}}'
        values: '1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0'
      - series: 'fabric_link_mtu_bytes{{{LINK}}}'
        values: '9000 9000 1500 1500 1500 1500 1500 1500 1500 1500 1500 1500 1500 1500 1500'
      - series: 'fabric_link_mtu_intent_bytes{{{LINK}}}'
        values: '9000x15'
      - series: 'fabric_gate_drift{{{LINK},field="mtu"}}'
        values: '0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'fabric_gate_drift{{{OTHER},field="mtu"}}'
        values: '0x15'
    alert_rule_test:
      - eval_time: 5m
        alertname: FabricCableFlapping
        exp_alerts:
          - exp_labels: {{severity: critical, cable: "{CABLE}"}}
            exp_annotations:
              summary: "cable {CABLE} is flapping"
              description: "cable {CABLE} went down 5 times in 5m: reseat or replace it."
      - eval_time: 15m
        alertname: FabricCableFlapping
        exp_alerts: []
      - eval_time: 1m
        alertname: FabricHostGone
        exp_alerts: []
      - eval_time: 4m
        alertname: FabricHostGone
        exp_alerts:
          - exp_labels: {{severity: critical, host: spark03}}
            exp_annotations: {{summary: "fabric watch cannot read spark03"}}
      - eval_time: 8m
        alertname: FabricErrorsRising
        exp_alerts:
          - exp_labels: {{severity: warning, cable: "spark01:p0--crs804:qsfp56-dd-1-1",
                         side: spark, spark: spark01, twin: enp1s0f0np0,
                         lane: qsfp56-dd-1-1}}
            exp_annotations:
              summary: "errors rising on cable spark01:p0--crs804:qsfp56-dd-1-1 (spark)"
      - eval_time: 8m
        alertname: FabricPauseStorm
        exp_alerts:
          - exp_labels: {{severity: warning, cable: "{CABLE}", side: spark, spark: spark02,
                         twin: enp1s0f0np0, lane: qsfp56-dd-2-1, direction: rx}}
            exp_annotations: {{summary: "pause storm on cable {CABLE}: 2k frames/s"}}
      - eval_time: 5m
        alertname: FabricLldpMismatch
        exp_alerts:
          - exp_labels: {{severity: warning, {LINK.replace('=', ': ')}}}
            exp_annotations:
              summary: "lane qsfp56-dd-2-1 does not hear the cable's planned far end ({CABLE})"
      - eval_time: 5m
        alertname: FabricMtuDrift
        exp_alerts:
          - exp_labels: {{severity: warning, {LINK.replace('=', ': ')}}}
            exp_annotations:
              summary: "MTU of spark end of cable {CABLE} is 1500, not the intent's"
      - eval_time: 5m
        alertname: FabricGateDrift
        exp_alerts:
          - exp_labels: {{severity: warning, cable: "{CABLE}", side: spark, field: mtu}}
            exp_annotations:
              summary: "mtu of the spark end of cable {CABLE} is not what the gate passed"
"""


def test_the_rules_fire_and_clear_as_documented(tmp_path: Path) -> None:
    assert DEFAULTS["window"] == "5m" and DEFAULTS["flaps"] == 3  # what UNIT_TESTS assume
    (tmp_path / "alerts.yml").write_text(shipped_rules())
    (tmp_path / "alerts_test.yml").write_text(UNIT_TESTS)
    proc = promtool("test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_promtool_tests_can_fail(tmp_path: Path) -> None:
    """A one-link-down cable is not flapping (3 in 5m): expecting it to fire must fail."""
    (tmp_path / "alerts.yml").write_text(shipped_rules())
    (tmp_path / "alerts_test.yml").write_text(
        UNIT_TESTS.split("    alert_rule_test:")[0] + """    alert_rule_test:
      - eval_time: 5m
        alertname: FabricCableFlapping
        exp_alerts:
          - exp_labels: {severity: critical, cable: "spark01:p0--crs804:qsfp56-dd-1-1"}
""")
    proc = promtool("test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert proc.returncode != 0 and "FabricCableFlapping" in proc.stdout + proc.stderr
