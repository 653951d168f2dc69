"""Render per-node launch scripts (SGLang, vLLM+Ray, data parallel + nginx) from a plan."""

from __future__ import annotations

import shlex
from pathlib import Path

import jinja2

from fabric.launch.plan import LaunchPlan

TEMPLATES = Path(__file__).resolve().parents[2] / "launch" / "templates"
ENGINES = ("sglang", "vllm", "dp")


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["shquote"] = shlex.quote
    return env


def render(plan: LaunchPlan, engine: str, model: str, tp: int | None = None, pp: int = 1,
           api_port: int = 30000, dist_port: int = 20000, ray_port: int = 6379
           ) -> dict[str, str]:
    """{file name: text}: one script per node, plus nginx.conf for data parallel."""
    env = _env()
    tp = tp or (plan.world_size // pp if engine == "vllm" else plan.world_size)
    titles = {"sglang": f"SGLang TP{tp} launch", "vllm": f"vLLM + Ray TP{tp} PP{pp} launch",
              "dp": "data-parallel server launch"}
    out: dict[str, str] = {}
    for rank in plan.ranks:
        out[f"{rank.host}-{engine}.sh"] = env.get_template(f"{engine}.sh.j2").render(
            plan=plan, rank=rank, engine=engine, title=titles[engine], model=model, tp=tp,
            pp=pp, api_port=api_port, dist_port=dist_port, ray_port=ray_port)
    if engine == "dp":
        out["nginx-fabric-dp.conf"] = env.get_template("dp-nginx.conf.j2").render(
            plan=plan, api_port=api_port, listen_port=8080, max_fails=3, fail_timeout="30s")
    return out
