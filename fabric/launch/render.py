"""Render per-node launch scripts (SGLang, vLLM+Ray, data parallel + its front) from a spec:
bare metal, or each engine in a container (`docker run` with what a Spark needs)."""

from __future__ import annotations

import re
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


#: The node's Hugging Face cache, as the node's shell finds it when the script runs.
NODE_HF_CACHE = "${HF_HOME:-$HOME/.cache/huggingface}"
_HF_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")


def is_hf_model_id(model: str) -> bool:
    """`org/name`, as Hugging Face names a model (a local model is an absolute path)."""
    return bool(_HF_ID.fullmatch(model)) and ".." not in model


def model_line(model: str, image: str | None) -> str | None:
    """What the dry run says of a Hugging Face model id (None: a local path)."""
    if not is_hf_model_id(model):
        return None
    if image is None:
        return (f"model: {model} from Hugging Face: each node's engine uses the node's own "
                "cache and HF_TOKEN")
    return (f"model: {model} from Hugging Face: each node's cache (HF_HOME, else "
            "~/.cache/huggingface) mounted in the container, HF_TOKEN passed by name from the "
            "node's environment (never written)")


def container_name(engine: str, host: str) -> str:
    """The container of `engine` on `host` (one launch at a time: the name is the node's)."""
    return f"fabric-{engine}-{host}"


@dataclass(frozen=True)
class Container:
    """One node's `docker run` in front of the engine command."""

    image: str
    name: str
    argv: list[list[str]]  # shell-ready words, one group per rendered line
    model: str = ""  # what the container gets of the model, in words
    setup: tuple[str, ...] = ()  # script lines before `docker run`


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("fabric.launch", "templates"),
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["shquote"] = shlex.quote
    env.filters["dquote"] = _dquote
    env.filters["cmdlines"] = lambda groups: " \\\n  ".join(" ".join(g) for g in groups)
    return env


def _dquote(text: str) -> str:
    """`text` in shell double quotes (a message that reads as written, single quotes kept)."""
    return '"' + "".join("\\" + c if c in '\\"$`' else c for c in text) + '"'


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


#: What an engine's own processes need on every node besides the fabric's environment.
ENGINE_ENV: dict[str, tuple[EnvVar, ...]] = {
    "vllm": (EnvVar("RAY_memory_monitor_refresh_ms", "0", "Ray's memory monitor off, for every "
                    "`ray start` and the engine: on GB10's unified memory the GPU's allocations "
                    "count as host RAM, and the monitor kills the workers holding the weights "
                    "(NVIDIA's, sparkrun's and spark-vllm-docker's setups all set it)"),),
}


def node_env(spec: LaunchSpec, rank: Rank, engine: str) -> list[EnvVar]:
    """The spec's environment plus what the engine needs on this node (vLLM: its own IP, Ray's
    memory monitor off); a variable the spec already has (`--env`) wins."""
    own = list(ENGINE_ENV.get(engine, ()))
    if engine == "vllm":
        own.insert(0, EnvVar("VLLM_HOST_IP", rank.fabric_addr, "the IP Ray registers for this "
                             "node (--node-ip-address): otherwise vLLM takes the default-route "
                             "address and Ray finds \"no GPUs on the driver node\""))
    have = {v.name for v in spec.env}
    return [*spec.env, *(v for v in own if v.name not in have)]


def ray_missing(image: str | None, host: str, ray: str) -> str:
    """What a node without Ray says (the script) and what `launch --apply` reports: in a
    container the script installs `ray` (its pip requirement); bare metal it stops."""
    req = shlex.quote(ray)
    if image is None:
        return (f"no Ray for python3 on {host}: pip install {req} on every node, or launch in "
                "a container (--container default)")
    return (f"image {image} has no Ray: the script pip-installs {req} in the container at "
            f"every start (the node needs PyPI); to skip that, build an image with it (FROM "
            f"{image}, RUN pip install {req}) and pass it with --container")


