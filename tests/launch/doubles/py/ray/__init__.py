"""TEST DOUBLE of the `ray` Python package: `init` and `nodes` from the nodes that started."""

from __future__ import annotations

import json

from fabric_double import STATE, alive, record


def init(address: str | None = None, **_kw: object) -> None:
    record("python-ray", ["init", str(address)])


def nodes() -> list[dict[str, object]]:
    out = []
    for path in sorted((STATE / "ray-nodes").glob("*")):
        data = json.loads(path.read_text())
        out.append({"NodeManagerAddress": data["ip"], "Alive": alive(int(data["pid"])),
                    "host": path.name})
    return out


