"""Lab end-to-end fixtures and helpers.

- `fabric(...)`: the one way a test runs the CLI (`python -m fabric` from the repository root, a
  clean environment, output captured, a timeout).
- `labs`: the one lab fixture. A shared lab (`labs(topology, name, ...)`, or the `star4`,
  `ring4`, `star4_pushed`, `ring4_pushed` and `ring4_sudo` fixtures) is built on first use and
  reused by every module that asks for it (the fixtures are per module only so that a lab
  rebuilt by one module is pushed again for the next); a module that changes a lab beyond
  repair takes a private one (`labs.private(...)`), removed when the module is done. Every lab
  is removed when the run leaves tests/lab (or at the end of the session).

These tests need root and the lab's tools. They are never skipped: without them they fail
with a message that says what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fabric.lab import names
from fabric.lab.lifecycle import builder, registry
from fabric.lab.lifecycle.registry import LabInfo

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
#: Seconds a switch lane trains after a speed/FEC/autoneg change in the test labs (5 s by
#: default): small so tests that wait for carrier stay quick, not zero so they must poll.
#: Passed explicitly: tests/conftest.py clears FABRIC_* (FABRIC_LAB_LINK_TRAINING_S too).
LINK_TRAINING_S = 0.5
#: Lanes train after a push changes their speed/FEC; every cable end is up well within this.
CABLES_UP_WITHIN_S = 60.0
STAR_LINK = {h: f"{h}:p0--crs804:qsfp56-dd-{h[-1]}-1" for h in
             ("spark01", "spark02", "spark03", "spark04")}
RING_LINK = {1: "spark01:p0--spark02:p1", 2: "spark02:p0--spark03:p1",
             3: "spark03:p0--spark04:p1", 4: "spark04:p0--spark01:p1"}


@pytest.fixture(scope="session", autouse=True)
def _lab_prerequisites() -> None:
    if os.geteuid() != 0:
        pytest.fail("tests/lab need root (network namespaces, mounts, sshd): run them as root",
                    pytrace=False)
    missing = [t for t in (*builder.TOOLS, "ssh") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"tests/lab need {', '.join(missing)}: run `make apt`", pytrace=False)


# --- the CLI ----------------------------------------------------------------------------------


def fabric(*args: str, state_dir: Path | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m fabric ARGS` as an operator runs it from the repository root: none of the
    caller's FABRIC_* variables (FABRIC_STATE_DIR=`state_dir` where given, else the default
    state directory), stdout and stderr captured apart, killed after `timeout` seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    if state_dir is not None:
        env["FABRIC_STATE_DIR"] = str(state_dir)
    return subprocess.run([sys.executable, "-m", "fabric", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def configure(lab: str, state_dir: Path | None = None) -> None:
    """Configure the lab from its intent with `fabric push --apply`, the supported way (a push
    regression fails here, never papered over)."""
    proc = fabric("push", "--lab", lab, "--apply", state_dir=state_dir)
    assert proc.returncode == 0, f"fabric push --lab {lab} --apply: {proc.stderr[-3000:]}"


def validate(lab: str, tmp_path: Path, *extra: str,
             state_dir: Path | None = None) -> tuple[int, dict[str, Any], str]:
    """`fabric validate --lab LAB --json FILE EXTRA…`: exit code, report ({} when none was
    written) and stderr."""
    out = tmp_path / "report.json"
    out.unlink(missing_ok=True)
    proc = fabric("validate", "--lab", lab, "--json", str(out), *extra, state_dir=state_dir)
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stderr


def failing(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report.get("results", []) if r["status"] in ("fail", "error")]


#: inject(lab, kind, target): `fabric lab fault KIND TARGET --name LAB`, which must take.
Inject = Callable[[str, str, str], None]


@pytest.fixture
def inject(capsys: pytest.CaptureFixture[str]) -> Iterator[Inject]:
    """Inject faults with `fabric lab fault` (in-process); every lab faulted is healed with
    `fabric lab heal` after the test, whatever happened."""
    from tests.conftest import run_cli

    faulted: list[str] = []

    def fault(lab: str, kind: str, target: str) -> None:
        code, _, err = run_cli(["lab", "fault", kind, target, "--name", lab], capsys)
        assert code == 0, err
        faulted.append(lab)

    yield fault
    for lab in dict.fromkeys(faulted):
        code, _, err = run_cli(["lab", "heal", "--name", lab], capsys)
        assert code == 0, err


# --- the labs ---------------------------------------------------------------------------------


def build(topology: str, name: str, **options: Any) -> LabInfo:
    """A fresh lab; `options` are builder.up's (sudo_password, switch_prepared,
    link_training_s)."""
    builder.down(name)  # a lab left by an interrupted run
    options.setdefault("link_training_s", LINK_TRAINING_S)
    return builder.up(topology, name, **options)


def build_with_cli(topology: str, name: str, **options: Any) -> LabInfo:
    """A fresh lab built by `fabric lab up` (in-process), its options given as the CLI's."""
    from fabric.cli import main

    builder.down(name)
    options.setdefault("link_training_s", LINK_TRAINING_S)
    argv = ["lab", "up", topology, "--name", name,
            "--link-training", str(options.pop("link_training_s"))]
    for key, value in sorted(options.items()):
        flag = f"--{key.replace('_', '-')}"
        argv += [flag, value] if isinstance(value, str) else [flag] if value else []
    try:
        main(argv)
    except SystemExit as exc:
        assert not exc.code, f"fabric {' '.join(argv)} exited {exc.code}"
    return registry.load_lab(name)


