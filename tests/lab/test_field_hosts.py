"""Lab Sparks are as strict as DGX OS Sparks: a normal login with sudo, and real netplan.

The admin logs in as `dgxadmin`, not root; `sudo -n` works (or asks for a password with
`fabric lab up --sudo-password`). /etc/netplan starts with exactly DGX OS's
01-network-manager-all.yaml, the real `netplan generate` runs in the host's private /run, and
`netplan apply` (the lab's stand-in: real generate, then the generated MTU and addresses
applied) configures exactly what netplan names.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric.intent.build import load_intent
from fabric.lab import names
from fabric.lab.host import hostenv, netplan_shim
from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import LINK_TRAINING_S, Labs, in_host, ssh, ssh_ok

pytestmark = pytest.mark.lab

SPARK = "spark01"
BASE = f"/etc/netplan/{netplan_shim.BASE_NAME}"
#: What `netplan generate` writes (inside a host); none of it may appear on the machine.
GENERATED = ("/run/NetworkManager", "/run/systemd/network", "/run/systemd/system",
             "/run/udev/rules.d/90-netplan.rules", "/run/netplan", "/run/fabric-lab")


@pytest.fixture(scope="module")
def field(labs: Labs) -> Iterator[LabInfo]:
    """A star4 of this module's own: its Sparks' fabric addresses get changed here."""
    with labs.private("star4", "t-field", switch_prepared=True) as info:
        yield info


@pytest.fixture(scope="module")
def sudo_pw(ring4_sudo: LabInfo) -> LabInfo:
    """ring4 built through the CLI with `--sudo-password` (and the other lab options)."""
    return ring4_sudo


def _links(info: LabInfo, host: str) -> dict[str, dict[str, Any]]:
    """`ip -j addr` over SSH as the Spark user: {ifname: (mtu, up, IPv4 addresses)}."""
    data = json.loads(ssh_ok(info, host, "ip -j addr show"))
    return {d["ifname"]: {"mtu": d["mtu"], "up": "UP" in d["flags"],
                          "inet": sorted(f"{a['local']}/{a['prefixlen']}"
                                         for a in d["addr_info"] if a["family"] == "inet")}
            for d in data}


def _links_once(info: LabInfo, host: str, ready: Callable[[dict[str, dict[str, Any]]], bool],
                timeout_s: float = 15.0) -> dict[str, dict[str, Any]]:
    """`_links` polled until `ready` holds (bounded): NetworkManager activates a connection a
    while after `netplan apply` returned."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = _links(info, host)
        if ready(now) or time.monotonic() > deadline:
            return now
        time.sleep(0.1)


def _twins(info: LabInfo, host: str) -> tuple[str, str]:
    """The two twins of the host's first cabled port."""
    intent = load_intent(info.topology_path, info.inventory_dir)
    port = sorted(lk.end_of(host).port for lk in intent.links_of(host))[0]
    a, b = (t.netdev for t in intent.hosts[host].ports[port])
    return a, b


def _machine_state() -> dict[str, str]:
    """What the machine itself has at the paths netplan writes, and its netplan files."""
    out: dict[str, str] = {}
    for top in (*GENERATED, "/etc/netplan", "/lib/netplan", "/usr/lib/netplan"):
        root = Path(top)
        paths = [root, *sorted(root.rglob("*"))] if root.is_dir() else [root]
        for p in paths:
            if p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[str(p)] = "dir" if p.is_dir() else "absent"
    return out


def _write(info: LabInfo, host: str, path: str, text: str) -> None:
    """Write a root-owned 0600 file on a Spark the way an admin does: through sudo."""
    ssh_ok(info, host, f"sudo -n tee {path} >/dev/null && sudo -n chmod 600 {path}", text)


