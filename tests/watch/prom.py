"""A real Prometheus server for the watch tests: Debian's `prometheus` binary with a config
file and a TSDB of the test's own, on 127.0.0.1 and a free port (never the packaged
service). `make apt` installs the package; without it the tests fail, never skip."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


#: Where `make lab-tools` unpacks Debian's prometheus package (never installed: its service
#: would listen on this machine's own network).
UNPACKED = Path(__file__).resolve().parents[2] / ".lab-tools" / "prometheus" / "usr" / "bin"


def tool(name: str) -> str:
    """The path of a Prometheus tool ($FABRIC_PROMETHEUS_BIN, the unpacked package, else
    PATH); a failure (not a skip) without it."""
    for folder in (os.environ.get("FABRIC_PROMETHEUS_BIN"), str(UNPACKED)):
        if folder and os.access(Path(folder) / name, os.X_OK):
            return str(Path(folder) / name)
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not there: run `make lab-tools` (unpacks Debian's prometheus)",
                    pytrace=False)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, timeout: float = 2.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return str(resp.read().decode())


def poll(read: Callable[[], T | None], timeout: float, step: float = 0.2) -> T | None:
    """`read()` until it returns something (not None), at most `timeout` seconds; errors of a
    server not up yet count as nothing."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = read()
        except (OSError, urllib.error.URLError, ValueError):
            got = None
        if got is not None or time.monotonic() > deadline:
            return got
        time.sleep(step)


class Prometheus:
    """A running server: `url`, the API's `query` and `alerts`."""

    def __init__(self, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.url, self.proc, self.log = url, proc, log

    def api(self, path: str) -> Any:
        body = json.loads(get(f"{self.url}/api/v1/{path}"))
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        from urllib.parse import quote

        return list(self.api(f"query?query={quote(expr)}")["result"])

    def alerts(self) -> list[dict[str, Any]]:
        return list(self.api("alerts")["alerts"])

    def firing(self, name: str) -> list[dict[str, str]]:
        return [a["labels"] for a in self.alerts()
                if a["labels"].get("alertname") == name and a["state"] == "firing"]


def config(target: str, rules: Path, scrape_s: float) -> str:
    return (f"global:\n  scrape_interval: {scrape_s:g}s\n  evaluation_interval: {scrape_s:g}s\n"
            f"rule_files: [{json.dumps(str(rules))}]\n"
            f"scrape_configs:\n  - job_name: fabric-watch\n"
            f"    static_configs: [{{targets: [{json.dumps(target)}]}}]\n")


@contextmanager
def prometheus(tmp: Path, target: str, rules_text: str, scrape_s: float = 1.0,
               ready_within: float = 30.0) -> Iterator[Prometheus]:
    """A Prometheus scraping `target` every `scrape_s` with `rules_text` loaded."""
    binary = tool("prometheus")
    rules = tmp / "rules.yml"
    rules.write_text(rules_text)
    cfg = tmp / "prometheus.yml"
    cfg.write_text(config(target, rules, scrape_s))
    port = free_port()
    log = tmp / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([binary, f"--config.file={cfg}",
                                 f"--storage.tsdb.path={tmp / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=out, stderr=subprocess.STDOUT)
    server = Prometheus(f"http://127.0.0.1:{port}", proc, log)
    try:
        ready = poll(lambda: get(f"{server.url}/-/ready") or None, ready_within)
        assert ready, f"prometheus not ready within {ready_within} s: {log.read_text()[-2000:]}"
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