def cables_up(info: LabInfo) -> bool:
    """Every cabled twin, hidden cable end and switch lane is up with carrier (the kernel's
    view)."""
    from fabric.cli.common import resolve_target
    from fabric.lab.lifecycle.cabling import cable_end

    intent = resolve_target(info.name, None, None).intent
    ends = {(p.host, p.netdev) for p in intent.interfaces()}
    ends |= {(e.host, e.netdev) for link in intent.links
             for e in (cable_end(intent, link.a), cable_end(intent, link.b))}
    if intent.switch is not None:
        ends |= {(intent.switch.host, lane.name) for lane in intent.switch.lanes if lane.link_id}
    flags: dict[str, dict[str, set[str]]] = {}
    for host in {h for h, _ in ends}:
        data = json.loads(in_host(info, host, "ip", "-j", "link", "show"))
        flags[host] = {d["ifname"]: set(d["flags"]) for d in data}
    return all({"UP", "LOWER_UP"} <= flags[h].get(dev, set()) for h, dev in ends)


@dataclass
class _Lab:
    spec: tuple[Any, ...]
    info: LabInfo
    pushed: bool = False


@dataclass
class Labs:
    """The session's labs, built on first use (see the module's docstring)."""

    _labs: dict[str, _Lab] = field(default_factory=dict)

    def __call__(self, topology: str, name: str, *, pushed: bool = False, cli: bool = False,
                 **options: Any) -> LabInfo:
        """Lab `name` of `topology` (`options`: builder.up's), shared by every test that asks
        for it with the same arguments; `pushed`: configured by `fabric push --apply` with
        every cable up; `cli`: built by `fabric lab up`."""
        spec = (topology, cli, tuple(sorted(options.items())))
        lab = self._labs.get(name)
        if lab is None:
            info = (build_with_cli if cli else build)(topology, name, **options)
            lab = self._labs[name] = _Lab(spec, info)
        assert lab.spec == spec, f"lab {name} is shared: asked as {spec}, built as {lab.spec}"
        if pushed and not lab.pushed:
            configure(name)
            assert eventually(lambda: cables_up(lab.info), timeout=CABLES_UP_WITHIN_S), \
                f"{name}: the cables did not all come up after the push"
            lab.pushed = True
        return lab.info

    def rebuild(self, name: str) -> LabInfo:
        """Lab `name` removed and built again as first asked, unconfigured (the next test
        that asks for it pushed gets it pushed again)."""
        lab = self._labs[name]
        topology, cli, options = lab.spec
        lab.info = (build_with_cli if cli else build)(topology, name, **dict(options))
        lab.pushed = False
        return lab.info

    @contextmanager
    def private(self, topology: str, name: str, **options: Any) -> Iterator[LabInfo]:
        """A fresh lab for one module, which changes it beyond repair; removed afterwards."""
        assert name not in self._labs, f"lab {name} is shared"
        try:
            yield build(topology, name, **options)
        finally:
            builder.down(name)

    def close(self) -> None:
        for name in self._labs:
            builder.down(name)
        self._labs.clear()