def test_the_spark_login_is_a_normal_user_with_passwordless_sudo(star4: LabInfo) -> None:
    assert star4.ssh_user == names.SPARK_USER == "dgxadmin"
    assert star4.sudo_password is None
    assert star4.options == {"sudo_password": False, "switch_prepared": True,
                             "link_training_s": LINK_TRAINING_S, "switch_chip": "prestera-dx"}
    intent = load_intent(star4.topology_path, star4.inventory_dir)
    for spark in intent.sparks:
        out = ssh_ok(star4, spark.name, "id -un; id -u; id -Gn; echo $HOME; pwd; sudo -n true "
                                        "&& sudo -n id -u; sudo -n stat -c '%a %U' "
                                        "/etc/sudoers.d/90-dgxadmin").split("\n")
        user, uid, groups, home, cwd, sudo_uid, drop_in_mode = out[:7]
        assert user == "dgxadmin" and int(uid) >= 1000, out
        assert {"dgxadmin", "adm", "sudo"} <= set(groups.split()), groups
        assert home == cwd == "/home/dgxadmin"
        assert sudo_uid == "0"
        assert drop_in_mode == "440 root"
    assert "NOPASSWD: ALL" in ssh_ok(star4, SPARK, "sudo -n cat /etc/sudoers.d/90-dgxadmin")
    # the machine itself has no such user, sudoers drop-in or home
    for path in ("/etc/passwd", "/etc/group", "/etc/shadow"):
        assert "dgxadmin" not in Path(path).read_text(), path
    assert not Path("/etc/sudoers.d/90-dgxadmin").exists()
    assert not Path("/home/dgxadmin").exists()
    # the lab key does not open root, on a Spark as on DGX OS
    refused = ssh(star4, SPARK, "true", user="root")
    assert refused.returncode == 255 and "Permission denied" in refused.stderr


def test_the_reads_of_a_field_check_work_as_the_user(star4: LabInfo) -> None:
    a, _ = _twins(star4, SPARK)
    bridge = star4.mgmt[SPARK].rsplit(".", 1)[0] + ".254"
    assert _links(star4, SPARK)[a]["mtu"] == 1500
    assert "Speed: 10000Mb/s" in ssh_ok(star4, SPARK, f"ethtool {a}")
    ssh_ok(star4, SPARK, f"ping -c 1 -W 2 -M do -s 1472 {bridge}")
    ssh_ok(star4, SPARK, "iperf3 --version")
    assert ssh_ok(star4, SPARK, f"cat /sys/class/net/{a}/mtu").strip() == "1500"
    counters = json.loads(ssh_ok(star4, SPARK, f"ip -s -j link show {a}"))[0]
    assert "stats64" in counters
    # lldpcli is setuid _lldpd for group adm, and the user is in adm (as on Ubuntu)
    lldp = json.loads(ssh_ok(star4, SPARK, "lldpcli -f json show neighbors"))
    assert lldp["lldp"]["interface"]
    # what needs root: the netplan files (0600) and so `netplan get`
    for cmd in (f"cat {BASE}", "netplan get"):
        proc = ssh(star4, SPARK, cmd)
        assert proc.returncode != 0 and "Permission denied" in proc.stderr, (cmd, proc)
    assert "renderer: NetworkManager" in ssh_ok(star4, SPARK, "sudo -n netplan get")


def test_sudo_password_makes_sudo_n_fail(sudo_pw: LabInfo) -> None:
    record = json.loads((sudo_pw.dir / "lab.json").read_text())
    assert record["options"] == {"sudo_password": True, "switch_prepared": True,
                                 "link_training_s": LINK_TRAINING_S,
                                 "switch_chip": "prestera-dx"}
    password = sudo_pw.sudo_password
    assert password and password not in (sudo_pw.dir / "lab.json").read_text()
    secrets = sudo_pw.dir / "secrets.json"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert json.loads(secrets.read_text())["sudo_password"] == password
    proc = ssh(sudo_pw, SPARK, "sudo -n true")
    assert proc.returncode == 1 and "sudo: a password is required" in proc.stderr
    assert ssh_ok(sudo_pw, SPARK, "sudo -S -p '' id -u", input=password + "\n").strip() == "0"
    assert "NOPASSWD" not in ssh_ok(sudo_pw, SPARK, "sudo -S -p '' cat /etc/sudoers.d/90-dgxadmin",
                                    input=password + "\n")


