"""`fabric launch sglang|vllm|dp|rehearse|stop|proof-nccl`: launch scripts from a validated
fabric, bare metal or in containers, with engine arguments and presets."""

from __future__ import annotations

import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.cli.common import InventoryOpt as InvOpt
from fabric.cli.common import LabOpt, TopologyOpt, resolve_target
from fabric.errors import FabricError, InputError, RunIncomplete

TORCH_HINT = ("Install it with `make test`, or `.venv/bin/pip install -e '.[rehearse]'` "
              "(torch 2.13; the CPU build: add `--extra-index-url "
              "https://download.pytorch.org/whl/cpu`), or point --python at a Python with "
              "torch on every node.")

if TYPE_CHECKING:
    from fabric.launch.apply import LaunchMeta
    from fabric.launch.engines import EngineArgs
    from fabric.launch.rehearse import RehearsalResult
    from fabric.launch.spec import LaunchSpec
    from fabric.report.model import Report
    from fabric.target import Target

launch = typer.Typer(help="Render and rehearse model launches from a validated fabric.",
                     no_args_is_help=True)


class GateRefused(FabricError):
    """The fabric has no passing, fresh report for the current intent (exit 1)."""

    exit_code = 1


class ProofMissing(FabricError):
    """A log offered as proof of a subnet-aware NCCL does not show one (exit 1)."""

    exit_code = 1


class Backend(StrEnum):
    gloo = "gloo"
    nccl = "nccl"


class Front(StrEnum):
    nginx = "nginx"
    sglang_router = "sglang-router"


def _gate(target: Target, report: Path | None, max_age: float, force: bool,
          log: Path, live: bool = False) -> Report | None:
    """The passing report, or refuse; `--force` overrides loudly and logs it. `live` (a
    launch that starts processes on the nodes): the report must also still describe the
    fabric as it is now (`fabric gate`'s live fingerprint check)."""
    from fabric.cli import err_console
    from fabric.gate import check_live, default_report_path, evaluate

    path = report or default_report_path(target.lab)
    verdict = evaluate(path, target.intent.intent_hash, max_age_s=max_age)
    if live:
        verdict = check_live(verdict, target)
    if verdict.ok:
        return verdict.report
    if not force:
        raise GateRefused(f"launch refused: {verdict.reason}. Run `fabric validate` until it "
                          "passes (or --force, which is logged).")
    warning = (f"WARNING: --force: launching on a fabric that did not pass the gate: "
               f"{verdict.reason}")
    err_console.print(warning, style="bold white on red")
    _log(log, warning)
    return None


def _spec(target: Target, entry: str, report: Report | None) -> LaunchSpec:
    from fabric.launch.spec import build_spec, validated_gid_index

    mgmt = None
    if target.lab:
        from fabric.lab.lifecycle.registry import load_lab

        mgmt = load_lab(target.lab).mgmt
    return build_spec(target.intent, entry=entry, gid_index=validated_gid_index(report),
                      mgmt_addresses=mgmt)


def _log(log: Path, line: str) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as fh:
        fh.write(f"{datetime.datetime.now(datetime.UTC).isoformat()} {line}\n")


def _ring_tp_check(target: Target, engine: str, tp: int, force: bool, log: Path) -> None:
    """Refuse multi-node TP on a ring without a recorded subnet-aware NCCL (exit 1)."""
    from fabric.cli import err_console
    from fabric.launch.proof import ring_tp_refusal

    refusal = ring_tp_refusal(target.intent, engine, tp, target.lab)
    if refusal is None:
        return
    if not force:
        raise GateRefused(f"launch refused: {refusal}")
    warning = f"WARNING: --force: launching without a subnet-aware NCCL proof: {refusal}"
    err_console.print(warning, style="bold white on red")
    _log(log, warning)


