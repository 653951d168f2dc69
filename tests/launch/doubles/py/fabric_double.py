"""Shared by the launch test doubles: who am I, where do I record, am I alive."""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATE = ROOT / "state"


def host() -> str:
    return os.environ.get("FAKE_HOST") or socket.gethostname()


def host_dir() -> Path:
    d = STATE / host()
    d.mkdir(parents=True, exist_ok=True)
    return d


def record(tool: str, argv: list[str], **extra: object) -> None:
    line = json.dumps({"tool": tool, "argv": argv, "env": dict(os.environ), "pid": os.getpid(),
                       "ppid": os.getppid(), "time": time.time(), **extra})
    with open(host_dir() / "calls.jsonl", "a") as fh:
        fh.write(line + "\n")


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def serve(tool: str, model: str, bind: str, port: int) -> None:
    """Fail like a broken model, else mark ready and serve /health (or just wait)."""
    me = host()
    if os.path.exists(os.path.join(model, "BROKEN-" + me)):
        print(f"test double: cannot load the weights on {me}: shard 7 is corrupt", flush=True)
        sys.exit(1)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    time.sleep(0.5)
    ready = host_dir() / f"ready-{tool}"
    staged = ready.with_name(f".{ready.name}.{os.getpid()}")
    staged.write_text(str(os.getpid()))
    staged.replace(ready)  # whole or absent: the tests poll for it while it is written
    if os.environ.get("FABRIC_DOUBLE_HTTP") != "1":
        print(f"test double {tool}: ready on {me}", flush=True)
        while True:
            time.sleep(3600)

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer((bind, port), Health)
    print(f"test double {tool}: serving on {bind}:{port}", flush=True)
    server.serve_forever()
