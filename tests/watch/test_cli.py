"""`fabric watch` refuses bad input with exit 2 and a message, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize(("args", "says"), [
    (["--interval", "0"], "--interval 0"),
    (["--interval", "5", "--timeout", "9", "--once"], "--timeout 9"),
    (["--listen", "nowhere", "--interval", "5"], "ADDR:PORT"),
    (["--listen", "127.0.0.1:99999"], "ADDR:PORT"),
    (["--interval", "5"], "nothing to do"),
    (["--textfile", "/nonexistent/dir"], "not a directory"),
    (["--once", "-t", "no-such-topology"], "no-such-topology"),
    (["--once", "--lab", "no-such-lab"], "no-such-lab"),
])
def test_bad_input_exits_2_with_a_message(args: list[str], says: str,
                                          capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    code, out, err = run_cli(["watch", *args], capsys)
    assert code == 2, (out, err)
    assert says in err and "Traceback" not in err
