"""`docker` inside a lab Spark: the local images, listed and inspected (no daemon, no
container ever runs).

A Spark owner's engine images are pulled with docker (DOMAIN.md), and the toolkit reads them
without starting one: `docker image ls -q --no-trunc` and `docker image inspect --format
'{{.Id}} {{json .RepoTags}} {{json .Config.Env}}' ID...`. `fabric lab up` puts this stand-in on
each Spark's PATH (`/usr/local/bin/docker`) with the images in the host's private /etc
(`IMAGES_FILE`, JSON): the engines' default images (`LAB_IMAGES`; their NCCL_VERSION is made
up, as the lab's Sparks have no NCCL). Anything else fails as docker does on a command it
cannot serve (exit 1). Standard library only: it runs as a script.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

IMAGES_FILE = "/etc/docker/fabric-lab-images.json"
INSPECT_FORMAT = "{{.Id}} {{json .RepoTags}} {{json .Config.Env}}"
#: (tag, NCCL_VERSION) of the images every lab Spark has: engines.yaml's defaults.
LAB_IMAGES = (("nvcr.io/nvidia/sglang:26.05-py3", "2.28.9"),
              ("nvcr.io/nvidia/vllm:26.05.post1-py3", "2.28.9"))
_PATH = "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:" \
        "/usr/bin:/sbin:/bin"


def image(tag: str, nccl: str, build: str = "") -> dict[str, Any]:
    """An image record: its id from the tag (and `build`, another build under the same tag)."""
    digest = hashlib.sha256(f"{tag}{build}".encode()).hexdigest()
    return {"id": f"sha256:{digest}", "tags": [tag], "env": [_PATH, f"NCCL_VERSION={nccl}"]}


def lab_images_text() -> str:
    return json.dumps({"images": [image(t, v) for t, v in LAB_IMAGES]}, indent=1) + "\n"


def _images(path: str = IMAGES_FILE) -> list[dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return []
    images: list[dict[str, Any]] = data.get("images", [])
    return images


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def main(argv: list[str], path: str = IMAGES_FILE) -> int:
    images = _images(path)
    if argv[:3] == ["image", "ls", "-q"]:
        for img in images:
            for _ in img["tags"] or [None]:
                print(img["id"] if "--no-trunc" in argv else img["id"][7:19])
        return 0
    if argv[:3] == ["image", "inspect", "--format"] and len(argv) > 4 \
            and argv[3] == INSPECT_FORMAT:
        by_id = {img["id"]: img for img in images}
        for ref in argv[4:]:
            found = by_id.get(ref)
            if found is None:
                print(f"Error response from daemon: No such image: {ref}", file=sys.stderr)
                return 1
            print(f"{found['id']} {_compact(found['tags'])} {_compact(found['env'])}")
        return 0
    print(f"docker (fabric lab stand-in): `docker {' '.join(argv)}` is not emulated; only "
          f"`image ls -q` and `image inspect --format '{INSPECT_FORMAT}'`", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
