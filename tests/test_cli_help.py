"""`fabric --help` lists the commands in the order of the flow, from cables to a launch."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from typer.testing import CliRunner

from fabric.cli import COMMAND_MODULES, FLOW, _register, app


def test_help_lists_commands_in_flow_order() -> None:
    _register()
    out = CliRunner().invoke(app, ["--help"], terminal_width=100)
    assert out.exit_code == 0, out.output
    listed = re.findall(r"^│ ([a-z]+) ", out.output.split("Commands")[1], flags=re.M)
    assert listed == ["topo", "plan", "whatif", "lab", "facts", "push", "validate", "doctor",
                      "bundle", "gate", "launch", "watch", "parse", "version"]
    assert tuple(listed) == FLOW


def test_each_command_maps_to_the_module_that_registers_it() -> None:
    """`COMMAND_MODULES` is how a command line imports only its own command's module: it must
    name, for every command and group, the module whose `register` adds it."""
    import importlib
    import pkgutil

    import typer

    import fabric.cli as pkg

    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        register = getattr(importlib.import_module(f"fabric.cli.{info.name}"), "register", None)
        if register is None:
            continue
        probe = typer.Typer()
        register(probe)
        names = [c.name for c in probe.registered_commands] + [
            g.name for g in probe.registered_groups]
        found.update({str(name): info.name for name in names})
    assert found == COMMAND_MODULES


def test_a_command_line_imports_only_its_commands_module() -> None:
    code = ("import json, sys\nfrom fabric.cli import _register\n_register(['gate', '--help'])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('fabric.cli.'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert json.loads(done.stdout) == ["fabric.cli.gate"]


def test_the_consoles_print_what_hosts_say_without_emoji_codes() -> None:
    """rich would turn `:x:` (every passwd line has one) into an emoji; the CLI's consoles
    print text as it came."""
    from fabric.cli import err_console
    from fabric.cli.lab import err

    for console in (err_console, err):
        with console.capture() as captured:  # the console's own stream is left as it was
            console.print("dgx:x:1000:1000::/home/dgx:/bin/bash :warning:", markup=True)
        assert "dgx:x:1000:1000::/home/dgx:/bin/bash :warning:" in captured.get()
