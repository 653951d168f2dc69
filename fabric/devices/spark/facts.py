"""Nornir task: one Spark's facts over one SSH session, every command in one batch."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from nornir.core.task import Result, Task

from fabric.devices.spark.commands import (
    SparkCommand,
    gate_commands,
    render_script,
    spark_commands,
)
from fabric.facts import SparkFacts
from fabric.facts_builder import Section, build_spark_facts
from fabric.intent.model import Intent
from fabric.remote.batch import require_all, split_batch
from fabric.remote.exec import exec_script, spark_session


def spark_twins(intent: Intent, host: str) -> tuple[list[str], list[str]]:
    """(every fabric twin of the host's port map, the twins the intent cables)."""
    try:
        spec = intent.hosts[host]
    except KeyError:
        raise ValueError(f"{host} is not a host of intent {intent.name}") from None
    twins = [t.netdev for port in spec.ports.values() for t in port]
    used = [i.netdev for i in intent.interfaces(host)]
    return twins, used


def run_batch(connection: Any, script: str, read_timeout: float) -> str:
    """The transcript of the whole batch, run in the login environment on an exec channel of
    the session (`read_sections` splits it)."""
    _rc, out = exec_script(connection, script, read_timeout, login=True)
    return out


def read_sections(commands: Sequence[SparkCommand], raw: str) -> dict[str, Section]:
    """Each command's section from the batch's transcript, in command order; TranscriptError
    when any did not come back (the session broke mid-batch)."""
    jobs = require_all(split_batch(raw, [c.name for c in commands]))
    return {j.name: Section(j.name, j.text.rstrip("\n"), j.exit_code or 0) for j in jobs}


def beacon_twins(intent: Intent, host: str) -> list[str]:
    """The host's cabled twins whose cable leads to another Spark (they hear its beacon)."""
    return [i.netdev for i in intent.interfaces(host)
            if intent.hosts[i.peer.host].role == "spark"]


def spark_batch(intent: Intent, host: str, narrow: bool = False,
                families: Collection[str] | None = None, beacon: str | None = None
                ) -> tuple[list[str], list[str], tuple[SparkCommand, ...]]:
    """(twins the builder reads, cabled twins, the batch) for one Spark: the gate's narrow
    batch, the rows `families` need, or (None) every row; with `beacon`, announced and waited
    for (`commands.beacon_command`)."""
    twins, used = spark_twins(intent, host)
    heard = beacon_twins(intent, host) if beacon is not None else []
    if narrow:
        return used, used, gate_commands(used, beacon, heard)
    return twins, used, spark_commands(twins, used, families, beacon, heard)


def build_from_transcript(intent: Intent, host: str, twins: Sequence[str],
                          used: Sequence[str], commands: Sequence[SparkCommand],
                          raw: str) -> SparkFacts:
    """SparkFacts from one batch transcript (which LLDP entries are fresh is judged once
    every host's facts are in: `fabric.neighbors.judge_lldpd`)."""
    return build_spark_facts(host, twins, read_sections(commands, raw), commands, used)


def collect_spark_facts(task: Task, intent: Intent, read_timeout: float = 60.0,
                        narrow: bool = False,
                        families: Collection[str] | None = None,
                        beacon: str | None = None) -> Result:
    """Collect SparkFacts: links, addresses, routes, ethtool per twin, RDMA map and GIDs,
    LLDP neighbors (`beacon` announced first and waited for), versions, time sync,
    FORWARD policy, QoS - one login, one batch.

    `families`: only the rows those check families need (`SparkCommand.families`; None: all).
    `narrow`: only what `fabric gate` compares (links, addresses, LLDP, GIDs, the cabled
    twins' ethtool; `commands.gate_commands`). Read-only, so a dry run collects too.
    Missing tools and unparseable sections are recorded in the facts (`missing`, `notes`); a
    broken session raises and fails the host.
    """
    twins, used, commands = spark_batch(intent, task.host.name, narrow, families, beacon)
    conn = spark_session(task)
    raw = run_batch(conn, render_script(commands), read_timeout)
    facts = build_from_transcript(intent, task.host.name, twins, used, commands, raw)
    return Result(host=task.host, result=facts, changed=False)