def _apply(target: Target, spec: LaunchSpec, engine: str, files: dict[str, str],
           api_port: int, forced: bool, health_timeout: float, log: Path,
           meta: LaunchMeta) -> None:
    """Start the scripts, wait for health, print per node; exit 0 / 1 / 3."""
    from rich.table import Table

    from fabric.cli import err_console
    from fabric.launch.apply import apply_launch

    def progress(msg: str) -> None:
        err_console.print(f"[dim]{msg}[/]", highlight=False)

    out = apply_launch(target, spec, engine, files, api_port, forced, health_timeout,
                       progress, meta)
    rec = out.record
    _log(log, f"apply {engine} run {rec.run_id} forced={rec.forced} pids "
              + " ".join(f"{h}={p}" for h, p in sorted(rec.pids.items()))
              + (f" image {rec.image} containers "
                 + " ".join(f"{h}={c}" for h, c in sorted(rec.containers.items()))
                 if rec.image else "")
              + (f" engine-args {' '.join(rec.engine_args)}" if rec.engine_args else "")
              + f" -> {'healthy' if out.healthy else 'NOT healthy'} in {out.waited_s:.1f} s"
              + ("" if rec.pids else " (started nowhere: " + "; ".join(
                  f"{n.host}: {n.reason}" for n in out.nodes.values()
                  if n.state != "not started") + ")"))
    table = Table(title=f"launch {engine} run {rec.run_id}")
    for col in ("node", "pid", "state", "detail"):
        table.add_column(col)
    style = {"healthy": "green", "started": "yellow"}
    for node in out.nodes.values():
        table.add_row(node.host, str(node.pid or "-"),
                      f"[{style.get(node.state, 'red')}]{node.state}[/]", node.reason)
    err_console.print(table)
    for node in out.nodes.values():
        if node.log_tail and node.state != "healthy":
            err_console.print(f"--- {node.host}: last lines of {rec.run_dir}/{node.host}.log",
                              highlight=False, markup=False)
            err_console.print(node.log_tail, highlight=False, markup=False)
    for note in out.notes:
        err_console.print(f"note: {note}", highlight=False, markup=False)
    for url, ok in out.health.items():
        err_console.print(f"health {url}: {'ok' if ok else 'no answer'}", highlight=False)
    typer.echo(f"RUN_ID {rec.run_id}")
    if out.healthy:
        err_console.print(f"[green]healthy[/] after {out.waited_s:.1f} s; stop it with "
                          f"`fabric launch stop{' --lab ' + target.lab if target.lab else ''}`",
                          highlight=False)
    if out.exit_code == 3:
        down = "; ".join(f"{n.host}: {n.reason}" for n in out.nodes.values()
                         if n.state == "unreachable")
        raise RunIncomplete(f"unreachable (the other nodes were started): {down}")
    if out.exit_code:
        raise typer.Exit(out.exit_code)


_FORCE = typer.Option(False, help="Launch without a passing gate (or, on a ring, without a "
                      "subnet-aware NCCL proof).")
_ENV = typer.Option([], "--env", help="Extra VAR=VALUE for every node (rendered, commented).")
_CONTAINER = typer.Option(
    None, "--container", metavar="IMAGE", help="Run the engine in this image (`docker run`, "
    "host network and IPC, GPUs, RDMA); `default`: the engine's image from "
    "fabric/launch/engines.yaml. Without it: bare metal.")
_ENGINE_ARG = typer.Option([], "--engine-arg", metavar="ARG", help="Pass ARG to the engine "
                           "(repeat; `--engine-arg=--mem-fraction-static=0.8`).")
_PRESET = typer.Option(None, help="Per-model engine arguments from engines.yaml, e.g. "
                       "deepseek-v4.1-flash (--engine-arg comes after them).")
_FRONT = typer.Option(Front.nginx, help="Data parallel: the front rendered for the gateway.")
_APPLY = typer.Option(False, "--apply", help="Start the scripts on the nodes and wait for the "
                      "API health endpoint.")
_HEALTH_TIMEOUT = typer.Option(1800, help="Seconds --apply waits for health (weights load "
                               "slowly).")


def _say_rendered(engine: str, files: dict[str, str], out: Path, spec: LaunchSpec,
                  image: str | None, args: EngineArgs, model: str) -> None:
    from fabric.cli import err_console
    from fabric.launch.render import model_line

    err_console.print(f"rendered {len(files)} files for {engine} in {out}/ "
                      f"(ranks: {', '.join(r.host for r in spec.ranks)})", highlight=False)
    err_console.print(f"container: {image} (docker run, names fabric-{engine}-<node>)"
                      if image else "container: none (bare metal)", highlight=False)
    err_console.print("engine arguments: " + (" ".join(args.args) or "(none)")
                      + (f" (preset {args.preset})" if args.preset else ""),
                      highlight=False, markup=False)
    hf = model_line(model, image)
    if hf:
        err_console.print(hf, highlight=False, markup=False)