def test_each_spark_starts_with_dgx_os_netplan_and_real_generate(star4: LabInfo) -> None:
    assert netplan_shim.BASE_TEXT == ("# Let NetworkManager manage all devices on this system\n"
                                      "network:\n  version: 2\n  renderer: NetworkManager\n")
    machine = _machine_state()
    intent = load_intent(star4.topology_path, star4.inventory_dir)
    for spark in intent.sparks:
        h = spark.name
        listing, mode, text = ssh_ok(star4, h, f"sudo -n sh -c 'ls -A /etc/netplan; echo @; stat "
                                               f"-c \"%a %U %G\" {BASE}; echo @; cat {BASE}'"
                                     ).split("@\n")
        assert listing.split() == [netplan_shim.BASE_NAME]
        assert mode.strip() == "600 root root"
        assert text == netplan_shim.BASE_TEXT
        # nothing from the machine's /lib/netplan; `netplan` is the lab's wrapper, for sudo's
        # secure_path too; the real one is kept reachable
        others, which, head, real = ssh_ok(
            star4, h, "ls -A /lib/netplan /usr/lib/netplan /run/netplan 2>/dev/null; echo @; "
                      "sudo -n sh -c 'command -v netplan'; echo @; head -3 /usr/sbin/netplan; "
                      f"echo @; cat {netplan_shim.REAL_DIR}/netplan.script").split("@\n")
        assert ".yaml" not in others and "generate" in others
        assert which.strip() == "/usr/sbin/netplan"
        assert "fabric lab" in head
        assert "from netplan import Netplan" in real
        gen = ssh(star4, h, "sudo -n netplan generate && sudo -n test -f "
                            "/run/NetworkManager/conf.d/10-globally-managed-devices.conf")
        assert gen.returncode == 0, gen.stderr
    assert _machine_state() == machine, "the machine's /run or netplan files changed"


def test_netplan_apply_sets_exactly_what_netplan_generates(field: LabInfo) -> None:
    a, b = _twins(field, SPARK)
    before = _links(field, SPARK)
    machine = _machine_state()
    ssh_ok(field, SPARK, f"sudo -n ip addr add 198.19.9.9/24 dev {a}")  # not netplan's
    _write(field, SPARK, "/etc/netplan/40-cx7.yaml", f"""network:
  version: 2
  ethernets:
    {a}:
      renderer: networkd
      mtu: 9000
      addresses: [198.19.0.1/24]
    {b}:
      mtu: 9000
      addresses: [198.19.1.1/24, 198.19.5.1/24]
""")
    try:
        # the twin's addresses read in the same command, the moment `netplan apply` returns
        applied = ssh(field, SPARK, f"sudo -n netplan apply && ip -4 -o addr show dev {b}")
        assert applied.returncode == 0 and applied.stdout == "", applied
        generated = ssh_ok(field, SPARK, "sudo -n ls /run/systemd/network "
                                         "/run/NetworkManager/system-connections")
        assert f"10-netplan-{a}.network" in generated  # rendered by networkd
        assert f"netplan-{b}.nmconnection" in generated  # by NetworkManager
        now = _links(field, SPARK)
        assert now[a] == {"mtu": 9000, "up": True, "inet": ["198.19.0.1/24"]}  # networkd
        # NetworkManager's device: flushed by the apply (no address right after it, above),
        # configured once NetworkManager has started again and activated it (as `netplan
        # apply` does on DGX OS)
        now = _links_once(field, SPARK, lambda links: links[b]["inet"] != [])
        assert now[b] == {"mtu": 9000, "up": True, "inet": ["198.19.1.1/24", "198.19.5.1/24"]}
        untouched = {k: v for k, v in before.items() if k not in (a, b)}
        assert {k: now[k] for k in untouched} == untouched  # enP7s7, cx7-*, the other port
        assert now["enP7s7"]["inet"] == [f"{field.mgmt[SPARK]}/24"]
        # a changed file: exactly the new addresses
        _write(field, SPARK, "/etc/netplan/40-cx7.yaml", f"""network:
  version: 2
  ethernets:
    {b}:
      mtu: 9000
      addresses: [198.19.1.1/24]
""")
        ssh_ok(field, SPARK, "sudo -n netplan apply")
        now = _links_once(field, SPARK, lambda links: links[b]["inet"] != [])
        assert now[b] == {"mtu": 9000, "up": True, "inet": ["198.19.1.1/24"]}
        assert now[a] == before[a]  # no longer named: deconfigured
    finally:
        ssh_ok(field, SPARK, "sudo -n rm -f /etc/netplan/40-cx7.yaml")
        removed = ssh(field, SPARK, "sudo -n netplan apply")
    assert removed.returncode == 0, removed.stderr
    assert _links(field, SPARK) == before
    assert _machine_state() == machine


def test_a_file_netplan_rejects_fails_apply_with_netplans_error(field: LabInfo) -> None:
    a, _ = _twins(field, SPARK)
    before = _links(field, SPARK)
    _write(field, SPARK, "/etc/netplan/50-bad.yaml",
           f"network:\n  version: 2\n  ethernets:\n    {a}:\n      mtuu: 9000\n")
    try:
        proc = ssh(field, SPARK, "sudo -n netplan apply")
        assert proc.returncode == netplan_shim.EX_CONFIG, proc
        assert "/etc/netplan/50-bad.yaml" in proc.stderr
        assert "unknown key 'mtuu'" in proc.stderr
        assert _links(field, SPARK) == before
    finally:
        ssh_ok(field, SPARK, "sudo -n rm -f /etc/netplan/50-bad.yaml")
    # as the user, apply fails at once, like on a Spark (it cannot read /etc/netplan)
    proc = ssh(field, SPARK, "netplan apply")
    assert proc.returncode != 0 and "Permission denied" in proc.stderr
    assert ssh(field, SPARK, "sudo -n netplan apply").returncode == 0
    assert _links(field, SPARK) == before


