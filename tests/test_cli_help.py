"""`fabric --help` lists the commands in the order of the flow, from cables to a launch."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from fabric.cli import FLOW, _register, app


def test_help_lists_commands_in_flow_order() -> None:
    _register()
    out = CliRunner().invoke(app, ["--help"], terminal_width=100)
    assert out.exit_code == 0, out.output
    listed = re.findall(r"^│ ([a-z]+) ", out.output.split("Commands")[1], flags=re.M)
    assert listed == ["topo", "plan", "whatif", "lab", "facts", "push", "validate", "doctor",
                      "bundle", "gate", "launch", "watch", "parse", "version"]
    assert tuple(listed) == FLOW
