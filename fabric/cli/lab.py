"""`fabric lab up|down|status|fault|heal`: the lab twin built from network namespaces."""

from __future__ import annotations

import time

import typer
from rich.console import Console

from fabric.lab import names

err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

NameOpt = typer.Option(names.DEFAULT_LAB, "--name", "-n", help="Lab name (namespaces NAME-host).")


lab = typer.Typer(name="lab", help="Build a lab twin out of network namespaces.",
                  no_args_is_help=True)


@lab.command("up")
def up(topology: str = typer.Argument(..., help="Topology name or file."),
       name: str = NameOpt,
       sudo_password: bool = typer.Option(
           False, "--sudo-password",
           help="sudo on the Sparks asks for the user's password (kept in the lab's "
                "secrets.json) instead of none: `sudo -n` fails, as on a Spark without "
                "NOPASSWD."),
       switch_prepared: bool = typer.Option(
           False, "--switch-prepared",
           help="The CRS804 starts prepared (management address on ether1, outside the "
                "fabric bridge) instead of from its factory configuration."),
       switch_chip: str | None = typer.Option(
           None, "--switch-chip", metavar="FAMILY",
           help="The CRS804's switch-chip family, which decides the QoS properties its "
                "menus have: prestera-dx (the default: every tx-manager queue property) or "
                "prestera-cpss (no use-shared-buffers or queue-buffers, per MikroTik's CLI "
                "reference)."),
       link_training: float | None = typer.Option(
           None, "--link-training", metavar="SECONDS", min=0.0,
           help="Seconds a switch lane stays without link after a speed, FEC or autoneg "
                "change (default: FABRIC_LAB_LINK_TRAINING_S, else 5)."),
       ) -> None:
    """Build lab NAME from TOPOLOGY: one namespace per host, sshd, lldpd, the switch API."""
    from fabric.lab.lifecycle.builder import up as build

    start = time.monotonic()
    info = build(topology, name, progress=lambda msg: err.print(f"[dim]·[/dim] {msg}"),
                 sudo_password=sudo_password, switch_prepared=switch_prepared,
                 link_training_s=link_training, switch_chip=switch_chip)
    took = time.monotonic() - start
    err.print(f"[green]lab {info.name} is up[/green] ({info.topology}, "
              f"{len(info.hosts)} hosts) in {took:.1f}s")
    err.print(f"  use it with --lab {info.name}; tear it down with "
              f"`fabric lab down --name {info.name}`")


@lab.command("down")
def down(name: str = NameOpt) -> None:
    """Remove lab NAME: processes, namespaces, bridge, veths and state (idempotent)."""
    from fabric.lab.lifecycle.builder import down as remove

    start = time.monotonic()
    if remove(name):
        err.print(f"lab {name} removed in {time.monotonic() - start:.1f}s")
    else:
        err.print(f"no lab named {name}; nothing to do")


@lab.command("status")
def status() -> None:
    """List the labs, their hosts, namespaces, management addresses and daemons."""
    from rich.table import Table

    from fabric.lab.lifecycle.status import lab_status

    labs = lab_status()
    if not labs:
        err.print("no labs (build one with `fabric lab up star4`)")
        return
    for s in labs:
        table = Table(title=f"lab {s.name}: {s.topology} ({s.state}, created {s.created})",
                      title_justify="left")
        for col in ("host", "namespace", "mgmt", "processes"):
            table.add_column(col)
        for h in s.hosts:
            procs = ", ".join(f"{k} {'up' if ok else '[red]down[/red]'}"
                              for k, ok in h.processes.items())
            ns_text = h.namespace if h.netns_ok else f"[red]{h.namespace} (missing)[/red]"
            table.add_row(h.name, ns_text, h.mgmt_ip, procs)
        err.print(table)
        if s.faults:
            err.print("  faults: " + "; ".join(s.faults))


@lab.command("fault")
def fault(kind: str = typer.Argument(..., help="mtu|link-down|swap|degrade|autoneg|"
                                     "wrong-addr|default-route|sshd-stop|flap|drop|time"),
          target: str = typer.Argument(..., help="lane, link id, host:port, host:netdev, "
                                       "A,B or host; drop: TARGET[@rx|@tx|@both][,PCT%]"),
          name: str = NameOpt) -> None:
    """Inject a fault into lab NAME; `fabric lab heal` undoes all of them."""
    from fabric.lab.faults import inject

    done = inject(name, kind, target)
    err.print(f"fault {done.kind} on {done.target}: {done.summary}")


@lab.command("heal")
def heal(name: str = NameOpt) -> None:
    """Undo every fault injected into lab NAME, newest first."""
    from fabric.lab.faults import heal as undo

    healed = undo(name)
    if not healed:
        err.print(f"lab {name} has no faults")
    for f in healed:
        err.print(f"healed {f.kind} on {f.target}")


def register(app: typer.Typer) -> None:
    app.add_typer(lab, name="lab")