def _render_cmd(engine: str) -> None:
    @launch.command(engine)
    def command(lab: str | None = LabOpt, inventory: Path | None = InvOpt,
                topology: str | None = TopologyOpt,
                model: str = typer.Option("/models/model", help="Model path on every node."),
                entry: str = typer.Option("spark01", help="API entry node (rank 0)."),
                tp: int | None = typer.Option(None, help="Tensor-parallel size."),
                pp: int = typer.Option(1, help="Pipeline-parallel size (vLLM)."),
                out: Path = typer.Option(Path("launch-out"), help="Directory for scripts."),
                report: Path | None = typer.Option(None, help="Validation report JSON."),
                max_age: float = typer.Option(3600, help="Max report age, seconds."),
                force: bool = _FORCE,
                api_port: int = typer.Option(30000, help="API port of the servers."),
                set_env: list[str] = _ENV, container: str | None = _CONTAINER,
                engine_arg: list[str] = _ENGINE_ARG, preset: str | None = _PRESET,
                front: Front = _FRONT, apply: bool = _APPLY,
                health_timeout: float = _HEALTH_TIMEOUT) -> None:
        """Render per-node launch scripts; refuses without a passing, fresh report.
        With --apply, start them on the nodes and wait until the API is healthy."""
        from fabric.launch.engines import container_image, engine_args, split_engine_args
        from fabric.launch.plan_record import record_plan, write_scripts
        from fabric.launch.render import container_name, effective_tp, render
        from fabric.launch.spec import env_pairs, with_extra_env, with_ip_addresses
        from fabric.launch.state import refuse_second_launch

        target = resolve_target(lab, inventory, topology)
        if front is not Front.nginx and engine != "dp":
            raise InputError(f"--front is for `fabric launch dp`, not {engine}")
        image = container_image(engine, container)
        args = engine_args(engine, preset, split_engine_args(engine_arg))
        extra = env_pairs(set_env)
        if apply:
            refuse_second_launch(target.lab)
        passed = _gate(target, report, max_age, force, out / "launch.log", live=apply)
        spec = with_extra_env(_spec(target, entry, passed), extra)
        if engine == "vllm":
            spec = with_ip_addresses(spec)
        tp_size = effective_tp(spec, engine, tp, pp)
        _ring_tp_check(target, engine, tp_size, force, out / "launch.log")
        files = render(spec, engine, model=model, tp=tp, pp=pp, api_port=api_port,
                       container=image, engine_args=args.args, front=front.value)
        names = {r.host: container_name(engine, r.host) for r in spec.ranks} if image else {}
        write_scripts(out, files)
        record_plan(out, spec, engine, tp=tp_size, pp=pp, image=image, names=names,
                    preset=args.preset, engine_args=args.args, front=front.value)
        _say_rendered(engine, files, out, spec, image, args, model)
        if apply:
            from fabric.launch.apply import LaunchMeta

            _apply(target, spec, engine, files, api_port, passed is None, health_timeout,
                   out / "launch.log", LaunchMeta(names, image, args.preset, args.args, extra))

    command.__name__ = f"launch_{engine}"


for _engine in ("sglang", "vllm", "dp"):
    _render_cmd(_engine)


def _say_rehearsal(result: RehearsalResult, target: Target, backend: Backend) -> None:
    """Record a subnet-aware NCCL's proof; the bandwidth table and averages (stderr)."""
    from rich.table import Table

    from fabric.cli import err_console

    if result.subnet_aware:
        from fabric.launch.proof import proof_path, record_proof

        record_proof("\n".join(result.outputs.values()),
                     f"fabric launch rehearse --backend {backend.value}", target.intent,
                     target.lab)
        err_console.print(f"NCCL is subnet-aware ({result.subnet_aware}); proof recorded in "
                          f"{proof_path(target.lab)}", highlight=False, markup=False)
    table = Table(title="launch rehearsal (bus bandwidth per message size)")
    for col in ("size (B)", "op", "time (us)", "busbw (GB/s)"):
        table.add_column(col)
    for row in result.rows:
        table.add_row(str(row["size_bytes"]), str(row["redop"]), f"{row['oop_time_us']:.1f}",
                      f"{row['oop_busbw_GBps']:.2f}")
    err_console.print(table)
    for name, bw in result.busbw.items():
        err_console.print(f"{name}: average bus bandwidth {bw:.4f} GB/s")


