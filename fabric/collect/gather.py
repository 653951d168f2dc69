"""Collect the facts of a whole target: every Spark over SSH and the switch over its API,
in parallel (Nornir's threaded runner), with an optional live per-host progress display.

A host that cannot be read lands in `Facts.errors[host]` with a one-line reason (secrets
scrubbed); the other hosts complete. `families` narrows what is read to what those check
families judge (plus the fingerprint's inputs; see `spark_commands`). `ConnectionWork` is
work a validation's plan hands over to run on each host's connection at the same time: a
Spark's scripts run in one burst with its facts batch (`fabric.remote.burst`). With
`ConnectionWork.behind`, the facts are read behind what follows instead (a validation's
bandwidth rounds): each Spark's burst carries only the rows the probes need first
(`PROBE_ROWS`), the rest of its batch runs on a second channel of the same session, and the
switch is read in a thread; `finish` joins them. What the scripts are and mean is the
plan's (`fabric.probes`): this module only fans the collection out and hands back what came
back (`CollectedHost`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from fabric.devices.crs804.facts import collect_switch_facts
from fabric.devices.spark.commands import render_script
from fabric.devices.spark.facts import (
    build_from_transcript,
    collect_spark_facts,
    spark_batch,
)
from fabric.errors import InputError
from fabric.facts import Facts, SparkFacts, SwitchFacts
from fabric.intent.model import Intent
from fabric.neighbors import judge_lldpd, new_beacon
from fabric.remote.burst import Script, ScriptOutput, exec_burst
from fabric.remote.exec import SPARK_SSH, spark_session, start_script
from fabric.remote.nornir_setup import make_nornir
from fabric.remote.runner import describe_failure, run
from fabric.target import Target

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

ROLES = ("spark", "switch")


class HostProgress:
    """Per-host rows on a rich Progress (thread-safe: Progress serialises updates)."""

    def __init__(self, progress: Progress | None, hosts: list[str]) -> None:
        self.progress = progress
        self.rows: dict[str, TaskID] = {}
        self.lock = threading.Lock()
        if progress is not None:
            for host in hosts:
                self.rows[host] = progress.add_task(host, total=1, status="waiting")

    def update(self, host: str, status: str, done: bool = False) -> None:
        if self.progress is not None and host in self.rows:
            self.progress.update(self.rows[host], status=status, completed=1 if done else 0)


#: How long a Spark's facts batch may take (the LLDP wait included).
FACTS_TIMEOUT_S = 60.0
#: The facts batch's name in a burst.
FACTS = "facts"
#: The rows a Spark's facts batch runs in its burst when the rest is read behind the probes
#: (`ConnectionWork.behind`): the RDMA map and the GIDs, which decide the bandwidth tests'
#: tools (`fabric.probes.bandwidth.rdma_gids`) and the counters' RDMA devices. The LLDP
#: beacon is announced behind the rounds too, the sixth command of the rest, just before the
#: Spark's own LLDP read (which waits for its Spark neighbours' beacons, as it always did):
#: its `sudo -n lldpcli` was half of each Spark's burst before the first round (31 of 62 ms
#: of the lab's CPU). The switch read behind the rounds needs no beacon where its lanes'
#: links are older than their neighbours' last frames; after a re-plug it waits for the
#: beacons' frames as it waits for any fresh one (bounded, `SWITCH_LLDP_WAIT_S`).
PROBE_ROWS = frozenset({"ibdev2netdev", "rdma_link", "show_gids", "sysfs_gids"})


@dataclass(frozen=True)
class ConnectionWork:
    """Work handed to the collection (by a validation's plan, `fabric.probes.validation_plan`)
    to run on each host's open connection around its facts, so it rides along with them: a Spark's
    `scripts[host]` run in one burst with its facts batch. The first stage
    (`first_scripts[host]`, one burst per Spark; `first_switch(api)`) runs on every host as
    soon as it is connected, and is done everywhere before any host's facts are read.
    `behind`: the facts are read behind what the caller does next (see the module doc): the
    burst returns once the scripts and `PROBE_ROWS` are done."""

    scripts: Mapping[str, Sequence[Script]] = field(default_factory=dict)
    first_scripts: Mapping[str, Sequence[Script]] | None = None
    first_switch: Callable[[Any], Any] | None = None
    behind: bool = False

    @property
    def has_first(self) -> bool:
        """Whether there is a first stage to run before the facts."""
        return self.first_scripts is not None or self.first_switch is not None


@dataclass(frozen=True)
class StageOutput:
    """What one stage of `ConnectionWork` gave on one host: a Spark's script outputs (in
    order) and when its burst started, or what the call on the switch returned."""

    started: str
    scripts: tuple[ScriptOutput, ...] = ()
    switch: Any = None

    def output(self, name: str) -> ScriptOutput | None:
        """The output of the script called `name`, if it ran."""
        return next((o for o in self.scripts if o.name == name), None)


HostFacts = SparkFacts | SwitchFacts


class Behind:
    """The rest of one host's facts, read behind what the caller does next: `start()` sets
    it going (once; from any thread), `wait()` gives the host's facts (starting it first if
    nobody did). `begin()` starts the reading and returns the call that waits for it."""

    def __init__(self, begin: Callable[[], Callable[[], HostFacts]]) -> None:
        self._begin = begin
        self._wait: Callable[[], HostFacts] | None = None
        self._lock = threading.Lock()
        self._waited = threading.Lock()
        self._got: tuple[HostFacts | None, Exception | None] | None = None

    def start(self) -> None:
        with self._lock:
            if self._wait is not None:
                return
            try:
                self._wait = self._begin()
            except Exception as exc:  # the host's failure, raised where its facts are awaited
                failed = exc

                def fail() -> HostFacts:
                    raise failed

                self._wait = fail

    def wait(self) -> HostFacts:
        """The host's facts (or its failure, raised), read once, whoever asks first."""
        self.start()
        assert self._wait is not None
        with self._waited:
            if self._got is None:
                try:
                    self._got = (self._wait(), None)
                except Exception as exc:
                    self._got = (None, exc)
        facts, failed = self._got
        if failed is not None:
            raise failed
        assert facts is not None
        return facts


