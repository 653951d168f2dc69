"""The rendered netplan file against the real `netplan generate` (netplan.io, installed by
`make apt`), on top of DGX OS's own `01-network-manager-all.yaml`: it must be accepted, and it
must leave NetworkManager the renderer of the whole host (the management port included)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fabric.devices.spark.platform import NETPLAN_PATH
from fabric.devices.spark.render import render_netplan
from fabric.intent.build import load_intent

DGX_OS_BASELINE = ("# Let NetworkManager manage all devices on this system\n"
                   "network:\n  version: 2\n  renderer: NetworkManager\n")
CASES = [("star4", "spark01"), ("ring4", "spark01"), ("ring4", "spark03"), ("star8", "spark05")]


def generate(root: Path, files: dict[str, str]) -> Path:
    """Write `files` under `root` and run the real `netplan generate --root-dir`; the /run."""
    netplan = shutil.which("netplan")
    if netplan is None:
        pytest.fail("netplan (netplan.io) is missing: run `make apt`", pytrace=False)
    for path, text in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(0o600)
    proc = subprocess.run([netplan, "generate", "--root-dir", str(root)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return root / "run"


@pytest.mark.parametrize(("topology", "host"), CASES)
def test_networkmanager_keeps_the_host(tmp_path: Path, topology: str, host: str) -> None:
    intent = load_intent(topology)
    run = generate(tmp_path, {"/etc/netplan/01-network-manager-all.yaml": DGX_OS_BASELINE,
                              NETPLAN_PATH: render_netplan(intent, host)})
    # NetworkManager still manages every device (enP7s7 too): netplan writes this override
    # only while the host's renderer is NetworkManager.
    assert (run / "NetworkManager/conf.d/10-globally-managed-devices.conf").exists()
    assert not list((run / "systemd/network").glob("*.network")), "networkd took a device"
    keyfiles = {p.name for p in (run / "NetworkManager/system-connections").iterdir()}
    assert keyfiles == {f"netplan-{i.netdev}.nmconnection" for i in intent.interfaces(host)}
    for i in intent.interfaces(host):
        text = (run / f"NetworkManager/system-connections/netplan-{i.netdev}.nmconnection"
                ).read_text()
        assert "mtu=9000" in text and f"address1={i.address}" in text


def test_on_a_networkd_host_the_twins_stay_with_networkd(tmp_path: Path) -> None:
    intent = load_intent("star4")
    run = generate(tmp_path, {NETPLAN_PATH: render_netplan(intent, "spark01")})
    networks = sorted(p.name for p in (run / "systemd/network").glob("*.network"))
    assert networks == ["10-netplan-enP2p1s0f0np0.network", "10-netplan-enp1s0f0np0.network"]
    assert not (run / "NetworkManager/conf.d/10-globally-managed-devices.conf").exists()