_LABS = pytest.StashKey[Labs]()


@pytest.fixture(scope="session")
def labs(request: pytest.FixtureRequest) -> Iterator[Labs]:
    """Every lab of the session; all are removed when the run leaves tests/lab (see
    pytest_runtest_teardown), or at the end."""
    registry_ = request.session.stash[_LABS] = Labs()
    try:
        yield registry_
    finally:
        registry_.close()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the last lab test, remove the labs at once: their daemons would otherwise share
    the two cores with every test that runs after tests/lab in the same session."""
    here = Path(__file__).parent
    if nextitem is None or here not in Path(nextitem.path).parents:
        labs = item.session.stash.get(_LABS, None)
        if labs is not None:
            labs.close()


@pytest.fixture(scope="module")
def ring4(labs: Labs) -> LabInfo:
    """ring4 as built (a DAC ring, no switch: switch_prepared only keeps the options alike)."""
    return labs("ring4", "t-ring4", switch_prepared=True)


@pytest.fixture(scope="module")
def star4(labs: Labs) -> LabInfo:
    """star4 as built, with a switch already prepared (management address on ether1), as the
    README tells an admin to do before the first push."""
    return labs("star4", "t-star4", switch_prepared=True)


@pytest.fixture(scope="module")
def star4_pushed(labs: Labs) -> LabInfo:
    """star4 configured from its intent by `fabric push --apply`, every cable up. Tests that
    fault it heal it."""
    return labs("star4", "t-star4-pushed", switch_prepared=True, pushed=True)


@pytest.fixture(scope="module")
def ring4_pushed(labs: Labs) -> LabInfo:
    """ring4 configured from its intent by `fabric push --apply`, every cable up."""
    return labs("ring4", "t-ring4-pushed", switch_prepared=True, pushed=True)


@pytest.fixture(scope="module")
def ring4_sudo(labs: Labs) -> LabInfo:
    """ring4 built through the CLI with `--sudo-password` (and the other lab options): sudo on
    its Sparks asks for a password."""
    return labs("ring4", "t-ring4-sudo", cli=True, sudo_password=True, switch_prepared=True)


def in_host(info: LabInfo, host: str, *argv: str, check: bool = True) -> str:
    """Run a command inside a lab host (network, mounts, hostname) and return its stdout."""
    holder = registry.load_lab(info.name).hosts[host].pids["holder"]
    proc = subprocess.run(["nsenter", "-t", str(holder), "-m", "-u", "-n", "--", *argv],
                          capture_output=True, text=True, timeout=30, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"{host}: {' '.join(argv)}: {proc.stderr}")
    return proc.stdout


def ssh(info: LabInfo, host: str, command: str, *, user: str | None = None,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `command` on a lab host over the OpenSSH client as the lab's Spark user (the lab
    key, host key verified); the finished process, stdout and stderr apart."""
    argv = ["ssh", "-i", str(info.client_key), "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={info.known_hosts}", "-o", "StrictHostKeyChecking=yes",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10",
            "-l", user or info.ssh_user, info.mgmt[host], command]
    return subprocess.run(argv, input=input, capture_output=True, text=True, timeout=60,
                          check=False)


