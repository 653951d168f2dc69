"""The facts batch's `docker_images` row, run by sh against a stand-in `docker` on PATH: it
reads every image once, and a docker that never answers (a hung dockerd) ends the row within
its bound with the reason, so the rest of the batch is not held."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from fabric.devices.spark import commands
from fabric.parsers import parse
from fabric.parsers.records import ContainerImage

ID = "sha256:" + "7" * 64


def _row(tmp_path: Path, docker: str, wait_s: float = 5) -> tuple[int, str, float]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / "docker"
    tool.write_text("#!/bin/sh\n" + docker)
    tool.chmod(0o755)
    script = commands._DOCKER_IMAGES.replace(f"w={commands.DOCKER_WAIT_S};", f"w={wait_s:g};")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "U": "0"}
    t0 = time.monotonic()
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    return proc.returncode, proc.stdout, time.monotonic() - t0


def test_every_image_is_read_once_and_parsed(tmp_path: Path) -> None:
    docker = (f'[ "$2" = ls ] && {{ echo {ID}; echo {ID}; exit 0; }}\n'
              f'[ "$2 $3" = "inspect --format" ] && [ "$5" = {ID} ] && [ -z "$6" ] && '
              f'echo \'{ID} ["nvcr.io/nvidia/vllm:26.05.post1-py3"] ["NCCL_VERSION=2.28.9"]\' '
              '&& exit 0\nexit 9\n')
    code, out, _ = _row(tmp_path, docker)
    assert code == 0, out
    images = parse("docker_images", out)
    assert images == [ContainerImage(ID, ("nvcr.io/nvidia/vllm:26.05.post1-py3",), "2.28.9")]


def test_a_docker_that_never_answers_ends_the_row_with_the_reason(tmp_path: Path) -> None:
    code, out, took = _row(tmp_path, "sleep 30\n", wait_s=0.5)
    assert code == 1 and "docker did not answer within 0.5 s (is dockerd hung?)" in out
    assert took < 10


def test_an_inspect_that_hangs_is_bounded_too(tmp_path: Path) -> None:
    code, out, took = _row(tmp_path, f'[ "$2" = ls ] && {{ echo {ID}; exit 0; }}\nsleep 30\n',
                           wait_s=0.5)
    assert code != 0 and "docker did not answer within 0.5 s" in out and took < 10


def test_no_daemon_is_the_clients_own_message(tmp_path: Path) -> None:
    msg = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."
    code, out, _ = _row(tmp_path, f"echo '{msg}' >&2; exit 1\n")
    assert code == 1 and out.strip() == msg
