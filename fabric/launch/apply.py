"""`fabric launch ... --apply` and `fabric launch stop`: start the rendered scripts on the
nodes through Nornir (one SSH session per node), wait for the API health endpoint, report per
node, and stop exactly the recorded processes."""

from __future__ import annotations

import re
import shlex
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from fabric.launch.check_launch_image import ImageContents, check_launch_image
from fabric.launch.check_launch_process import ProcessState, check_launch_process
from fabric.launch.engines import load_engines
from fabric.launch.render import NGINX_CONF, ROUTER_SCRIPT, image_check, node_env, ray_missing
from fabric.launch.spec import LaunchSpec
from fabric.launch.start_launch_process import StartedProcess, start_launch_process
from fabric.launch.state import (
    LaunchRecord,
    launch_state_path,
    load_record,
    new_run_id,
    remote_run_dir,
    save_record,
)
from fabric.launch.stop_launch_process import StoppedProcess, stop_launch_process
from fabric.remote.nornir_setup import make_nornir
from fabric.remote.runner import NOT_RUN, describe_failure, run_described
from fabric.remote.shell import RemoteCommandFailed
from fabric.target import Target

Progress = Callable[[str], None]
NodeState = Literal["healthy", "started", "failed", "exited", "unreachable", "not started"]
_SERVER = re.compile(r"^\s*server\s+(\S+):(\d+)\b", re.M)
_WORKER = re.compile(r"^\s*http://([^\s:/]+):(\d+)\b", re.M)


@dataclass
class NodeOutcome:
    """One node of an applied launch: its pid, what became of it, and its log tail."""

    host: str
    state: NodeState
    pid: int | None = None
    reason: str = ""
    log_tail: str = ""


@dataclass
class ApplyOutcome:
    """Everything `--apply` learnt; `exit_code` 0 healthy, 1 not healthy, 3 unreachable."""

    record: LaunchRecord
    nodes: dict[str, NodeOutcome]
    health: dict[str, bool]  # health URL -> answered 200
    waited_s: float
    healthy: bool
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if any(n.state == "unreachable" for n in self.nodes.values()):
            return 3
        return 0 if self.healthy else 1


def health_urls(spec: LaunchSpec, engine: str, files: dict[str, str],
                api_port: int) -> dict[str, str | None]:
    """{health URL: host serving it}. SGLang and vLLM serve `/health` on the entry only;
    data parallel: every server the rendered front sends to (the nginx upstream servers or the
    sglang-router worker URLs; None: not a node)."""
    addr = {r.host: r.mgmt_host or r.host for r in spec.ranks}
    if engine != "dp":
        return {f"http://{addr[spec.entry]}:{api_port}/health": spec.entry}
    by_addr = {a: h for h, a in addr.items()}
    if NGINX_CONF in files:
        servers = _SERVER.findall(files[NGINX_CONF])
    else:
        servers = _WORKER.findall(files[ROUTER_SCRIPT])
    return {f"http://{h}:{p}/health": by_addr.get(h) for h, p in servers}


def probe(url: str, timeout: float = 2.0) -> bool:
    """True when `url` answers 200 (no proxy: the nodes are on the management LAN)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as resp:
            return int(resp.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _run(target: Target, nr: Any, task: Callable[..., Any], hosts: list[str]
         ) -> tuple[dict[str, Any], dict[str, tuple[NodeState, str]]]:
    """Per host: the task's result, or what became of the node and why (`_failure`)."""
    return run_described(nr, task, lambda exc, _where: _failure(target, exc), hosts=hosts,
                         not_run=("unreachable", NOT_RUN))


def _failure(target: Target, exc: BaseException) -> tuple[NodeState, str]:
    if isinstance(exc, RemoteCommandFailed):
        return "failed", target.credentials.scrub(str(exc))
    return "unreachable", target.credentials.scrub(describe_failure(exc))