def test_the_shim_reads_both_renderers(tmp_path: Path) -> None:
    """The parsing alone: networkd's .network and NetworkManager's keyfile, IPv4 only."""
    nd, nm = tmp_path / "network", tmp_path / "nm"
    nd.mkdir()
    nm.mkdir()
    (nd / "10-netplan-x0.network").write_text(
        "[Match]\nName=x0\n\n[Link]\nMTUBytes=9000\n\n[Network]\nLinkLocalAddressing=ipv6\n"
        "Address=10.0.0.1/24\nAddress=fd00::1/64\n\n[Address]\nAddress=10.0.1.1/24\n")
    (nm / "netplan-x1.nmconnection").write_text(
        "[connection]\nid=netplan-x1\ntype=ethernet\ninterface-name=x1\n\n[ethernet]\n"
        "mtu=9000\n\n[ipv4]\nmethod=manual\naddress1=10.0.2.1/24\naddress2=10.0.3.1/24,10.0.2.254"
        "\n")
    links = {n: netplan_shim.Link(n, 1500, "", True, []) for n in ("x0", "x1", "cx7-p0")}
    got = [*netplan_shim.read_networkd(nd, links), *netplan_shim.read_networkmanager(nm, links)]
    assert [(w.device, w.mtu, w.addresses) for w in got] == [
        ("x0", 9000, ["10.0.0.1/24", "10.0.1.1/24"]),
        ("x1", 9000, ["10.0.2.1/24", "10.0.3.1/24"])]
    assert names.lower("p0").startswith(netplan_shim.HIDDEN_PREFIX)
    state: netplan_shim.State = {"original": {}, "configured": {}}
    lines = netplan_shim.plan(got, links, state)
    assert "link set dev x0 mtu 9000" in lines and "addr add 10.0.3.1/24 dev x1" in lines
    assert not any("cx7-p0" in line for line in lines)
    assert sorted(state["configured"]) == ["x0", "x1"]
    assert os.path.basename(netplan_shim.real_path("/usr/share/netplan/netplan.script")) == (
        "netplan.script")


def test_lib_netplan_keeps_the_generator_and_drops_yaml(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What replaces /lib/netplan in a Spark: every entry of the machine's but its YAML."""
    lib = tmp_path / "lib" / "netplan"
    lib.mkdir(parents=True)
    (tmp_path / "generate").write_text("#!/bin/sh\n")
    (lib / "generate").symlink_to(tmp_path / "generate")
    (lib / "helper").write_text("a file inside the hidden directory\n")
    (lib / "00-machine.yaml").write_text("network: {version: 2, renderer: networkd}\n")
    monkeypatch.setattr(hostenv, "LIB_NETPLAN", (str(lib), str(lib)))
    target = tmp_path / "lib-netplan"
    hostenv._lib_netplan(target)
    assert sorted(p.name for p in target.iterdir()) == ["generate", "helper"]
    assert (target / "generate").resolve() == tmp_path / "generate"
    assert not (target / "helper").is_symlink()  # a copy: the original is hidden in the host


def test_tmp_is_private_to_each_host_and_the_users_python_runs(star4: LabInfo) -> None:
    """Launch records (/var/tmp) and the rehearsal script (/tmp) land in the Spark, not on the
    machine or in the next Spark; the toolkit's own Python runs as the lab user."""
    import sys

    marker = f"fabric-private-{star4.name}"
    in_host(star4, "spark01", "sh", "-c", f"echo x >/tmp/{marker}; echo y >/var/tmp/{marker}")
    assert not Path(f"/tmp/{marker}").exists() and not Path(f"/var/tmp/{marker}").exists()
    other = in_host(star4, "spark02", "sh", "-c", f"ls /tmp/{marker} 2>&1 || true")
    assert "No such file" in other
    out = in_host(star4, "spark01", "su", "-s", "/bin/sh", star4.ssh_user, "-c",
                  f"{sys.executable} -c 'import fabric; print(42)'")
    assert out.strip() == "42"