@dataclass(frozen=True)
class CollectedHost:
    """One host's facts, with what its `ConnectionWork` gave beside them (`alongside`) and in
    the first stage (`first`; None: there was none). Read behind (`ConnectionWork.behind`):
    `facts` holds what is read so far (a Spark's `PROBE_ROWS`; None for the switch) and
    `rest` reads the rest (`start_behind`, `finish`)."""

    facts: HostFacts | None
    alongside: StageOutput
    first: StageOutput | None = None
    rest: Behind | None = field(default=None, compare=False, repr=False)
    beacon: str | None = None  # the LLDP beacon the run announced, judged once all is read


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def facts_batch_rows(intent: Intent, host: str, families: Collection[str] | None,
                     beacon: bool = False) -> tuple[str, ...]:
    """The names of the rows a Spark's facts batch runs for `families` (in order, each once;
    the LLDP beacon row only with `beacon`, where the batch announces it)."""
    _, _, commands = spark_batch(intent, host, families=families,
                                 beacon=new_beacon() if beacon else None)
    return tuple(dict.fromkeys(c.name for c in commands))


def _first_stage(task: Task, api: Any, work: ConnectionWork) -> StageOutput:
    started = now()
    if task.host.get("role") == "switch":
        call = work.first_switch
        return StageOutput(started, switch=call(api) if call is not None else None)
    scripts = (work.first_scripts or {}).get(task.host.name, ())
    return StageOutput(started, tuple(exec_burst(api, scripts)) if scripts else ())


def open_host(task: Task, rows: HostProgress, work: ConnectionWork) -> Result:
    """Connect to the host and run the first stage of `work` on it. Result: a `StageOutput`."""
    host = task.host.name
    connection = "routeros_api" if task.host.get("role") == "switch" else SPARK_SSH
    try:
        rows.update(host, "connecting")
        api = task.host.get_connection(connection, task.nornir.config)
        rows.update(host, "connected")
        return Result(host=task.host, result=_first_stage(task, api, work), changed=False)
    except Exception:
        rows.update(host, "[red]failed", done=True)
        raise


def _spark_burst(task: Task, intent: Intent, scripts: Sequence[Script],
                 families: Collection[str] | None, beacon: str | None, behind: bool
                 ) -> CollectedHost:
    """The facts batch with `scripts`, side by side in one burst; `behind`: only the
    `PROBE_ROWS` there, the rest of the batch started on its own channel and left running."""
    host = task.host.name
    twins, used, commands = spark_batch(intent, host, families=families, beacon=beacon)
    conn = spark_session(task)
    started = now()
    first = [c for c in commands if c.name in PROBE_ROWS] if behind else list(commands)
    # The facts batch starts last: its `renice $$` then lowers the burst's own shell only,
    # once every other script has started at normal priority. The probe rows alone need no
    # login environment (their tools are in the sbin directories the batch adds to PATH)
    # and no lower priority: the bandwidth rounds wait for them as for the pings.
    batch = Script(FACTS, render_script(first, niced=not behind), FACTS_TIMEOUT_S,
                   login=not behind)
    *outs, facts_out = exec_burst(conn, [*scripts, batch])
    side = StageOutput(started, tuple(outs))
    if not behind:
        facts = build_from_transcript(intent, host, twins, used, commands, facts_out.output)
        return CollectedHost(facts, side)
    rest = [c for c in commands if c.name not in PROBE_ROWS]

    def begin() -> Callable[[], HostFacts]:
        running = start_script(conn, render_script(rest, behind=True), FACTS_TIMEOUT_S,
                               login=True)

        def read() -> HostFacts:
            _, raw = running.wait()
            return build_from_transcript(intent, host, twins, used, commands,
                                         facts_out.output + raw)
        return read

    return CollectedHost(build_from_transcript(intent, host, twins, used, first,
                                               facts_out.output), side, rest=Behind(begin))


