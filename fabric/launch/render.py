"""Render per-node launch scripts (SGLang, vLLM+Ray, data parallel + its front) from a spec:
bare metal, or each engine in a container (`docker run` with what a Spark needs)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

import jinja2

from fabric.launch.engines import load_engines
from fabric.launch.spec import EnvVar, LaunchSpec, Rank
from fabric.launch.state import RUN_ID_VAR, RUN_LABEL

ENGINES = ("sglang", "vllm", "dp")
FRONTS = ("nginx", "sglang-router")
NGINX_CONF = "nginx-fabric-dp.conf"
ROUTER_SCRIPT = "sglang-router-fabric-dp.sh"
FRONT_PORT = 8080


def container_name(engine: str, host: str) -> str:
    """The container of `engine` on `host` (one launch at a time: the name is the node's)."""
    return f"fabric-{engine}-{host}"


@dataclass(frozen=True)
class Container:
    """One node's `docker run` in front of the engine command."""

    image: str
    name: str
    argv: list[list[str]]  # shell-ready words, one group per rendered line


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("fabric.launch", "templates"),
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["shquote"] = shlex.quote
    env.filters["cmdlines"] = lambda groups: " \\\n  ".join(" ".join(g) for g in groups)
    return env


def _q(*words: str) -> list[str]:
    return [shlex.quote(w) for w in words]


def arg_groups(args: Sequence[str]) -> list[list[str]]:
    """Engine arguments one flag (and its values) per line, quoted for the shell."""
    groups: list[list[str]] = []
    for word in args:
        if word.startswith("-") or not groups:
            groups.append([])
        groups[-1].append(shlex.quote(word))
    return groups


def node_env(spec: LaunchSpec, rank: Rank, engine: str) -> list[EnvVar]:
    """The spec's environment plus what only this node sets (vLLM: its own IP)."""
    env = list(spec.env)
    if engine == "vllm" and not any(v.name == "VLLM_HOST_IP" for v in env):
        env.append(EnvVar("VLLM_HOST_IP", rank.fabric_addr, "the IP Ray registers for this "
                          "node (--node-ip-address): otherwise vLLM takes the default-route "
                          "address and Ray finds \"no GPUs on the driver node\""))
    return env


def container_for(engine: str, host: str, image: str, model: str, env: Sequence[EnvVar],
                  stdin: bool = False) -> Container:
    """`docker run` for one node: host network and IPC, every GPU, the RDMA devices and the
    right to pin memory for them, the model read-only, and the node's NCCL/Gloo env (`-e`)."""
    data = load_engines().container
    name = container_name(engine, host)
    opts = list(data.options)
    pairs = [opts[i:i + 2] for i in range(0, len(opts), 2)]
    argv: list[list[str]] = [_q(data.runtime, "run", *(["-i"] if stdin else []), "--rm",
                                "--name", name),
                             ["--label", f'"{RUN_LABEL}=${{{RUN_ID_VAR}:-manual}}"']]
    for i in range(0, len(pairs), 3):
        argv.append([shlex.quote(w) for pair in pairs[i:i + 3] for w in pair])
    argv[-1] += _q("--shm-size", data.shm_size)
    if model.startswith("/"):
        argv.append(_q("-v", f"{model}:{model}:ro"))
    names = [v.name for v in env if v.value]
    for i in range(0, len(names), 4):
        argv.append([w for n in names[i:i + 4] for w in ("-e", n)])
    argv.append(_q(image))
    return Container(image, name, argv)


def effective_tp(spec: LaunchSpec, engine: str, tp: int | None, pp: int = 1) -> int:
    """The tensor-parallel size rendered: `tp`, else every node (vLLM: divided by PP)."""
    return tp or (spec.world_size // pp if engine == "vllm" else spec.world_size)


def render(spec: LaunchSpec, engine: str, model: str, tp: int | None = None, pp: int = 1,
           api_port: int = 30000, dist_port: int = 20000, ray_port: int = 6379,
           container: str | None = None, engine_args: Sequence[str] = (),
           front: str = "nginx") -> dict[str, str]:
    """{file name: text}: one script per node, plus the data-parallel front (an nginx config
    or an sglang-router script). `container`: the image each engine runs in (None: bare)."""
    if front not in FRONTS:
        raise ValueError(f"front {front!r}: one of {', '.join(FRONTS)}")
    env = _env()
    tp = effective_tp(spec, engine, tp, pp)
    titles = {"sglang": f"SGLang TP{tp} launch", "vllm": f"vLLM + Ray TP{tp} PP{pp} launch",
              "dp": "data-parallel server launch"}
    extra = arg_groups(engine_args)
    out: dict[str, str] = {}
    for rank in spec.ranks:
        variables = node_env(spec, rank, engine)
        head = engine == "vllm" and rank.host == spec.entry
        box = (container_for(engine, rank.host, container, model, variables, stdin=head)
               if container else None)
        out[f"{rank.host}-{engine}.sh"] = env.get_template(f"{engine}.sh.j2").render(
            spec=spec, rank=rank, engine=engine, title=titles[engine], model=model, tp=tp,
            pp=pp, api_port=api_port, dist_port=dist_port, ray_port=ray_port, env=variables,
            command=_command(spec, rank, engine, model, tp, pp, api_port, dist_port, ray_port,
                             extra),
            container=box)
    if engine == "dp":
        if front == "nginx":
            out[NGINX_CONF] = env.get_template("dp-nginx.conf.j2").render(
                spec=spec, api_port=api_port, listen_port=FRONT_PORT, max_fails=3,
                fail_timeout="30s")
        else:
            out[ROUTER_SCRIPT] = env.get_template("dp-sglang-router.sh.j2").render(
                spec=spec, api_port=api_port, listen_port=FRONT_PORT, max_fails=3)
    return out


def _command(spec: LaunchSpec, rank: Rank, engine: str, model: str, tp: int, pp: int,
             api_port: int, dist_port: int, ray_port: int,
             extra: list[list[str]]) -> list[list[str]]:
    """The engine's own command on this node, one flag group per line."""
    entry = rank.host == spec.entry
    if engine == "sglang":
        where = _q("--host", "0.0.0.0", "--port", str(api_port)) if entry else _q(
            "--port", str(api_port))
        return [_q("python3", "-m", "sglang.launch_server"), _q("--model-path", model),
                _q("--tp-size", str(tp)), _q("--nnodes", str(spec.world_size)),
                _q("--node-rank", str(rank.rank)),
                _q("--dist-init-addr", f"{spec.master_addr}:{dist_port}"),
                _q("--trust-remote-code"), where, *extra]
    if engine == "dp":
        return [_q("python3", "-m", "sglang.launch_server"), _q("--model-path", model),
                _q("--host", "0.0.0.0", "--port", str(api_port)), *extra]
    if entry:
        return [_q("vllm", "serve", model), _q("--tensor-parallel-size", str(tp)),
                _q("--pipeline-parallel-size", str(pp)),
                _q("--distributed-executor-backend", "ray"),
                _q("--host", "0.0.0.0", "--port", str(api_port)), *extra]
    return [_q("ray", "start", "--block", f"--address={spec.master_addr}:{ray_port}",
               f"--node-ip-address={rank.fabric_addr}")]