@dataclass(frozen=True)
class LaunchMeta:
    """What the launch record keeps besides pids: each node's container (none: bare metal),
    the image, the preset and engine arguments, and the `--env` pairs (for `stop`)."""

    containers: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    preset: str | None = None
    engine_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ImageVerdict:
    """What the look into a node's image (or python3) found: a `problem` keeps the launch from
    starting; a `note` is said and the launch goes on."""

    problem: str = ""
    note: str = ""


def image_verdict(engine: str, image: str | None, host: str,
                  missing: Collection[str]) -> ImageVerdict:
    """Judge the modules `host` lacks for `engine` (in `image`; None: bare metal), naming the
    fix. No Ray in an image with pip is only a note: the rendered script installs it."""
    data = load_engines().engines[engine]
    where = f"image {image}" if image else f"python3 on {host}"
    absent = [m for m in data.modules if m in missing]
    if absent:
        fix = (f"use an image that has it (--container default: {data.image})" if image else
               f"install {engine} on every node, or launch in a container (--container "
               f"default: {data.image})")
        return ImageVerdict(problem=f"{where} has no {', '.join(absent)}: {fix}")
    if not data.ray or "ray" not in missing:
        return ImageVerdict()
    if image is None:
        return ImageVerdict(problem=ray_missing(None, host, data.ray))
    if "pip" in missing:
        return ImageVerdict(problem=f"image {image} has no Ray and no pip to install it: build "
                            f"an image with Ray (pip install {shlex.quote(data.ray)}) and "
                            "pass it with --container")
    return ImageVerdict(note=ray_missing(image, host, data.ray))


def _look_into_images(target: Target, nr: Any, spec: LaunchSpec, engine: str,
                      image: str | None, timeout: float, progress: Progress
                      ) -> tuple[dict[str, NodeOutcome], list[str]]:
    """Before anything starts: look for the engine's modules (and Ray) on every node, in the
    image the launch runs or its python3. (Outcomes of the nodes that cannot launch, notes.)"""
    commands = {r.host: image_check(engine, image, node_env(spec, r, engine))
                for r in spec.ranks}
    if not all(commands.values()):
        return {}, []
    where = f"image {image}" if image else "python3"
    modules = load_engines().engines[engine].modules
    progress(f"looking for {', '.join(modules)} and Ray in {where} on every node"
             + (" (a first run pulls the image)" if image else ""))
    hosts = list(commands)
    found, errors = _run(target, nr, lambda task: check_launch_image(
        task, command=commands[task.host.name] or "", where=where, timeout=timeout), hosts)
    bad: dict[str, NodeOutcome] = {}
    notes: list[str] = []
    for host in hosts:
        if host in errors:
            state, reason = errors[host]
            bad[host] = NodeOutcome(host, state, reason=reason)
            continue
        contents: ImageContents = found[host]
        verdict = image_verdict(engine, image, host, contents.missing)
        if verdict.problem:
            bad[host] = NodeOutcome(host, "failed", reason=verdict.problem)
        if verdict.note:
            notes.append(f"{host}: {verdict.note}")
    for line in [*notes, *(f"{h}: {n.state}: {n.reason}" for h, n in bad.items())]:
        progress(line)
    return bad, notes


def _refused(target: Target, spec: LaunchSpec, engine: str, forced: bool, meta: LaunchMeta,
             run_id: str, bad: dict[str, NodeOutcome], notes: list[str]) -> ApplyOutcome:
    """The outcome of a launch that started nowhere, because these nodes cannot run it."""
    nodes = {r.host: bad.get(r.host) or NodeOutcome(
        r.host, "not started", reason=f"{', '.join(sorted(bad))} cannot run this launch")
        for r in spec.ranks}
    record = LaunchRecord(
        run_id=run_id, engine=engine, topology=spec.topology,
        intent_hash=spec.intent_hash, lab=target.lab, forced=forced,
        started=datetime.now(UTC).isoformat(), run_dir="", image=meta.image,
        preset=meta.preset, engine_args=list(meta.engine_args), env=dict(meta.env))
    return ApplyOutcome(record, nodes, {}, 0.0, False, notes=notes)


