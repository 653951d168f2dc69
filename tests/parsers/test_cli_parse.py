"""`fabric parse KIND FILE` end to end, through the installed entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FABRIC = Path(sys.executable).parent / "fabric"
CASES = Path(__file__).parent


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(FABRIC), "parse", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_parse_prints_records_as_json() -> None:
    result = _run("ibdev2netdev", str(CASES / "linux/ibdev2netdev/dgx_spark_port0_up.raw"))
    assert result.returncode == 0, result.stderr
    records = json.loads(result.stdout)
    assert [r["state"] for r in records] == ["Up", "Down", "Up", "Down"]
    assert records[0] == {"type": "RdmaNetdev", "rdma_device": "rocep1s0f0", "port": 1,
                          "netdev": "enp1s0f0np0", "state": "Up"}


def test_parse_reads_stdin() -> None:
    raw = (CASES / "linux/iperf3/client_connrefused.raw").read_text()
    result = _run("iperf3", "-", stdin=raw)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["error"].endswith("Connection refused")


def test_unknown_kind_is_exit_2_listing_kinds() -> None:
    result = _run("no_such_kind", "-", stdin="")
    assert result.returncode == 2
    assert "show_gids" in result.stderr and "ib_write_bw" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_input_is_exit_2_naming_file_and_line() -> None:
    path = CASES / "linux/ib_write_bw/mlx5_server_mbsec_truncated_row.raw"
    result = _run("ib_write_bw", str(path))
    assert result.returncode == 2
    assert f"{path}:26" in result.stderr
    assert "65536      664644" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_garbage_on_stdin_is_exit_2() -> None:
    result = _run("ping", "-", stdin="PING ok\nthis is not ping\n")
    assert result.returncode == 2
    assert "<stdin>:1" in result.stderr
    assert "Traceback" not in result.stderr
