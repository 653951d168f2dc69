"""The CLI starts light: registering every command imports none of the heavy libraries (they
load inside the command that needs them), so `fabric --help` and `fabric gate` start at once.
(How long it takes is measured in bench/, never asserted here.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import fabric.push.runner
import fabric.push.verify
from fabric.cli import push as push_cli

#: Libraries no command may import just to be registered.
HEAVY = ("nornir", "netmiko", "paramiko", "networkx", "pydantic", "routeros_api", "textfsm",
         "jinja2", "validators", "fabric.intent.model", "fabric.facts", "fabric.collect.gather",
         "fabric.validate", "fabric.push.runner", "fabric.launch.render", "fabric.report.html",
         "rich.progress", "rich.table")

_LOADED = """
import json, sys
{code}
print(json.dumps(sorted(sys.modules)))
"""


def _modules(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _LOADED.format(code=code)],
                          capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(done.stdout))


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_registering_every_command_imports_nothing_heavy() -> None:
    loaded = _modules("from fabric.cli import _register\n_register()")
    assert "fabric.cli.validate" in loaded and "fabric.cli.push" in loaded
    assert _heavy(loaded) == []


def test_the_gate_reads_a_report_without_the_heavy_libraries() -> None:
    loaded = _modules("import fabric.gate, fabric.cli.gate\n"
                      "from fabric.report.model import report_from_json")
    assert _heavy(loaded) == []


def test_push_option_defaults_are_the_push_constants() -> None:
    """`fabric push` repeats two defaults so that it need not import the push machinery to
    start; they must stay the push code's own."""
    assert push_cli.DEFAULT_WORKERS == fabric.push.runner.DEFAULT_WORKERS
    assert push_cli.LINK_WAIT_S == fabric.push.verify.LINK_WAIT_S


def test_validating_a_star_builds_no_graph() -> None:
    """A star's intent and everything `fabric validate` imports leave networkx out (the graph
    is built on first use); a ring's kind needs it, and the graph is still there to use."""
    star = _modules("import fabric.validate, fabric.report, fabric.report.html\n"
                    "from fabric.intent.build import load_intent\n"
                    "i = load_intent('star8')\n"
                    "assert i.kind == 'star' and len(i.cabled) == 9")
    assert "fabric.validate" in star and "networkx" not in star
    ring = _modules("from fabric.intent.build import load_intent\n"
                    "i = load_intent('ring4')\n"
                    "assert i.kind == 'ring' and sorted(i.graph.nodes) == list(i.cabled)\n"
                    "assert i.graph.number_of_edges() == len(i.links)")
    assert "networkx" in ring


def test_the_cli_defers_invoke_until_it_is_used() -> None:
    """paramiko's `import invoke` binds a lazy module: invoke's code has not run after the
    SSH stack is imported, and runs on first use."""
    loaded = _modules("from fabric.cli import defer_imports\ndefer_imports()\n"
                      "import netmiko, paramiko.config\n"
                      "assert 'invoke.tasks' not in sys.modules\n"
                      "assert callable(paramiko.config.invoke.run)\n")
    assert "invoke.tasks" in loaded


def test_the_spark_sessions_never_load_netmiko() -> None:
    """Validate, push, doctor and watch reach the Sparks over `SPARK_SSH` (exec channels on a
    paramiko transport) and build their Nornir without loading every connection plugin:
    Netmiko, with its every vendor driver, is imported only where the switch's CLI is used."""
    loaded = _modules(
        "import fabric.validate, fabric.push.runner, fabric.cli.watch, fabric.watch.collect\n"
        "import fabric.devices.crs804.backup_switch_config, fabric.bundle\n"
        "from tests.push.helpers import INVENTORY\n"
        "from fabric.credentials import Credentials\n"
        "from fabric.intent.build import load_intent\n"
        "from fabric.remote.exec import SPARK_SSH\n"
        "from fabric.remote.nornir_setup import make_nornir\n"
        "from fabric.target import Target\n"
        "nr = make_nornir(Target(load_intent('star4'), INVENTORY, Credentials()))\n"
        "hosts = nr.inventory.hosts\n"
        "assert all(SPARK_SSH in h.connection_options for n, h in hosts.items()\n"
        "           if n.startswith('spark'))\n"
        "assert 'netmiko' in hosts['crs804'].connection_options")
    assert "paramiko" in loaded and "nornir" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in ("netmiko", "nornir_netmiko")) == []


_COLLECTIONS = """
import gc, json
seen = []
gc.callbacks.append(lambda phase, info: seen.append(phase) if phase == "start" else None)
{code}
print(json.dumps([len(seen), gc.isenabled()]))
"""


def _collections_during(code: str) -> tuple[int, bool]:
    """How many cyclic collections ran while `code` ran in a fresh interpreter, and whether
    the collector was on afterwards."""
    done = subprocess.run([sys.executable, "-c", _COLLECTIONS.format(code=code)],
                          capture_output=True, text=True, timeout=60, check=True)
    count, enabled = json.loads(done.stdout)
    return count, enabled


def test_the_cli_loads_with_the_collector_paused_and_leaves_it_on() -> None:
    """Loading the CLI (typer, rich) ran 31 collections that found nothing to free; with the
    collector paused, one runs as it is turned back on (and one as the package loads)."""
    count, enabled = _collections_during("import fabric.cli")
    assert enabled
    assert count <= 3, count
    assert _collections_during("import gc\ngc.disable()\nimport fabric.cli") == (0, False)


def test_making_the_nornir_scans_no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nornir's plugin registers would scan every installed distribution's entry points for
    the inventory and the runner; `make_nornir` builds both plugins itself."""
    from importlib import metadata

    from fabric.credentials import Credentials
    from fabric.intent.build import load_intent
    from fabric.remote.nornir_setup import make_nornir
    from fabric.target import Target
    from tests.push.helpers import INVENTORY

    scans: list[object] = []

    def scan(**kw: object) -> object:
        scans.append(kw)
        raise AssertionError(f"entry points scanned: {kw}")

    monkeypatch.setattr(metadata, "entry_points", scan)
    nr = make_nornir(Target(load_intent("star4"), INVENTORY, Credentials()), workers=3)
    assert scans == []
    assert sorted(nr.inventory.hosts) == ["crs804", "spark01", "spark02", "spark03", "spark04"]
    assert nr.runner.num_workers == 3  # type: ignore[attr-defined]
    assert nr.inventory.hosts["spark01"].hostname


def test_a_validation_loads_only_the_writers_it_was_asked_for() -> None:
    """Without --html, --junit or --md their writers' modules stay unloaded (the HTML one
    brings its drawing stack)."""
    loaded = _modules("from fabric.cli.validate import _write_files\n"
                      "_write_files(None, None, None, None, None, None)")
    assert not {"fabric.report.html", "fabric.report.junit", "fabric.report.markdown",
                "fabric.report.jsonout"} & loaded
