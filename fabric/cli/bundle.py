"""`fabric bundle`: one .tar.gz for a vendor ticket - each host's raw command outputs, the
parsed facts, the last reports, versions and the RouterOS export, secrets masked. Exit 0 when
every host was read, 3 when some could not be (the bundle is written all the same, with the
reasons in errors.json), 2 on bad usage."""

from __future__ import annotations

from pathlib import Path

import typer

from fabric.cli.common import InventoryOpt, LabOpt, TopologyOpt, resolve_target

OutOpt = typer.Option(None, "-o", "--output", help="The archive to write (default: "
                      "./fabric-bundle-<topology>-<UTC time>.tar.gz).")


def bundle_cmd(lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
               topology: str | None = TopologyOpt, output: Path | None = OutOpt) -> None:
    """Write a support bundle: raw command outputs of every host, parsed facts, the last
    validate/doctor reports, versions and the switch's /export terse; secrets masked."""
    from fabric.bundle import write_bundle
    from fabric.cli import err_console
    from fabric.errors import InputError, RunIncomplete

    if output is not None and not output.name.endswith((".tar.gz", ".tgz")):
        raise InputError(f"-o {output}: the bundle is a .tar.gz")
    if output is not None and not output.parent.is_dir():
        raise InputError(f"-o {output}: no directory {output.parent}")
    target = resolve_target(lab, inventory, topology)
    path, seen = write_bundle(target, output)
    err_console.print(f"bundle written: {path} ({len(seen.raw)} raw outputs, "
                      f"{len(seen.sparks)} Sparks' facts)")
    if seen.errors:
        raise RunIncomplete("bundle written, but some hosts could not be read: " + "; ".join(
            f"{h}: {r}" for h, r in sorted(seen.errors.items())))


def register(app: typer.Typer) -> None:
    app.command("bundle")(bundle_cmd)