@launch.command("rehearse")
def rehearse_cmd(lab: str | None = LabOpt, inventory: Path | None = InvOpt,
                 topology: str | None = TopologyOpt,
                 entry: str = typer.Option("spark01", help="Rank 0 / API entry node."),
                 backend: Backend = typer.Option(Backend.gloo),
                 python: str | None = typer.Option(None, help="Python with torch on nodes."),
                 min_bytes: str = typer.Option("1M", "-b"),
                 max_bytes: str = typer.Option("16M", "-e"),
                 iters: int = typer.Option(5, "-n"),
                 timeout: float = typer.Option(60, help="Seconds for ranks to meet."),
                 report: Path | None = typer.Option(None, help="Validation report JSON."),
                 max_age: float = typer.Option(3600),
                 force: bool = typer.Option(False, help="Rehearse without a passing gate."),
                 set_env: list[str] = typer.Option([], "--env", help="Override VAR=VALUE."),
                 ) -> None:
    """All-reduce and all-gather across the nodes with the launch's env, ranks and
    rendezvous; bandwidth per message size; a clear hint when ranks cannot meet. Needs torch
    (the `rehearse` extra); a subnet-aware NCCL's log line is recorded as the ring's proof."""
    import importlib.util
    import sys

    from fabric.cli import err_console
    from fabric.launch.rehearse import rehearse
    from fabric.launch.spec import env_pairs

    if python is None and importlib.util.find_spec("torch") is None:
        raise InputError(f"fabric launch rehearse needs torch, which {sys.executable} does not "
                         f"have (`make demo` installs only what validation needs). {TORCH_HINT}")
    target = resolve_target(lab, inventory, topology)
    passed = _gate(target, report, max_age, force, Path("launch-out") / "launch.log")
    spec = _spec(target, entry, passed)
    overrides = env_pairs(set_env)
    err_console.print(f"rehearsing {backend.value} across {spec.world_size} ranks "
                      f"({', '.join(r.host for r in spec.ranks)}), rendezvous "
                      f"{spec.master_addr}:29500")
    result = rehearse(target, spec, backend=backend.value, python=python or sys.executable,
                      sizes=(min_bytes, max_bytes), iters=iters, timeout=timeout,
                      overrides=overrides)
    if result.no_torch:
        raise RunIncomplete(f"the rehearsal could not run: torch is not importable by "
                            f"{python or sys.executable} on {', '.join(result.no_torch)}. "
                            f"{TORCH_HINT}")
    if not result.passed:
        for host, reason in sorted(result.problems.items()):
            err_console.print(f"[red]{host}[/]: {reason}", highlight=False)
        raise GateRefused("rehearsal failed: the ranks did not complete the collectives")
    _say_rehearsal(result, target, backend)
    typer.echo(result.output)


@launch.command("stop")
def stop_cmd(lab: str | None = LabOpt, inventory: Path | None = InvOpt,
             topology: str | None = TopologyOpt,
             out: Path = typer.Option(Path("launch-out"), help="Directory of launch.log."),
             ) -> None:
    """Stop exactly the processes of the recorded launch (their sessions), verify they are
    gone, and forget the launch; nothing recorded is nothing to do."""
    from fabric.cli import err_console
    from fabric.launch.apply import stop_launch

    target = resolve_target(lab, inventory, topology)
    done = stop_launch(target, progress=lambda m: err_console.print(m, highlight=False))
    if done.record is None:
        err_console.print("no launch recorded: nothing to stop", highlight=False)
        return
    _log(out / "launch.log", f"stop run {done.record.run_id}: killed "
         + " ".join(f"{h}={len(k)}" for h, k in sorted(done.killed.items()))
         + (" containers " + " ".join(c for _h, cs in sorted(done.containers.items())
                                      for c in cs) if done.record.containers else "")
         + (" ray " + " ".join(f"{h}={r!r}" for h, r in sorted(done.ray.items()))
            if done.ray else ""))
    if done.errors:
        why = "; ".join(f"{h}: {e}" for h, e in sorted(done.errors.items()))
        raise RunIncomplete(f"could not stop run {done.record.run_id} on: {why} (kept in the "
                            "launch record; run `fabric launch stop` again)")
    boxes = sum(len(c) for c in done.containers.values())
    err_console.print(f"stopped run {done.record.run_id} on {len(done.killed)} nodes"
                      + (f" ({boxes} containers)" if done.record.containers else "")
                      + f" in {done.duration_s:.1f} s", highlight=False)


@launch.command("proof-nccl")
def proof_cmd(log: Path = typer.Argument(..., help="nccl-tests (or rehearsal) output, run "
                                         "with NCCL_DEBUG=INFO across the nodes."),
              lab: str | None = LabOpt, inventory: Path | None = InvOpt,
              topology: str | None = TopologyOpt) -> None:
    """Record that the nodes' NCCL is subnet-aware (the log shows "Subnet-aware routing"):
    multi-node tensor parallel on a ring is refused without this proof."""
    from fabric.cli import err_console
    from fabric.launch.proof import MARKER, marker_line, proof_path, record_proof

    target = resolve_target(lab, inventory, topology)
    try:
        text = log.read_text(errors="replace")
    except OSError as exc:
        raise InputError(f"{log}: {exc.strerror or exc}") from None
    if marker_line(text) is None:
        raise ProofMissing(f"{log}: no {MARKER!r} line: this NCCL is not subnet-aware (or the "
                           "run lacked NCCL_DEBUG=INFO); nothing recorded")
    proof = record_proof(text, str(log), target.intent, target.lab)
    err_console.print(f"recorded: {proof.line}", highlight=False, markup=False)
    err_console.print(f"proof for {proof.topology} (intent {proof.intent_hash}) in "
                      f"{proof_path(target.lab)}"
                      + ("" if target.intent.kind == "ring" else "; only rings need it"),
                      highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(launch, name="launch")
