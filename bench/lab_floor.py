"""What no validation on this machine's lab can go below: the least remote work, timed as a
whole process beside the full `fabric validate` (measured numbers, no assertion).

    .venv/bin/python bench/lab_floor.py [TOPOLOGY ...] [--runs 5] [--prefix t-floor]

For each topology (default: star8, star16; root, it builds labs) it builds lab
`PREFIX-TOPOLOGY` and configures it with `fabric push --apply`, then times, alternated,
`--runs` runs of `bench/floor_driver.py` (a plain interpreter with paramiko and none of the
toolkit: logins, the counters before, the iperf3 servers, one jumbo echo per planned ping
path, the bandwidth rounds, the counters after; see that file) and of the full
`fabric validate --lab`. The driver's plan comes from the toolkit's own intent, ping plan
and bandwidth schedule, made before any run is timed: the same Sparks, twins, addresses,
ping paths, rounds, test length and rate.

Each run's time outside the rounds is its whole-process wall minus the schedule's lower
bound (rounds x test length): issue 27's figure. The driver's is the floor of that figure on
this machine and lab: the work in it is work the lab's Sparks (their sshd, ip, ethtool,
ping and iperf3) do on the same two cores as the controller, whatever the controller is.
The driver also runs with `--libraries` (it first imports what `fabric validate` loads
besides paramiko: typer, rich, pydantic, Nornir, routeros-api, textfsm, PyYAML); the last
line is what the toolkit itself adds: validate's median outside the rounds minus that one's.
It also prints the machine's busy CPU-seconds per run (/proc/stat, every core).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trees import prepare  # bench/trees.py, beside this script
from validate_star8 import _fmt, machine_busy_s, up_and_pushed

if TYPE_CHECKING:
    from fabric.intent.model import Intent

REPO = Path(__file__).resolve().parents[1]
DRIVER = Path(__file__).resolve().parent / "floor_driver.py"
#: The driver's iperf3 servers listen from here up, away from the toolkit's (5201 up).
BASE_PORT = 5401


def floor_plan(lab: str) -> tuple[dict[str, Any], float]:
    """The driver's plan for lab `lab` (`plan_of` its intent) and the schedule's lower bound
    in seconds."""
    from fabric.cli.common import resolve_target
    from fabric.remote.nornir_setup import make_nornir

    target = resolve_target(lab, None, None)
    cred = target.credentials
    sparks = [h.name for h in target.intent.sparks]
    inventory = make_nornir(target, sparks, workers=1).inventory.hosts
    logins = {name: {"address": str(inventory[name].hostname), "user": cred.ssh_user,
                     "key": str(cred.ssh_key), "known_hosts": str(cred.known_hosts)}
              for name in sparks}
    return plan_of(target.intent, logins)


def plan_of(intent: Intent, logins: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], float]:
    """The driver's plan from the toolkit's own intent, ping plan and bandwidth schedule,
    each Spark logged in as `logins[name]` says; and the schedule's lower bound (seconds):
    per Spark the counters reads (`ip` and `ethtool -S` per twin), the iperf3 servers it
    serves and one jumbo echo per ping path it sends; per round, each client's iperf3
    clients (`--bidir`, the profile's length and rate per twin)."""
    from fabric.probes.ping import ping_probes
    from fabric.probes.schedule import schedule_bandwidth

    sparks = sorted(h.name for h in intent.sparks)  # as the toolkit's schedule is made
    duration = intent.profile.bandwidth_test_s
    rate = intent.profile.iperf3_rate_per_twin
    schedule = schedule_bandwidth(intent, duration, hosts=sparks)
    probes = ping_probes(intent, sources=sparks)
    jumbo = max((p.payload for p in probes), default=0)
    hosts: dict[str, dict[str, Any]] = {
        name: {**logins[name],
               "counters": ["ip -s -s -j link show"] + [
                   f"ethtool -S {i.netdev}" for i in intent.interfaces(name)],
               "servers": [], "pings": []}
        for name in sparks}
    for p in probes:
        if p.payload == jumbo:
            hosts[p.src_host]["pings"].append(
                f"ping -n -M do -s {p.payload} -c 1 -W 1 -I {p.src_netdev} {p.dst_addr}")
    rounds: list[dict[str, list[str]]] = []
    for r in schedule.rounds:
        clients: dict[str, list[str]] = {}
        for t in r:
            for leg in t.legs:
                port = BASE_PORT + 2 * t.index + leg.twin
                hosts[t.server]["servers"].append(
                    f"iperf3 -s -1 -D -p {port} -B {leg.server_addr}")
                clients.setdefault(t.client, []).append(
                    f"iperf3 -c {leg.server_addr} -B {leg.client_addr} -p {port} "
                    f"-t {duration:g} --connect-timeout 3000"
                    + (f" -b {rate}" if rate else "") + " --bidir")
        rounds.append(clients)
    return {"sparks": hosts, "rounds": rounds}, len(schedule.rounds) * duration


def timed(argv: list[str]) -> tuple[int, float, float, str]:
    """(exit code, wall, machine busy CPU-s, stdout) of one whole process."""
    busy = machine_busy_s()
    t0 = time.monotonic()
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.monotonic() - t0
    return proc.returncode, wall, machine_busy_s() - busy, proc.stdout + proc.stderr[-2000:]


def _record(row: dict[str, list[Any]], wall: float, busy: float, bound: float) -> None:
    """One whole run's wall, time outside the rounds and machine CPU, into its row."""
    for key, value in (("wall", wall), ("outside", wall - bound), ("busy", busy)):
        row.setdefault(key, []).append(value)


def bench(topology: str, prefix: str, runs: int) -> None:
    from fabric.lab.lifecycle import builder

    lab = f"{prefix}-{topology}"
    try:
        up_and_pushed(topology, lab)
        plan, bound = floor_plan(lab)
        got: dict[str, dict[str, list[Any]]] = {"floor": {}, "floor + libraries": {},
                                                "validate": {}}
        with tempfile.TemporaryDirectory() as tmp:
            plan_file = Path(tmp) / "plan.json"
            plan_file.write_text(json.dumps(plan))
            report = Path(tmp) / "report.json"
            for _ in range(runs):
                for kind, extra in (("floor", []), ("floor + libraries", ["--libraries"])):
                    began = time.time()
                    code, wall, busy, out = timed([sys.executable, str(DRIVER), str(plan_file),
                                                   *extra])
                    row = got[kind]
                    if code != 0:
                        print(f"   {kind} run failed (not counted): {out[-600:]}")
                        continue
                    said = json.loads(out.splitlines()[-1])
                    row.setdefault("stages", []).append(said["stages"])
                    row.setdefault("start", []).append(said["t0_unix"] - began)
                    row.setdefault("exit", []).append(wall - (said["end_unix"] - began))
                    _record(row, wall, busy, bound)
                code, wall, busy, out = timed([sys.executable, "-m", "fabric", "validate",
                                               "--lab", lab, "--json", str(report)])
                row = got["validate"]
                row.setdefault("codes", []).append(code)
                _record(row, wall, busy, bound)
        _print(topology, bound, plan, got)
    finally:
        builder.down(lab)


def _print(topology: str, bound: float, plan: dict[str, Any],
           got: dict[str, dict[str, list[Any]]]) -> None:
    sparks = plan["sparks"]
    print(f"{len(sparks)} Sparks, {len(plan['rounds'])} rounds, lower bound {bound:.2f} s; "
          f"per Spark {len(next(iter(sparks.values()))['counters'])} counter reads, "
          f"{sum(len(s['servers']) for s in sparks.values())} servers and "
          f"{sum(len(s['pings']) for s in sparks.values())} pings in all")
    kinds = ["floor", "floor + libraries", "validate"]
    heads = ["floor driver", "+ the libraries", "fabric validate"]
    print(f"   {'':34s} " + " ".join(f"{h:>24s}" for h in heads))
    for label, key in (("whole-process wall", "wall"), ("OUTSIDE THE ROUNDS", "outside"),
                       ("machine busy (CPU-s, every core)", "busy")):
        print(f"   {label:34s} " + " ".join(f"{_fmt(got[k].get(key, [])):>24s}" for k in kinds))
    print(f"   validate exit codes {sorted(set(got['validate'].get('codes', [])))}")
    full, libs = got["validate"].get("outside", []), got["floor + libraries"].get("outside", [])
    if full and libs:  # what the toolkit itself adds, beside what it cannot go below
        print(f"   {'VALIDATE ABOVE FLOOR + LIBRARIES':34s} "
              f"{statistics.median(full) - statistics.median(libs):23.2f} s   "
              "(medians: validate's outside minus the floor's with the libraries)")
    for kind in kinds[:2]:
        row = got[kind]
        stages = row.get("stages", [])
        if not stages:
            continue
        print(f"   {kind}: interpreter's start {_fmt(row['start'])}, exit {_fmt(row['exit'])}; "
              "stages ended at (median s from its first line):")
        for name in stages[0]:
            print(f"      {name:32s} {statistics.median(s[name] for s in stages):6.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topologies", nargs="*", default=["star8", "star16"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--prefix", default="t-floor")
    args = parser.parse_args()
    prepare(REPO)
    for topology in args.topologies:
        bench(topology, args.prefix, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