def ssh_ok(info: LabInfo, host: str, command: str, input: str | None = None) -> str:
    """`ssh` that must succeed; its stdout."""
    proc = ssh(info, host, command, input=input)
    if proc.returncode != 0:
        raise AssertionError(f"{host}: {command}: exit {proc.returncode}: {proc.stderr}")
    return proc.stdout


def ip_links(info: LabInfo, host: str) -> dict[str, dict[str, Any]]:
    data = json.loads(in_host(info, host, "ip", "-j", "-d", "addr", "show"))
    return {d["ifname"]: d for d in data}


def _ip_json(netns: str, *args: str) -> list[dict[str, Any]]:
    out = subprocess.run(["ip", "-n", netns, "-j", *args], capture_output=True, text=True,
                         check=True).stdout
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def _veth_peer(netns: str, dev: str) -> tuple[str, str]:
    """(namespace, netdev) of the veth peer of `dev` in `netns`, from the kernel."""
    link = _ip_json(netns, "-d", "link", "show", "dev", dev)[0]
    ids = subprocess.run(["ip", "-n", netns, "netns", "list-id"], capture_output=True,
                         text=True, check=True).stdout
    peer_ns = next(line.split("netns name: ")[1].rstrip(")") for line in ids.splitlines()
                   if line.startswith(f"nsid {link['link_netnsid']} ") and "netns name:" in line)
    peers = _ip_json(peer_ns, "link", "show")
    return peer_ns, next(p["ifname"] for p in peers if p["ifindex"] == link["link_index"])


def cable_peer(info: LabInfo, host: str, dev: str) -> tuple[str, str]:
    """(host, netdev) at the far end of the veth `dev` of `host`: where its cable is plugged
    now, read from the kernel (the veth's peer; through the lab's patch panel, the other end
    in the same panel bridge), not from LLDP."""
    peer_ns, name = _veth_peer(f"{info.name}-{host}", dev)
    if peer_ns == names.panel_netns(info.name):
        [row] = _ip_json(peer_ns, "link", "show", "dev", name)
        [other] = [r["ifname"] for r in _ip_json(peer_ns, "link", "show", "master", row["master"])
                   if r["ifname"] != name]
        peer_ns, name = _veth_peer(peer_ns, other)
    return peer_ns.removeprefix(f"{info.name}-"), name


def lldp_neighbors(info: LabInfo, host: str) -> set[tuple[str, str, str]]:
    """(local interface, neighbour system name, neighbour port id) as lldpd reports them."""
    data = json.loads(in_host(info, host, "lldpcli", "-f", "json0", "show", "neighbors"))
    out: set[tuple[str, str, str]] = set()
    for iface in data.get("lldp", [{}])[0].get("interface", []):
        chassis = iface["chassis"][0]
        name = chassis["name"][0]["value"]
        port = iface["port"][0]["id"][0]["value"]
        out.add((iface["name"], name, port))
    return out


def eventually(check: Callable[[], bool], timeout: float = 25.0) -> bool:
    """Poll a condition (LLDP needs a frame to arrive); True as soon as it holds. The ceiling
    covers two lldpd tx-intervals, for a loaded machine; a healthy lab answers at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def netmiko_linux(info: LabInfo, host: str, known_hosts: Path | None = None) -> Any:
    from netmiko import ConnectHandler

    return ConnectHandler(device_type="linux", host=info.mgmt[host], username=info.ssh_user,
                          use_keys=True, key_file=str(info.client_key), ssh_strict=True,
                          system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(known_hosts or info.known_hosts), allow_agent=False,
                          conn_timeout=10)


@pytest.fixture(scope="module")
def state_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state directory (reports, push backups) of the test module's own."""
    return tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1] + "-state")