#: Prints which of the given modules python3 cannot find (find_spec: nothing is imported).
_FIND = "import importlib.util as u; print('@@MISSING', *[m for m in {} if u.find_spec(m) is None])"


def image_check(engine: str, image: str | None, env: Sequence[EnvVar]) -> str | None:
    """The command `launch --apply` runs on a node before the launch: which of the engine's
    modules, Ray and pip (engines.yaml) python3 lacks, in `image` (`docker run --rm` with the
    node's env, as the launch runs it) or bare; None when the engine names none."""
    data = load_engines()
    engine_data = data.engines[engine]
    modules = [*engine_data.modules, *(("ray", "pip") if engine_data.ray else ())]
    if not modules:
        return None
    exports = "".join(f"export {v.name}={shlex.quote(v.value)}; " if v.value
                      else f"unset {v.name}; " for v in env)
    python = _q("python3", "-c", _FIND.format(tuple(modules)))
    if image is None:
        return exports + " ".join(python)
    flags = [w for group in _env_flags(env) for w in group]
    return exports + " ".join([*_q(data.container.runtime, "run", "--rm"), *flags,
                               *_q(image), *python])


def _env_flags(env: Sequence[EnvVar]) -> list[list[str]]:
    """`-e NAME` for every variable set, four to a line (docker takes the values from the
    script's environment)."""
    names = [v.name for v in env if v.value]
    return [[w for n in names[i:i + 4] for w in ("-e", n)] for i in range(0, len(names), 4)]


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
    model_part = model_mount(model, data.hf_cache)
    argv += [g for g in (model_part.mount,) if g]
    argv += _env_flags(env)
    argv += [g for g in (model_part.env,) if g]
    argv.append(_q(image))
    return Container(image, name, argv, model_part.about, model_part.setup)


@dataclass(frozen=True)
class ModelMount:
    """What a container gets of the model: its mount and `-e` words (empty: none), the script
    lines before `docker run`, and the words that say it."""

    mount: list[str]
    env: list[str]
    setup: tuple[str, ...]
    about: str


def model_mount(model: str, cache: str) -> ModelMount:
    """A local path: mounted read-only. A Hugging Face id: the node's cache mounted at the
    image's (`cache`), made first so that docker does not make it as root, and HF_TOKEN by
    name only (`-e HF_TOKEN`: docker takes the value from the node's environment)."""
    if is_hf_model_id(model):
        return ModelMount(
            ["-v", f'"{NODE_HF_CACHE}:{cache}"'], ["-e", "HF_TOKEN", *_q("-e", f"HF_HOME={cache}")],
            (f"# {model} is a Hugging Face model id: the node's Hugging Face cache (HF_HOME, "
             f"else ~/.cache/huggingface) is mounted at {cache}, so each node downloads it "
             "once; HF_TOKEN passes from this node's environment by name, its value never "
             "written here", f'mkdir -p "{NODE_HF_CACHE}"'),
            f"the node's Hugging Face cache for {model}")
    if model.startswith("/"):
        return ModelMount(_q("-v", f"{model}:{model}:ro"), [], (), f"{model} read-only")
    return ModelMount([], [], (), f"no model directory ({model})")


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
    ray = load_engines().engines[engine].ray or ""
    out: dict[str, str] = {}
    for rank in spec.ranks:
        variables = node_env(spec, rank, engine)
        box = (container_for(engine, rank.host, container, model, variables,
                             stdin=engine == "vllm") if container else None)
        out[f"{rank.host}-{engine}.sh"] = env.get_template(f"{engine}.sh.j2").render(
            spec=spec, rank=rank, engine=engine, title=titles[engine], model=model, tp=tp,
            pp=pp, api_port=api_port, dist_port=dist_port, ray_port=ray_port, env=variables,
            command=_command(spec, rank, engine, model, tp, pp, api_port, dist_port, ray_port,
                             extra),
            container=box, ray=ray, ray_missing=ray and ray_missing(container, rank.host, ray))
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
