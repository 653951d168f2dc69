"""The probes that ride along with a validation's facts, in the same burst per Spark: the ping
matrix, the bandwidth servers' start-up and the nccl-tests search; with counters judged, a
first stage of every host's "before" counters snapshot, done everywhere before the facts.

`FactsBurstProbes` plans them from the intent before any fact is read and hands the
collection the scripts as `fabric.collect.gather.ConnectionWork`; `results` reads what came
back into `FactsBurstResults`, which `fabric.probes.run` goes on from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fabric.collect.gather import CollectedHost, ConnectionWork
from fabric.facts import CounterSnapshot, Facts, PingFact
from fabric.intent.model import Intent
from fabric.probes.bandwidth import server_life_s
from fabric.probes.counters import (
    SPARK_TIMEOUT_S,
    rdma_map,
    read_spark_script,
    read_switch,
    spark_script,
)
from fabric.probes.nccl import detect_script, parse_detected
from fabric.probes.ping import (
    PROBE_MAX_S,
    PingProbe,
    burst_script,
    ping_probes,
    probes_by_host,
    read_burst,
)
from fabric.probes.run_bandwidth_pair import SERVER_START_TIMEOUT_S, servers_script
from fabric.probes.run_nccl_tests import DETECT_TIMEOUT_S
from fabric.probes.schedule import BandwidthTest, Schedule, schedule_bandwidth
from fabric.probes.servers import parse_ports
from fabric.remote.burst import Script, ScriptOutput

if TYPE_CHECKING:
    from rich.progress import Progress

#: The most tools one bandwidth test runs (iperf3, then ib_write_bw per twin and both twins):
#: the servers started before the facts are read live long enough for that.
MAX_TOOLS_PER_TEST = 4
#: Script names of the work that rides along with the facts batch.
PING, SERVERS, COUNTERS, NCCL = "ping", "servers", "counters", "nccl"


@dataclass(frozen=True)
class ProbeOptions:
    """Which probes to run and how long; duration None: the link profile's default.
    `counters`: snapshot every host's counters just before and just after the probes."""

    ping: bool = True
    bandwidth: bool = True
    duration_s: float | None = None
    rate: str | None = None  # iperf3 -b per twin (None: the profile's default)
    nccl: bool = False
    hosts: frozenset[str] | None = None  # --hosts: ping only among these
    counters: bool = False


@dataclass(frozen=True)
class FactsBurstResults:
    """What the probes that rode along with the facts gave: the pings (None: not run), the
    bandwidth servers' ports and the schedule they were started for, the counters' "before"
    snapshots, the nccl-tests tools found per host (None: not looked for)."""

    pings: tuple[PingFact, ...] | None = None
    ports: dict[str, int | None] | None = None
    servers_for: tuple[BandwidthTest, ...] = ()
    before: dict[str, CounterSnapshot] | None = None
    nccl_tools: dict[str, dict[str, str | None]] | None = None


