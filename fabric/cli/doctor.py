"""`fabric doctor`: the `host` checks alone (PCIe links, NetworkManager profiles, logind's
RemoveIPC, memory), from each Spark's facts batch: no probes, no bandwidth rounds. The same
run as `fabric validate --only host`, less the fingerprint's reads (links, LLDP, GIDs: no
fingerprint, so the gate could not open on it) and the switch; its report is saved beside the
gate's (never over it).
Exit codes as validate's: 0 passed, 1 a check failed, 2 bad usage, 3 a host unreachable."""

from __future__ import annotations

from pathlib import Path

import typer

from fabric.cli.common import InventoryOpt, LabOpt, TopologyOpt, resolve_target

#: The check family doctor runs (`validators.host`).
DOCTOR_FAMILIES = frozenset({"host"})
#: The saved doctor report's file name, beside `fabric gate`'s `last-report.json`.
DOCTOR_REPORT = "last-doctor.json"

JsonOpt = typer.Option(None, "--json", help="Write the report JSON to FILE ('-' = stdout).")


def doctor_report_path(lab: str | None) -> Path:
    """`<state>/last-doctor.json`, or `<state>/labs/<lab>/last-doctor.json` for a lab."""
    from fabric.gate import default_report_path

    return default_report_path(lab).with_name(DOCTOR_REPORT)


def doctor_cmd(lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
               topology: str | None = TopologyOpt, json_out: str | None = JsonOpt) -> None:
    """Diagnose each Spark's own state: every CX-7 function's PCIe link, NetworkManager
    profiles on fabric twins, logind RemoveIPC, memory for nccl-tests; each finding with
    its fix. Facts only (one SSH batch per Spark), no probes.

    Exit 0 when everything passed, 1 when a check failed, 2 on bad usage, 3 when a host could
    not be read (and nothing else failed).
    """
    from fabric.cli import err_console
    from fabric.cli.validate import _exit, say_unreachable
    from fabric.report import print_terminal, report_to_json, write_json
    from fabric.validate import run_validation

    target = resolve_target(lab, inventory, topology)
    report, facts = run_validation(target, set(DOCTOR_FAMILIES), None,
                                   say=err_console.print, fingerprinted=False)
    print_terminal(report, err_console)
    say_unreachable(facts)
    text = report_to_json(report)  # made once for both copies
    if json_out is not None:
        write_json(report, None if json_out == "-" else Path(json_out), text)
    write_json(report, doctor_report_path(target.lab), text)
    _exit(report, facts)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_cmd)
