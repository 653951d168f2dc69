"""The `fabric` command line. One module per command group; this module wires them up.

Exit codes (contract): 0 passed / nothing to do, 1 a check failed, 2 bad input or usage,
3 the run could not complete.
"""

from __future__ import annotations

import gc

from fabric.collector import collector_paused

#: The imports make only long-lived objects (modules, classes, functions): the cyclic
#: collector is paused while they load, as in `settled_imports` (30 collections otherwise,
#: about 0.01 s, before any command has started).
with collector_paused():
    import contextlib
    import sys
    import threading
    import types
    from collections.abc import Iterator
    from typing import Any

    import typer
    from rich.console import Console
    from typer.core import TyperGroup

    from fabric.errors import FabricError

#: `fabric --help` lists the commands in the order of the flow, from cables to a launch.
FLOW = ("topo", "plan", "whatif", "lab", "facts", "push", "validate", "doctor", "bundle", "gate",
        "launch", "watch", "parse", "version")


class FlowOrder(TyperGroup):
    """A command group that lists its commands in flow order (unknown ones last, by name)."""

    def list_commands(self, ctx: Any) -> list[str]:
        rank = {name: i for i, name in enumerate(FLOW)}
        return sorted(super().list_commands(ctx), key=lambda n: (rank.get(n, len(FLOW)), n))


app = typer.Typer(
    name="fabric",
    cls=FlowOrder,
    help="DGX Spark fabrics on a MikroTik CRS804: plan, push, validate, launch, and a lab twin.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """DGX Spark fabrics on a MikroTik CRS804: plan, push, validate, launch, and a lab twin."""


#: Modules loaded on first use instead of when imported, in the CLI's own process: paramiko
#: imports invoke (with asyncio and unittest.mock, about 0.03 s of every SSH command's
#: start-up) and uses it only for an ssh_config `Match exec`. Only for modules that every
#: importer takes whole (`import name`, then attributes): importing a submodule of a
#: stand-in would run that submodule twice.
DEFERRED_IMPORTS = ("invoke",)
_DEFERRED_LOAD = threading.Lock()


class _Deferred(types.ModuleType):
    """Stands in for a module not imported yet: `import name` binds it, and the first
    attribute it lacks imports the real module (which replaces it in `sys.modules`, once,
    whichever thread asks first) and is read from there, as is every later one.
    (`importlib.util.LazyLoader` would load at the `import` statement itself: Python 3.11
    reads the module's `__spec__` there.)"""

    def __getattr__(self, attr: str) -> Any:
        import importlib

        name = self.__name__
        with _DEFERRED_LOAD:
            if sys.modules.get(name) is self:
                sys.modules.pop(name)
            module = importlib.import_module(name)
        return getattr(module, attr)


def defer_imports(names: tuple[str, ...] = DEFERRED_IMPORTS) -> None:
    """Put a `_Deferred` stand-in in `sys.modules` for each of `names` that is installed and
    not imported yet."""
    import importlib.util

    for name in names:
        if name not in sys.modules and importlib.util.find_spec(name) is not None:
            sys.modules[name] = _Deferred(name)


#: Human output (progress, tables) goes to stderr; machine output goes to stdout or a file.
#: No emoji codes: what the hosts say is printed as it is (a passwd line's `:x:` stays text).
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200, emoji=False)


#: The module under fabric/cli that registers each command (the rest register themselves as
#: well, but only the one a command line names is imported to run it).
COMMAND_MODULES = {"topo": "topo", "plan": "plan", "whatif": "plan", "lab": "lab",
                   "facts": "facts", "push": "push", "validate": "validate", "doctor": "doctor",
                   "bundle": "bundle", "gate": "gate", "launch": "launch", "watch": "watch",
                   "parse": "parse", "version": "version"}
_REGISTERED: set[str] = set()


def _register(argv: list[str] | None = None) -> None:
    """Add the command groups to `app`, each module once per process (again, each `main` in a
    long-lived process such as the test suite would add them all again and every call would
    grow slower). With `argv`: only the module of the command it names, when it names one
    (importing every command module costs each run about 0.03 s); otherwise all of them
    (`--help`, an unknown command: typer lists them all)."""
    import importlib
    import pkgutil

    import fabric.cli as pkg

    named = next((a for a in argv if not a.startswith("-")), None) if argv else None
    if named in COMMAND_MODULES:
        modules = [COMMAND_MODULES[named]]
    else:
        modules = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__))
    for mod in modules:
        if mod in _REGISTERED:
            continue
        _REGISTERED.add(mod)
        module = importlib.import_module(f"fabric.cli.{mod}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


#: Whether the CLI runs as its own process (`main()` without `argv`), not inside another
#: program such as the test suite.
_as_process = False


@contextlib.contextmanager
def settled_imports() -> Iterator[None]:
    """Imports with the cyclic collector paused: it would only rescan the long-lived objects
    they make (modules, classes, functions). In the CLI's own process those objects are then
    frozen out of its sight (`gc.freeze`), so the collections during the command's work never
    scan them again (about 0.03 s over a validation)."""
    with collector_paused():
        try:
            yield
        finally:
            if _as_process:
                gc.freeze()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; FabricErrors become their exit code and a message, never a traceback.

    Run as the process (`argv` None), the commands register under `settled_imports`,
    `DEFERRED_IMPORTS` load on first use, and the objects the command made are frozen out of
    the cyclic collector as it ends: the interpreter's final sweep over them would only delay
    the exit (by about 0.1 s after a validation)."""
    global _as_process
    if argv is None:
        _as_process = True
        defer_imports()
    with settled_imports():
        _register(sys.argv[1:] if argv is None else argv)
        # typer's option parsing builds pydantic adapters from these (long-lived too)
        from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter  # noqa: F401
    try:
        app(args=argv, prog_name="fabric")
    except FabricError as exc:
        err_console.print(f"error: {exc}", style="bold red", highlight=False, markup=False)
        sys.exit(exc.exit_code)
    finally:
        if argv is None:
            gc.freeze()