def _in_a_thread(read: Callable[[], HostFacts]) -> Callable[[], Callable[[], HostFacts]]:
    """A `Behind` beginning: `read` in a thread of its own, and the call that waits for it."""
    def begin() -> Callable[[], HostFacts]:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="facts-behind")
        future: Future[HostFacts] = pool.submit(read)
        pool.shutdown(wait=False)
        return future.result
    return begin


def _with_work(task: Task, intent: Intent, work: ConnectionWork,
               first: StageOutput | None, beacon: str | None, **kw: Any) -> CollectedHost:
    """One host's facts with `work` done beside them."""
    if task.host.get("role") == "switch":
        started = StageOutput(now())
        if work.behind:
            rest = _in_a_thread(lambda: collect_switch_facts(task, intent, **kw).result)
            return CollectedHost(None, started, first, rest=Behind(rest))
        return CollectedHost(collect_switch_facts(task, intent, **kw).result, started, first)
    scripts = work.scripts.get(task.host.name, ())
    got = _spark_burst(task, intent, scripts, kw.get("families"), beacon, work.behind)
    return dataclasses.replace(got, first=first)


def collect_host_facts(task: Task, intent: Intent, rows: HostProgress,
                       close: bool = True, narrow: bool = False,
                       families: Collection[str] | None = None,
                       work: ConnectionWork | None = None,
                       first: Mapping[str, StageOutput] | None = None,
                       beacon: str | None = None, began: float | None = None) -> Result:
    """Collect one host's facts with the task of its role, then close its connection (unless
    `close` is False: the caller reuses it). `narrow`: only what `fabric gate` compares;
    `families`: only what those families judge; `beacon`: the LLDP beacon a Spark announces
    (`fabric.neighbors`); `began`: when the whole collection began (monotonic). With `work`,
    the result is a `CollectedHost` (`first`: each host's first stage, already run)."""
    host = task.host.name
    role = task.host.get("role")
    connection = "routeros_api" if role == "switch" else SPARK_SSH
    try:
        rows.update(host, "connecting")
        task.host.get_connection(connection, task.nornir.config)
        rows.update(host, "collecting")
        result: Any

        def waiting(what: str) -> None:
            rows.update(host, what)

        if work is not None:
            result = _with_work(task, intent, work, (first or {}).get(host), beacon,
                                narrow=narrow, families=families, on_wait=waiting,
                                began=began)
        elif role == "switch":
            result = collect_switch_facts(task, intent, narrow=narrow, families=families,
                                          on_wait=waiting, began=began).result
        else:
            result = collect_spark_facts(task, intent, narrow=narrow, families=families,
                                         beacon=beacon).result
        rows.update(host, "[green]done", done=True)
        return Result(host=task.host, result=result, changed=False)
    except Exception:
        rows.update(host, "[red]failed", done=True)
        raise
    finally:
        if close:
            task.host.close_connections()


def collect_facts(target: Target, hosts: list[str] | None = None,
                  progress: Progress | None = None, nornir: Nornir | None = None,
                  narrow: bool = False, families: Collection[str] | None = None) -> Facts:
    """Facts of every Spark and the switch of the target (or of `hosts`), collected at once.

    With `nornir`, run on it and leave its connections open for the caller's next tasks.
    `narrow`: only the fingerprint's inputs (`fabric gate`), one small batch per host.
    `families`: only what those check families judge (None: everything).
    """
    facts, _ = gather_facts(target, hosts, progress, nornir, narrow, families)
    return facts