class FactsBurstProbes:
    """The probes that ride along with one validation's facts, planned from the intent for
    the Sparks `sparks` before their facts are read: `work()` is what each host runs around
    its facts (`ConnectionWork`), `results` reads what came back (`FactsBurstResults`)."""

    def __init__(self, intent: Intent, opts: ProbeOptions, sparks: Sequence[str]) -> None:
        self.intent = intent
        self.opts = opts
        self.sparks = tuple(sparks)
        self.pings: dict[str, list[PingProbe]] = probes_by_host(
            ping_probes(intent, sources=sparks, targets=opts.hosts)) if opts.ping else {}
        self.schedule: Schedule | None = None
        self.life_s = 0.0
        if opts.bandwidth and len(sparks) >= 2:
            duration = opts.duration_s or intent.profile.bandwidth_test_s
            self.schedule = schedule_bandwidth(intent, duration, hosts=sorted(sparks))
            self.life_s = server_life_s(self.schedule, duration * MAX_TOOLS_PER_TEST)

    def work(self) -> ConnectionWork:
        """Pings, bandwidth servers and the nccl-tests search beside each Spark's facts
        batch; with counters judged, the snapshot first, and the servers and the search with
        it (they send nothing on the fabric), so only the pings are left before the rounds.
        With bandwidth rounds to come, the facts (but the rows the probes need first) are
        read behind them (`ConnectionWork.behind`)."""
        if not self.opts.counters:
            return ConnectionWork(scripts={h: self.spark_scripts(h) for h in self.sparks},
                                  behind=self.behind)
        return ConnectionWork(
            scripts={h: self.ping_scripts(h) for h in self.sparks},
            first_scripts={h: self.counter_scripts(h) + self.setup_scripts(h)
                           for h in self.sparks},
            first_switch=self.switch_counters, behind=self.behind)

    @property
    def behind(self) -> bool:
        """Whether the facts are read behind the bandwidth rounds: there are rounds, long
        enough to hide them."""
        return self.schedule is not None

    def counter_scripts(self, host: str) -> list[Script]:
        """A Spark's counters snapshot, as a script."""
        return [Script(COUNTERS, spark_script(self.intent, host), SPARK_TIMEOUT_S)]

    def switch_counters(self, api: Any) -> CounterSnapshot | None:
        """The switch's counters snapshot, on its open API connection."""
        sw = self.intent.switch
        return None if sw is None else read_switch(api, self.intent, sw.host)

    def spark_scripts(self, host: str) -> list[Script]:
        """A Spark's scripts beside its facts: pings, bandwidth servers, nccl-tests search."""
        return self.ping_scripts(host) + self.setup_scripts(host)

    def ping_scripts(self, host: str) -> list[Script]:
        """A Spark's ping burst (none where it pings nothing)."""
        if host not in self.pings:
            return []
        probes = self.pings[host]
        return [Script(PING, burst_script(probes), PROBE_MAX_S + 10,
                       read=lambda out: read_burst(probes, out))]

    def setup_scripts(self, host: str) -> list[Script]:
        """What a Spark readies for the probes that follow, sending nothing on the fabric:
        its bandwidth servers and the nccl-tests search."""
        scripts: list[Script] = []
        if self.schedule is not None:
            script = servers_script(host, self.schedule.tests, self.life_s)
            if script is not None:
                scripts.append(Script(SERVERS, script, SERVER_START_TIMEOUT_S,
                                      read=parse_ports))
        if self.opts.nccl:
            scripts.append(Script(NCCL, detect_script(), DETECT_TIMEOUT_S, read=parse_detected))
        return scripts

    def results(self, facts: Facts, collected: Mapping[str, CollectedHost],
                progress: Progress | None = None) -> FactsBurstResults:
        """What the hosts that answered brought back (a host that did not answer is left
        out, as the probes that follow leave it out)."""
        pings: list[PingFact] = []
        ports: dict[str, int | None] = {}
        before: dict[str, CounterSnapshot] = {}
        tools: dict[str, dict[str, str | None]] = {}
        rdma_of = rdma_map(facts)
        for host, got in sorted(collected.items()):
            if host not in facts.sparks:
                if got.first is not None and isinstance(got.first.switch, CounterSnapshot):
                    before[host] = got.first.switch
                continue
            if got.first is not None and (out := got.first.output(COUNTERS)) is not None:
                before[host] = read_spark_script(self.intent, host, got.first.started,
                                                 out.output, rdma_of.get(host, {}))
            if (out := got.alongside.output(PING)) is not None:
                found = out.value  # read in the host's task (`spark_scripts`)
                pings.extend(found)
                ping_row(progress, host, found)
            if (out := _either(got, SERVERS)) is not None:
                ports.update(out.value)
            if (out := _either(got, NCCL)) is not None and out.rc is not None:
                tools[host] = out.value
        return FactsBurstResults(pings=tuple(pings) if self.opts.ping else None,
                     ports=ports if self.schedule is not None else None,
                     servers_for=tuple(self.schedule.tests) if self.schedule is not None else (),
                     before=before if self.opts.counters else None,
                     nccl_tools=tools if self.opts.nccl else None)


def _either(got: CollectedHost, name: str) -> ScriptOutput | None:
    """The output of script `name`, from the first stage or from beside the facts."""
    found = got.first.output(name) if got.first is not None else None
    return found if found is not None else got.alongside.output(name)


def ping_row(progress: Progress | None, host: str, found: Sequence[PingFact],
              failed: str | None = None) -> None:
    """A progress row with how a host's pings went."""
    if progress is None:
        return
    lost = sum(1 for f in found if f.received == 0)
    status = ("[red]failed" if failed else "[green]done" if not lost
              else f"[yellow]{lost} lost")
    progress.add_task(f"ping {host}", total=1, completed=1,
                      status=f"{len(found)} pings: {status}")
