"""Engine data for a launch (`engines.yaml`): default container images, the container options a
Spark needs, per-model presets, and the engine arguments a launch passes through."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from fabric.errors import InputError

DATA = Path(__file__).with_name("engines.yaml")
ENGINES = ("sglang", "vllm", "dp")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EngineData(_Strict):
    """One engine: its default image, the flags fabric renders, the Python modules `launch
    --apply` looks for first (none: not looked for) and Ray's pip requirement (None: no Ray)."""

    image: str
    rendered_flags: tuple[str, ...]
    modules: tuple[str, ...] = ()
    ray: str | None = None


class ContainerData(_Strict):
    runtime: str
    options: tuple[str, ...]
    shm_size: str
    stop_grace_s: int
    hf_cache: str


class PresetData(_Strict):
    description: str
    sglang: tuple[str, ...] = ()
    vllm: tuple[str, ...] = ()
    dp: tuple[str, ...] = ()
    notes: str = ""

    def args(self, engine: str) -> tuple[str, ...]:
        return tuple(getattr(self, engine))


class EngineTable(_Strict):
    engines: dict[str, EngineData]
    container: ContainerData
    presets: dict[str, PresetData]


@cache
def load_engines(path: Path = DATA) -> EngineTable:
    """The engine table; InputError naming the file and field when it is malformed."""
    try:
        raw = yaml.safe_load(path.read_text())
        table = EngineTable.model_validate(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: {exc}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{path} [{field}]: {err['msg']}") from None
    missing = [e for e in ENGINES if e not in table.engines]
    if missing:
        raise InputError(f"{path} [engines]: no entry for {', '.join(missing)}")
    return table


@dataclass(frozen=True)
class EngineArgs:
    """What a launch passes to the engine beyond the flags fabric renders: the preset's
    arguments, then `--engine-arg`s, in that order."""

    preset: str | None
    args: tuple[str, ...]


def split_engine_args(items: Sequence[str]) -> list[str]:
    """`--engine-arg` values as argv words: each value is split like a shell would
    (`--engine-arg "--mem-fraction-static 0.8"` and `--engine-arg=--ep-size=4` both work)."""
    words: list[str] = []
    for item in items:
        try:
            words += shlex.split(item)
        except ValueError as exc:
            raise InputError(f"--engine-arg {item!r}: {exc}") from None
    return words


def engine_args(engine: str, preset: str | None, extra: Sequence[str]) -> EngineArgs:
    """The preset's arguments for `engine` followed by `extra` (already split); InputError for
    an unknown preset or a flag fabric renders itself (ranks, parallelism, host, port)."""
    table = load_engines()
    args: list[str] = []
    if preset is not None:
        data = table.presets.get(preset)
        if data is None:
            raise InputError(f"--preset {preset!r}: unknown preset; known: "
                             f"{', '.join(sorted(table.presets)) or '(none)'} ({DATA})")
        args += data.args(engine)
    args += extra
    reserved = set(table.engines[engine].rendered_flags)
    clash = sorted({a.split("=", 1)[0] for a in extra if a.split("=", 1)[0] in reserved})
    if clash:
        raise InputError(f"--engine-arg {' '.join(clash)}: fabric renders "
                         f"{'this flag' if len(clash) == 1 else 'these flags'} from the "
                         "validated fabric; use --tp/--pp/--api-port/--model/--entry instead")
    return EngineArgs(preset, tuple(args))


def default_image(engine: str) -> str:
    return load_engines().engines[engine].image


def container_image(engine: str, container: str | None) -> str | None:
    """`--container IMAGE`; `default` names the engine's default image (engines.yaml)."""
    if container is None:
        return None
    if not container.strip():
        raise InputError("--container: name an image, or `default` for the engine's own")
    return default_image(engine) if container == "default" else container