def _nornir_for(target: Target, hosts: list[str] | None, nornir: Nornir | None
                ) -> tuple[Nornir, list[str]]:
    """The Nornir to collect on (`nornir` filtered, or a new exec-only one), and the hosts."""
    intent = target.intent
    known = [h for h in intent.cabled if intent.hosts[h].role in ROLES]
    if hosts is not None:
        unknown = sorted(set(hosts) - set(known))
        if unknown:
            raise InputError(f"--hosts: not in topology {intent.name}: {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
    wanted = sorted(hosts if hosts is not None else known)
    if nornir is None:
        return make_nornir(target, wanted), wanted
    return nornir.filter(filter_func=lambda h: h.name in set(wanted)), wanted


def gather_facts(target: Target, hosts: list[str] | None = None,
                 progress: Progress | None = None, nornir: Nornir | None = None,
                 narrow: bool = False, families: Collection[str] | None = None,
                 work: ConnectionWork | None = None,
                 on_opened: Callable[[str], None] | None = None
                 ) -> tuple[Facts, dict[str, CollectedHost]]:
    """`collect_facts`, plus each answering host's `CollectedHost` when `work` is given
    (`on_opened("connect, …")` when its first stage is done everywhere). With `work.behind`
    the facts are what is read so far (`finish` waits for the rest)."""
    intent = target.intent
    nr, wanted = _nornir_for(target, hosts, nornir)
    rows = HostProgress(progress, sorted(nr.inventory.hosts))
    started = datetime.now(UTC)
    errors: dict[str, str] = {}
    first: dict[str, StageOutput] = {}
    scrub = target.credentials.scrub
    if work is not None and work.has_first:
        opened, errors = run(nr, open_host, rows=rows, work=work, name="open",
                             on_failed=True, addressed=True, scrub=scrub)
        first = dict(opened)
        nr = nr.filter(filter_func=lambda h: h.name not in errors)
        if on_opened is not None:
            on_opened("connect, counters before")
    beacon = new_beacon()
    began = time.monotonic()  # a switch entry heard since is from the cable plugged in now
    got, failed = run(nr, collect_host_facts, hosts=[h for h in wanted if h not in errors],
                      intent=intent, rows=rows, close=nornir is None, narrow=narrow,
                      families=families, work=work, first=first, beacon=beacon,
                      began=began,
                      name="collect_facts",
                      on_failed=nornir is not None, addressed=True, scrub=scrub)
    errors |= failed
    collected = {h: r for h, r in got.items() if isinstance(r, CollectedHost)}
    sparks, switch = _by_role({h: r.facts if isinstance(r, CollectedHost) else r
                               for h, r in got.items()})
    facts = Facts(collected=started.isoformat(timespec="seconds"), topology=intent.name,
                  sparks=sparks, switch=switch, errors=dict(sorted(errors.items())))
    if work is not None and work.behind:
        return facts, {h: dataclasses.replace(c, beacon=beacon) for h, c in collected.items()}
    return judge_lldpd(intent, facts, beacon), collected


def _by_role(read: Mapping[str, HostFacts | None]
             ) -> tuple[dict[str, SparkFacts], SwitchFacts | None]:
    sparks = {h: f for h, f in read.items() if isinstance(f, SparkFacts)}
    return sparks, next((f for f in read.values() if isinstance(f, SwitchFacts)), None)


def start_behind(collected: Mapping[str, CollectedHost]) -> None:
    """Set every host's rest of the facts going, from a thread of its own: the caller goes
    on at once (a validation starts its first bandwidth round). The same thread then reads
    each host's rest as it comes back (its facts built, or its failure kept for `finish`):
    what the caller awaits after its work is then read already (a validation's main thread
    only waits through its rounds; 16 Sparks' facts took it 0.07 s after the last one)."""
    rests = [c.rest for c in collected.values() if c.rest is not None]

    def start_all() -> None:
        for rest in rests:
            rest.start()
        for rest in rests:
            with contextlib.suppress(Exception):  # raised again where `finish` waits
                rest.wait()

    if rests:
        threading.Thread(target=start_all, name="facts-behind", daemon=True).start()


def settle_behind(collected: Mapping[str, CollectedHost]) -> None:
    """Wait until every host's rest of the facts is read (a failure is raised where `finish`
    waits for it): the machines are quiet again."""
    for got in collected.values():
        if got.rest is not None:
            with contextlib.suppress(Exception):
                got.rest.wait()


def finish(target: Target, facts: Facts, collected: Mapping[str, CollectedHost]) -> Facts:
    """`facts` (what a collection with `ConnectionWork.behind` read first) completed: every
    host's rest of the facts waited for, a host whose rest failed moved to `errors` with the
    reason, and LLDP judged. What else `facts` carries (probes' results) is kept."""
    read: dict[str, HostFacts | None] = {**facts.sparks}
    if facts.switch is not None:
        read[facts.switch.host] = facts.switch
    errors = dict(facts.errors)
    beacon = None
    for host, got in sorted(collected.items()):
        if got.rest is None:
            continue
        beacon = got.beacon
        try:
            read[host] = got.rest.wait()
        except Exception as exc:
            read.pop(host, None)
            errors[host] = target.credentials.scrub(describe_failure(exc, "ssh"))
    sparks, switch = _by_role(read)
    done = dataclasses.replace(facts, sparks=sparks, switch=switch,
                               errors=dict(sorted(errors.items())))
    return judge_lldpd(target.intent, done, beacon)
