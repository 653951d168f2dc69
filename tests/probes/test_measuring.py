"""`iperf3_bidir_measuring`: the shell condition a bandwidth round's first batch polls before it
says its clients are under way (the facts read behind the rounds start then). It counts the
sockets of the batch's job trees: a job's subshell, its `timeout`, the client."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from fabric.probes.tools import IPERF3_BIDIR_SOCKETS, iperf3_bidir_measuring

BOUND_S = 30.0

#: Opens `count` sockets once told to, says so, and exits once told to (a FIFO each way).
OPENER = """
import socket, sys
said, told, count = open(sys.argv[1], "w", buffering=1), open(sys.argv[2]), int(sys.argv[3])
said.write("started\\n"); told.readline()
held = [socket.socket() for _ in range(count)]
said.write("opened\\n"); told.readline()
"""


def _holds(conditions: dict[str, str]) -> str:
    """Shell that prints, for each condition, its name and whether it holds now."""
    return "; ".join(f"if {c}; then echo {n}=yes; else echo {n}=no; fi"
                     for n, c in conditions.items())


def test_the_sockets_of_a_job_tree_are_counted_two_levels_down(tmp_path: Path) -> None:
    """A job whose subshell stays (two commands), its `timeout`, the process holding the
    sockets: found below the job's process id, counted only once they are open."""
    said, told = tmp_path / "said", tmp_path / "told"
    os.mkfifo(said)
    os.mkfifo(told)
    opener = tmp_path / "opener.py"
    opener.write_text(OPENER)
    one, two = iperf3_bidir_measuring(1), iperf3_bidir_measuring(2)
    script = f"""
( timeout {BOUND_S:g} {sys.executable} {opener} {said} {told} {IPERF3_BIDIR_SOCKETS}; true ) \
</dev/null & fabric_jobs=$!
exec 3<{said} 4>{told}
read -r x <&3; {_holds({"before": one})}
echo >&4; read -r x <&3; {_holds({"one": one, "two": two})}
echo >&4; wait
"""
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                         timeout=BOUND_S, check=True).stdout.split()
    assert out == ["before=no", "one=yes", "two=no"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_running_iperf3_bidir_client_makes_it_hold(tmp_path: Path) -> None:
    """A real `iperf3 --bidir` client (what the lab and a Spark run) holds the sockets the
    condition counts while its test runs, and the condition for two clients does not hold."""
    port = _free_port()
    with subprocess.Popen(["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", str(port),
                           "--forceflush"], stdout=subprocess.PIPE, text=True) as server:
        assert server.stdout is not None
        while "Server listening" not in server.stdout.readline():
            assert server.poll() is None
        out = tmp_path / "client.json"
        looks = f"""
( timeout {BOUND_S:g} iperf3 -c 127.0.0.1 -p {port} -t 2 --bidir -J >{out} ) </dev/null &
fabric_jobs=$!; n=0
until {iperf3_bidir_measuring(1)}; do n=$((n+1)); [ $n -gt 300 ] && break; sleep 0.01; done
echo "looks=$n"; {_holds({"two": iperf3_bidir_measuring(2)})}; wait
"""
        said = subprocess.run(["sh", "-c", looks], capture_output=True, text=True,
                              timeout=BOUND_S, check=True).stdout.split()
        server.wait(timeout=BOUND_S)
    assert said[1] == "two=no" and int(said[0].removeprefix("looks=")) <= 300
    end = json.loads(out.read_text())["end"]
    assert end["sum_received"]["bytes"] > 0 and end["sum_received_bidir_reverse"]["bytes"] > 0
