"""nccl-tests across the Sparks: find the binaries on every node, run each test once with
mpirun from rank 0 (the launch's rank order, host list and NCCL environment), and read the
result table into an NcclFact. A node without the binaries (the lab) records them as missing
tools; the nccl check then skips with that reason.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from fabric.errors import ParseError
from fabric.facts import MPIRUN, NCCL_SIZES, TESTS, Facts, NcclFact
from fabric.intent.model import Intent
from fabric.launch.spec import LaunchSpec, build_spec
from fabric.parsers import parse
from fabric.parsers.records import NcclTestSummary
from fabric.remote.batch import JobOutput

#: The collectives run, in order; mpirun launches them.
#: Safe sizes (`fabric.facts.NCCL_SIZES`).
SIZES = NCCL_SIZES
#: Where nccl-tests is usually built when it is not on PATH.
SEARCH_DIRS = ("$HOME/nccl-tests/build", "/opt/nccl-tests/build", "/usr/local/nccl-tests/build")
#: Wall-clock limit of one test run (mpirun under `timeout`).
RUN_TIMEOUT_S = 600

_FOUND = re.compile(r"^@@nccl-tool (\S+) (\S+)\s*$", re.M)


@dataclass(frozen=True)
class NcclJob:
    """One nccl-tests run: `command` is started on `hosts[0]` (rank 0)."""

    test: str
    hosts: tuple[str, ...]
    command: str


def detect_script() -> str:
    """Prints ``@@nccl-tool NAME PATH`` (``-`` when absent) for mpirun and each test."""
    dirs = " ".join(f'"{d}"' for d in SEARCH_DIRS)
    return (f"for t in {MPIRUN} {' '.join(TESTS)}; do p=$(command -v \"$t\" 2>/dev/null); "
            f'if [ -z "$p" ]; then for d in {dirs}; do '
            '[ -x "$d/$t" ] && { p="$d/$t"; break; }; done; fi; '
            'echo "@@nccl-tool $t ${p:--}"; done\n')


def parse_detected(output: str) -> dict[str, str | None]:
    """Path per tool from `detect_script` output (None: not installed)."""
    found: dict[str, str | None] = {t: None for t in (MPIRUN, *TESTS)}
    for m in _FOUND.finditer(output):
        found[m.group(1)] = None if m.group(2) == "-" else m.group(2)
    return found


def gid_index(intent: Intent, facts: Facts, hosts: Sequence[str]) -> int | None:
    """The RoCE v2 GID index of every planned twin of `hosts`, if one and the same everywhere."""
    seen: set[int] = set()
    for host in hosts:
        sf = facts.sparks.get(host)
        if sf is None:
            return None
        for iface in intent.interfaces(host):
            idx = [g.index for g in sf.gids if g.rdma == iface.rdma and g.gid_type == "RoCE v2"
                   and g.ipv4 == str(iface.address.ip)]
            if not idx:
                return None
            seen.add(min(idx))
    return seen.pop() if len(seen) == 1 else None


def mpirun_command(spec: LaunchSpec, hosts: Sequence[str], binary: str) -> str:
    """mpirun over `hosts` (a rank-ordered subset of the spec's) with the spec's environment."""
    addr = {r.host: r.fabric_addr for r in spec.ranks}
    ifname = spec.socket_ifname
    parts = [MPIRUN, "-np", str(len(hosts)), "-H", ",".join(f"{addr[h]}:1" for h in hosts),
             "--bind-to", "none", "--mca", "btl_tcp_if_include", ifname,
             "--mca", "oob_tcp_if_include", ifname]
    for var in spec.env:
        if var.value:
            parts += ["-x", f"{var.name}={var.value}"]
    cmd = " ".join(shlex.quote(p) for p in parts)
    return f"timeout {RUN_TIMEOUT_S} {cmd} {shlex.quote(binary)} {SIZES} -g 1"


def nccl_jobs(intent: Intent, facts: Facts,
              found: Mapping[str, Mapping[str, str | None]]) -> list[NcclJob]:
    """One job per test installed on every reachable Spark (rank order of the launch spec),
    with mpirun on rank 0; none with fewer than two such Sparks."""
    order = [h.name for h in intent.sparks if h.name in found and h.name in facts.sparks]
    if len(order) < 2:
        return []
    spec = build_spec(intent, entry=order[0], gid_index=gid_index(intent, facts, order))
    ranked = [r.host for r in spec.ranks if r.host in order]
    rank0 = ranked[0]
    if not found[rank0].get(MPIRUN):
        return []
    jobs: list[NcclJob] = []
    for test in TESTS:
        if all(found[h].get(test) for h in ranked):
            binary = found[rank0][test]
            assert binary is not None
            jobs.append(NcclJob(test, tuple(ranked), mpirun_command(spec, ranked, binary)))
    return jobs


def with_missing(facts: Facts, found: Mapping[str, Mapping[str, str | None]]) -> Facts:
    """The facts with each Spark's absent nccl-tests tools added to `SparkFacts.missing`."""
    sparks = dict(facts.sparks)
    for host, tools in found.items():
        sf = sparks.get(host)
        gone = [t for t, path in tools.items() if path is None and t not in (sf.missing if sf
                                                                               else ())]
        if sf is not None and gone:
            sparks[host] = replace(sf, missing=(*sf.missing, *gone))
    return replace(facts, sparks=sparks)


def nccl_fact(job: NcclJob, out: JobOutput) -> NcclFact:
    """The run's average bus bandwidth (GB/s), or why there is none (never raises)."""
    if out.exit_code is None:
        return NcclFact(job.test, job.hosts, None, "no output came back")
    try:
        records = parse("nccl_tests", out.text)
    except ParseError as exc:
        return NcclFact(job.test, job.hosts, None,
                        f"{MPIRUN} exited {out.exit_code}: {_tail(out.text)} ({exc.reason})")
    summary = next(r for r in records if isinstance(r, NcclTestSummary))
    if summary.out_of_bounds:
        return NcclFact(job.test, job.hosts, summary.avg_busbw_GBps,
                        f"{summary.out_of_bounds} out-of-bounds (wrong) values")
    if summary.avg_busbw_GBps is None:
        return NcclFact(job.test, job.hosts, None,
                        f"no '# Avg bus bandwidth' footer (exit {out.exit_code}): "
                        f"{_tail(out.text)}")
    if out.exit_code != 0:
        return NcclFact(job.test, job.hosts, summary.avg_busbw_GBps,
                        f"{MPIRUN} exited {out.exit_code}")
    return NcclFact(job.test, job.hosts, summary.avg_busbw_GBps)


def _tail(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "no output")[:200]
