"""The least a validation must do on a lab, timed as a whole process by `bench/lab_floor.py`.

    python bench/floor_driver.py PLAN.json [--libraries]

A plain interpreter with paramiko only (none of the toolkit) runs, over one SSH session per
Spark (key login, host key checked against the lab's known_hosts, TCP_NODELAY, as the
toolkit's sessions are), exactly the remote work no validation of counters, MTU and bandwidth
can skip, each stage as one exec per Spark, all Sparks at once:

1. log in, read the counters (`ip -s -s -j link show`, `ethtool -S` per twin) and start the
   iperf3 servers the Spark serves (`iperf3 -s -1 -D`: one test, daemonised by iperf3 itself);
2. once every Spark is done: one jumbo DF echo per planned ping path, all at once;
3. each round of the bandwidth schedule: every client's iperf3 clients (`--bidir`, the
   profile's length and rate), one per twin, at once; the next round once every client ended;
4. the counters again.

No facts, no switch, no RDMA rows, no temporary files, no parsing, no checks, no report.
`--libraries`: first import the libraries `fabric validate` loads besides paramiko (`LIBRARIES`:
typer, rich, pydantic, Nornir, routeros-api, textfsm, PyYAML), and nothing of the toolkit. It
prints one JSON line: when each stage ended (seconds from its first line), each failure (a run
with a failure is no floor), and the clock at its first line and at its end (the bench takes
the interpreter's start and the exit from them).
"""

from __future__ import annotations

import importlib
import json
import socket
import sys
import time
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Any

T0 = time.monotonic()
T0_UNIX = time.time()


class _Deferred(types.ModuleType):
    """paramiko imports invoke (about 0.1 s here) for an ssh_config `Match exec` only: it
    loads on first use, as the toolkit's CLI has it (`fabric.cli.DEFERRED_IMPORTS`)."""

    def __getattr__(self, attr: str) -> Any:
        sys.modules.pop(self.__name__, None)
        return getattr(importlib.import_module(self.__name__), attr)


sys.modules.setdefault("invoke", _Deferred("invoke"))
import paramiko  # noqa: E402  (timed: the import is part of the floor)

#: The libraries (besides paramiko) that `fabric validate` imports before it touches a host,
#: each module a validation loads (the dependencies the README names: the CLI, the input
#: boundary, Nornir with its inventory and runner, the switch's API, the parsers, YAML).
LIBRARIES = ("typer", "rich.console", "rich.progress", "rich.table", "pydantic", "nornir.core",
             "nornir.plugins.inventory.simple", "nornir.plugins.runners", "routeros_api",
             "textfsm", "yaml")


def connect(spark: dict[str, Any]) -> paramiko.SSHClient:
    sock = socket.create_connection((spark["address"], 22), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client = paramiko.SSHClient()
    client.load_host_keys(spark["known_hosts"])
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.connect(spark["address"], username=spark["user"], key_filename=spark["key"],
                   sock=sock, look_for_keys=False, allow_agent=False)
    return client


def run(client: paramiko.SSHClient, script: str) -> tuple[int, str]:
    transport = client.get_transport()
    assert transport is not None
    channel = transport.open_session(timeout=10)
    channel.set_combine_stderr(True)
    channel.exec_command(script)
    chunks = []
    while data := channel.recv(65536):
        chunks.append(data)
    code = channel.recv_exit_status()
    channel.close()
    return code, b"".join(chunks).decode(errors="replace")


def parallel(judged: list[str], unjudged: tuple[str, ...] = ()) -> str:
    """One shell script running every line at once; it fails if a `judged` one failed (a
    counters read is not judged: `ethtool -S` exits 1 where a netdev has no statistics)."""
    lines = list(unjudged) + judged
    body = "\n".join(f"{line} & p{i}=$!" for i, line in enumerate(lines))
    waits = " ".join(f"wait $p{i} || r=1;" for i in range(len(unjudged), len(lines)))
    return f"r=0\n{body}\n{waits}\nwait\nexit $r\n" if lines else "true\n"


def main() -> int:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    stages: dict[str, float] = {"paramiko imported": time.monotonic() - T0}
    if "--libraries" in sys.argv[2:]:
        for name in LIBRARIES:
            importlib.import_module(name)
        from pydantic import TypeAdapter  # noqa: F401  (typer's options are coerced by it)
        stages["libraries imported"] = time.monotonic() - T0
    sparks: dict[str, dict[str, Any]] = plan["sparks"]
    failures: list[str] = []
    sessions: dict[str, paramiko.SSHClient] = {}

    def on_each(script_of: dict[str, str], stage: str) -> None:
        def one(name: str) -> None:
            try:
                if name not in sessions:
                    sessions[name] = connect(sparks[name])
                code, out = run(sessions[name], script_of[name])
                if code != 0:
                    failures.append(f"{stage} {name}: exit {code}: {out[-200:]}")
            except Exception as exc:
                failures.append(f"{stage} {name}: {type(exc).__name__}: {exc}")
        with ThreadPoolExecutor(max(1, len(script_of))) as pool:
            list(pool.map(one, sorted(script_of)))
        stages[stage] = time.monotonic() - T0

    counters = {n: parallel([], tuple(s["counters"])) for n, s in sparks.items()}
    on_each({n: parallel(s["servers"], tuple(s["counters"])) for n, s in sparks.items()},
            "login, counters, servers")
    on_each({n: parallel(s["pings"]) for n, s in sparks.items() if s["pings"]}, "pings")
    for i, rnd in enumerate(plan["rounds"]):
        on_each({client: parallel(lines) for client, lines in rnd.items()}, f"round {i + 1}")
    on_each(counters, "counters after")
    for client in sessions.values():
        client.close()
    stages["closed"] = time.monotonic() - T0
    print(json.dumps({"stages": stages, "failures": failures, "t0_unix": T0_UNIX,
                      "end_unix": time.time()}), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
