"""`fabric launch rehearse`: a real torch.distributed all-reduce/all-gather across the nodes,
with exactly the env, ranks and rendezvous address that the launch will use."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources

from fabric.launch.proof import marker_line
from fabric.launch.run_rehearsal_rank import RankRun, run_rehearsal_rank
from fabric.launch.spec import LaunchSpec
from fabric.parsers import parse
from fabric.parsers.records import NcclTestSummary
from fabric.remote.nornir_setup import make_nornir
from fabric.remote.runner import run
from fabric.target import Target

#: The per-rank script, shipped inside the package (a wheel install carries it).
SCRIPT = resources.files("fabric.launch.scripts").joinpath("rehearse.py")
_ERROR = re.compile(r"REHEARSAL-ERROR:\s*(.*)")
#: What fabric/launch/scripts/rehearse.py prints (exit 2) where torch cannot be imported.
NO_TORCH = "torch is not importable"


@dataclass(frozen=True)
class RehearsalResult:
    passed: bool
    output: str  # rank 0's nccl-tests-compatible output
    busbw: dict[str, float]  # collective -> average bus bandwidth (GB/s)
    rows: list[dict[str, object]]
    problems: dict[str, str]  # host -> reason / hint
    no_torch: list[str] = field(default_factory=list)  # hosts whose python has no torch
    subnet_aware: str | None = None  # NCCL's "Subnet-aware routing" line, if a rank logged it
    outputs: dict[str, str] = field(default_factory=dict)  # host -> its rank's output


def rank_env(spec: LaunchSpec, rank: int, port: int,
             overrides: dict[str, str] | None = None, backend: str = "gloo") -> dict[str, str]:
    """The launch env for one rank, plus torch.distributed's rendezvous variables.

    One rank per node and one GPU per node (GB10): LOCAL_RANK 0 of LOCAL_WORLD_SIZE 1, so
    NCCL uses cuda:0 of the devices the node exposes. CUDA_VISIBLE_DEVICES is left to the
    node (or `--env`); gloo runs on CPU and hides the GPUs so it never initialises CUDA.
    """
    env = {v.name: v.value for v in spec.env if v.value}
    env.update(RANK=str(rank), WORLD_SIZE=str(spec.world_size), LOCAL_RANK="0",
               LOCAL_WORLD_SIZE="1", GROUP_RANK=str(rank), MASTER_ADDR=spec.master_addr,
               MASTER_PORT=str(port))
    if backend == "gloo":
        env["CUDA_VISIBLE_DEVICES"] = ""
    env.update(overrides or {})
    return env


def rehearse(target: Target, spec: LaunchSpec, backend: str = "gloo", python: str = "python3",
             sizes: tuple[str, str] = ("1M", "16M"), iters: int = 5, port: int = 29500,
             timeout: float = 60.0, overrides: dict[str, str] | None = None) -> RehearsalResult:
    """Run every rank at once through Nornir (one SSH session per node) and judge rank 0.
    NCCL on a ring runs with NCCL_DEBUG=INFO (unless overridden), so a subnet-aware NCCL's
    "Subnet-aware routing" line shows in the output."""
    if backend == "nccl" and spec.kind == "ring":
        overrides = {"NCCL_DEBUG": "INFO", **(overrides or {})}
    hosts = [r.host for r in spec.ranks]
    nr = make_nornir(target, hosts=hosts, workers=len(hosts))
    script = SCRIPT.read_text()
    args = ["--backend", backend, "-b", sizes[0], "-e", sizes[1], "-n", str(iters),
            "--timeout", str(int(timeout))]
    rank_of = {r.host: r.rank for r in spec.ranks}
    ran, errors = run(nr, lambda task: run_rehearsal_rank(
        task, script=script, env=rank_env(spec, rank_of[task.host.name], port, overrides,
                                          backend),
        python=python, args=args, timeout=timeout), hosts=hosts,
        scrub=target.credentials.scrub)
    problems: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for host in hosts:
        if host in errors:
            outputs[host] = problems[host] = errors[host]
            continue
        rank: RankRun = ran[host]
        outputs[host] = rank.output
        if rank.exit_code != 0:
            m = _ERROR.search(rank.output)
            problems[host] = target.credentials.scrub(m.group(1) if m else rank.output[-400:])
    output = outputs.get(spec.entry, "")
    busbw: dict[str, float] = {}
    rows: list[dict[str, object]] = []
    if not problems:
        for block in split_collectives(output):
            for record in parse("nccl_tests", block):
                if isinstance(record, NcclTestSummary):
                    if record.avg_busbw_GBps is not None and record.collective:
                        busbw[record.collective] = record.avg_busbw_GBps
                else:
                    rows.append(dict(record.__dict__))
    no_torch = sorted(h for h, why in problems.items() if NO_TORCH in why)
    aware = next((line for line in map(marker_line, outputs.values()) if line), None)
    return RehearsalResult(not problems and bool(busbw), output, busbw, rows, problems,
                           no_torch, aware, outputs)


def split_collectives(output: str) -> list[str]:
    """One nccl-tests block per collective (the header is repeated), as nccl-tests prints
    one collective per binary; the parser reads one block at a time."""
    marker = "# Collective test starting:"
    head, *parts = output.split(marker)
    return [head + marker + part for part in parts]
