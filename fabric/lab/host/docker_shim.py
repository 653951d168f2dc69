"""`docker` inside a lab Spark: the local images, listed and inspected (no daemon, no
container ever runs).

A Spark owner's engine images are pulled with docker (DOMAIN.md), and the toolkit reads them
without starting one: `docker image ls -q --no-trunc` and `docker image inspect --format
'{{.Id}} {{json .RepoTags}} {{json .Config.Env}}' ID...`. `fabric lab up` puts a stand-in on
each Spark's PATH (`/usr/local/bin/docker`, the shell script `STAND_IN`: a Python one would
cost every facts batch an interpreter start) with the images in the host's private /etc
(`IMAGES_FILE`: one line per image, exactly as that inspect prints it). The images are the
engines' default images (`LAB_IMAGES`; their NCCL_VERSION is made up, as the lab's Sparks have
no NCCL). Anything else fails as docker does on a command it cannot serve (exit 1).
"""

from __future__ import annotations

import hashlib
import json

IMAGES_FILE = "/etc/docker/fabric-lab-images"
INSPECT_FORMAT = "{{.Id}} {{json .RepoTags}} {{json .Config.Env}}"
#: (tag, NCCL_VERSION) of the images every lab Spark has: engines.yaml's defaults.
LAB_IMAGES = (("nvcr.io/nvidia/sglang:26.05-py3", "2.28.9"),
              ("nvcr.io/nvidia/vllm:26.05.post1-py3", "2.28.9"))
_PATH = ("PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:"
         "/usr/sbin:/usr/bin:/sbin:/bin")


def image_line(tag: str, nccl: str, build: str = "") -> str:
    """An image as inspect prints it; its id from the tag (and `build`: another build under
    the same tag)."""
    digest = hashlib.sha256(f"{tag}{build}".encode()).hexdigest()
    return f"sha256:{digest} {_compact([tag])} {_compact([_PATH, f'NCCL_VERSION={nccl}'])}"


def _compact(value: list[str]) -> str:
    """JSON as docker's templates print it: no spaces."""
    return json.dumps(value, separators=(",", ":"))


def lab_images_text() -> str:
    return "".join(f"{image_line(t, v)}\n" for t, v in LAB_IMAGES)


def tag_of(line: str) -> str:
    """The first tag of an image line."""
    tags: list[str] = json.loads(line.split(" ", 2)[1])
    return tags[0] if tags else ""


STAND_IN = f"""f={IMAGES_FILE}
case "$1 $2 $3" in
"image ls -q")
  [ -r "$f" ] || exit 0
  if [ "$4" = --no-trunc ]; then cut -d' ' -f1 "$f"; else cut -c8-19 "$f"; fi; exit 0;;
"image inspect --format")
  if [ "$4" != '{INSPECT_FORMAT}' ]; then
    echo "docker (fabric lab stand-in): only --format '{INSPECT_FORMAT}'" >&2; exit 1; fi
  shift 4
  for id in "$@"; do
    grep -F "$id " "$f" 2>/dev/null || {{
      echo "Error response from daemon: No such image: $id" >&2; exit 1; }}
  done; exit 0;;
esac
echo "docker (fabric lab stand-in): \\`docker $*\\` is not emulated; only \\`image ls -q\\`" \\
  "and \\`image inspect --format '{INSPECT_FORMAT}'\\`" >&2
exit 1
"""