def apply_launch(target: Target, spec: LaunchSpec, engine: str, files: dict[str, str],
                 api_port: int, forced: bool, health_timeout: float,
                 progress: Progress = lambda _m: None,
                 meta: LaunchMeta | None = None) -> ApplyOutcome:
    """Look into every node's image (or python3) for what the script runs; then start every
    node's script, record the launch, and poll health (and the processes) until healthy,
    hopeless (a tensor-parallel rank died) or `health_timeout`. Nothing starts anywhere when a
    node lacks what the launch needs."""
    meta = meta or LaunchMeta()
    hosts = [r.host for r in spec.ranks]
    run_id = new_run_id()
    run_dir = remote_run_dir(run_id)
    nr = make_nornir(target, hosts=hosts, workers=len(hosts))
    try:
        bad, notes = _look_into_images(target, nr, spec, engine, meta.image, health_timeout,
                                       progress)
        if bad:
            return _refused(target, spec, engine, forced, meta, run_id, bad, notes)
        started, errors = _run(target, nr, lambda task: start_launch_process(
            task, run_dir=run_dir, script_name=f"{task.host.name}-{engine}.sh",
            script=files[f"{task.host.name}-{engine}.sh"], run_id=run_id), hosts)
        nodes: dict[str, NodeOutcome] = {}
        for host in hosts:
            if host in started:
                proc: StartedProcess = started[host]
                nodes[host] = NodeOutcome(host, "started", proc.pid)
                progress(f"{host}: started (pid {proc.pid}) in {run_dir}")
            else:
                state, reason = errors[host]
                nodes[host] = NodeOutcome(host, state, reason=reason)
                progress(f"{host}: {state}: {reason}")
        record = LaunchRecord(
            run_id=run_id, engine=engine, topology=spec.topology, intent_hash=spec.intent_hash,
            lab=target.lab, forced=forced, started=datetime.now(UTC).isoformat(),
            run_dir=run_dir, pids={h: n.pid for h, n in nodes.items() if n.pid is not None},
            containers={h: c for h, c in meta.containers.items() if nodes[h].pid is not None},
            image=meta.image, preset=meta.preset, engine_args=list(meta.engine_args),
            env=dict(meta.env))
        if record.pids:
            save_record(record, launch_state_path(target.lab))
        urls = health_urls(spec, engine, files, api_port)
        out = ApplyOutcome(record, nodes, dict.fromkeys(urls, False), 0.0, False,
                           notes=notes)
        _wait(target, nr, out, urls, engine, run_dir, health_timeout, progress)
        return out
    finally:
        nr.close_connections()


def _wait(target: Target, nr: Any, out: ApplyOutcome, urls: dict[str, str | None],
          engine: str, run_dir: str, timeout: float, progress: Progress) -> None:
    """Poll the health URLs; every few seconds also check the processes over SSH."""
    nodes = out.nodes
    tensor_parallel = engine != "dp"
    start = time.monotonic()
    next_check = next_note = start
    interval = 0.25
    while True:
        now = time.monotonic()
        for url in [u for u, ok in out.health.items() if not ok]:
            host = urls[url]
            if host is None or nodes[host].state in ("started", "healthy"):
                out.health[url] = probe(url)
        for url, host in urls.items():
            if out.health[url] and host is not None:
                nodes[host].state = "healthy"
        if now >= next_check or all(out.health.values()):
            _check(target, nr, out, run_dir)
            next_check = now + 3.0
        broken = [n for n in nodes.values() if n.state in ("failed", "exited", "unreachable")]
        waiting = [u for u, ok in out.health.items()
                   if not ok and (urls[u] is None or nodes[urls[u] or ""].state == "started")]
        out.waited_s = now - start
        if all(out.health.values()) and not broken:
            if tensor_parallel:
                for n in nodes.values():
                    n.state = "healthy"
            out.healthy = True
            return
        if (tensor_parallel and broken) or not waiting:
            return
        if now - start > timeout:
            out.timed_out = True
            for url in waiting:
                host = urls[url]
                if host is not None:
                    nodes[host].reason = f"no 200 from {url} within {timeout:.0f} s"
            _check(target, nr, out, run_dir, force_tail=True)
            return
        if now >= next_note:
            progress(f"waiting for {', '.join(waiting)} ({now - start:.0f}/{timeout:.0f} s)")
            next_note = now + 10.0
        time.sleep(interval)
        interval = min(interval * 1.5, 2.0)


def _check(target: Target, nr: Any, out: ApplyOutcome, run_dir: str,
           force_tail: bool = False) -> None:
    """Mark nodes whose process has exited (with their log tail)."""
    live = {h: n for h, n in out.nodes.items() if n.pid is not None
            and n.state in ("started", "healthy")}
    if not live:
        return
    sub = nr.filter(filter_func=lambda h: h.name in live)
    states, errors = _run(target, sub, lambda task: check_launch_process(
        task, pid=live[task.host.name].pid or 0, log=f"{run_dir}/{task.host.name}.log"),
        list(live))
    for host, node in live.items():
        if host in errors:
            node.state, node.reason = errors[host]
            continue
        state: ProcessState = states[host]
        if not state.alive:
            node.state = "exited"
            node.reason = node.reason or "the process exited"
            node.log_tail = target.credentials.scrub(state.log_tail)
        elif force_tail:
            node.log_tail = target.credentials.scrub(state.log_tail)


@dataclass
class StopOutcome:
    """What `launch stop` did per node: pids killed, containers stopped, what `ray stop` said,
    or why a node could not be handled."""

    record: LaunchRecord | None
    killed: dict[str, tuple[int, ...]]
    errors: dict[str, str]
    duration_s: float
    containers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ray: dict[str, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 3 if self.errors else 0


def stop_launch(target: Target, state_path: Path | None = None,
                progress: Progress = lambda _m: None) -> StopOutcome:
    """Stop the recorded launch's containers, Ray daemons (vLLM: on every node) and processes
    (idempotent); the record keeps only the nodes that could not be handled, and is removed
    when none are left."""
    path = state_path or launch_state_path(target.lab)
    record = load_record(path)
    start = time.monotonic()
    if record is None:
        return StopOutcome(None, {}, {}, 0.0)
    hosts = sorted(record.pids)
    grace = float(load_engines().container.stop_grace_s) if record.containers else 20.0
    nr = make_nornir(target, hosts=hosts, workers=max(1, len(hosts)))
    try:
        ok, bad = _run(target, nr, lambda task: stop_launch_process(
            task, pid=record.pids[task.host.name], run_id=record.run_id,
            containers=[c for h, c in record.containers.items() if h == task.host.name],
            ray=record.engine == "vllm", env=record.env, grace_s=grace), hosts)
    finally:
        nr.close_connections()
    killed: dict[str, tuple[int, ...]] = {}
    boxes: dict[str, tuple[str, ...]] = {}
    ray: dict[str, str] = {}
    for host, res in ok.items():
        stopped: StoppedProcess = res
        killed[host], boxes[host] = stopped.killed, stopped.containers
        if stopped.ray:
            ray[host] = stopped.ray
        done = [f"container {c}" for c in stopped.containers]
        if stopped.killed:
            done.append(f"pids {' '.join(map(str, stopped.killed))}")
        progress(f"{host}: " + (f"stopped ({', '.join(done)})" if done else "nothing running")
                 + (f"; ray: {stopped.ray}" if stopped.ray else ""))
    errors = {h: why for h, (_state, why) in bad.items()}
    left = {h: p for h, p in record.pids.items() if h in errors}
    if left:
        save_record(replace(record, pids=left, containers={
            h: c for h, c in record.containers.items() if h in left}), path)
    else:
        path.unlink(missing_ok=True)
    return StopOutcome(record, killed, errors, time.monotonic() - start, boxes, ray)
