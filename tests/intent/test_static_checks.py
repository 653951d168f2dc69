"""Every static check, driven by a broken copy of a real topology: exit 2, file, line, field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import INVENTORY, REPO, TOPOLOGIES, run_cli


def broken(tmp_path: Path, base: str, old: str, new: str) -> Path:
    text = (TOPOLOGIES / f"{base}.yaml").read_text()
    assert old in text, f"fixture edit does not apply: {old!r}"
    path = tmp_path / f"{base}-broken.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def line_of(path: Path, needle: str) -> int:
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return no
    raise AssertionError(needle)


CASES = [
    # (id, base, old, new, line needle, field, message fragment)
    ("unknown-host", "star4", "a: spark03:p0", "a: spark33:p0", "spark33", "links[2].a",
     "unknown host 'spark33'"),
    ("unknown-spark-port", "ring4", "b: spark03:p1", "b: spark03:p7", "spark03:p7", "links[1].b",
     "unknown port 'p7'"),
    ("unknown-lane", "star4", "crs804:qsfp56-dd-2-1", "crs804:qsfp56-dd-9-1", "qsfp56-dd-9-1",
     "links[1].b", "unknown port 'qsfp56-dd-9-1'"),
    ("cabled-twice", "star4", "crs804:qsfp56-dd-2-1", "crs804:qsfp56-dd-1-1",
     "spark02:p0", "links[1].b", "cabled twice"),
    ("speed-mode", "star4", "qsfp56-dd-3: 1x200G", "qsfp56-dd-3: 4x100G", "spark03:p0",
     "links[2].speed", "cannot be carried by qsfp56-dd-3 in mode 4x100G"),
    ("lane-absorbed", "star8", "crs804:qsfp56-dd-1-5", "crs804:qsfp56-dd-1-3", "qsfp56-dd-1-3",
     "links[1].b", "lane collision: qsfp56-dd-1-3 is absorbed"),
    ("overlapping-pools", "star4", "rails: [10.210.0.0/24, 10.210.1.0/24]",
     "rails: [10.210.0.0/16, 10.210.1.0/24]", "rails: [", "addressing.rails[1]",
     "overlapping pools"),
    ("twins-share-subnet", "star4", "rails: [10.210.0.0/24, 10.210.1.0/24]",
     "rails: [10.210.0.0/24, 10.210.0.0/24]", "rails: [", "addressing.rails[1]",
     "twins share a subnet"),
    ("twins-share-link-subnet", "ring4", "b: spark02:p1, speed: 200G, cable: dac-200g}",
     "b: spark02:p1, speed: 200G, cable: dac-200g, subnets: [10.99.0.0/24, 10.99.0.0/24]}",
     "10.99.0.0/24", "links[0].subnets", "twins share subnet"),
    ("unknown-field", "ring4", "mtu: 9000", "mtu: 9000\nmtuu: 9000", "mtuu", "mtuu",
     "unknown field"),
    ("bad-mtu", "ring4", "mtu: 9000", "mtu: 99000", "mtu: 99000", "mtu",
     "less than or equal to 9216"),
    ("speed-over-spark", "ring4", "b: spark02:p1, speed: 200G", "b: spark02:p1, speed: 400G",
     "400G", "links[0].speed", "exceeds what a Spark port carries"),
    ("lossless-without-switch", "ring4", "mtu: 9000", "mtu: 9000\nqos: lossless", "qos:",
     "qos", "qos: lossless needs a switch"),
    ("unknown-qos", "star4", "mtu: 9000", "mtu: 9000\nqos: lossles", "qos:", "qos",
     "'lossy' or 'lossless'"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_static_check(case: tuple[str, ...], tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    _, base, old, new, needle, field, fragment = case
    path = broken(tmp_path, base, old, new)
    code, _, err = run_cli(["topo", "check", str(path)], capsys)
    assert code == 2, err
    flat = " ".join(err.split())
    assert f"{path}:{line_of(path, needle)} [{field}]:" in flat, flat
    assert fragment in flat
    assert "Traceback" not in err


def inventory_with_spark17(tmp_path: Path) -> Path:
    """A copy of the inventory with a seventeenth Spark."""
    inv = tmp_path / "inv"
    inv.mkdir()
    for name in ("groups.yaml", "defaults.yaml"):
        (inv / name).write_text((INVENTORY / name).read_text())
    (inv / "hosts.yaml").write_text((INVENTORY / "hosts.yaml").read_text() + (
        "spark17:\n  hostname: x\n  groups: [sparks]\n  data: {node_id: 17, ups: UPS-B}\n"))
    return inv


def test_too_many_sparks_on_switch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = inventory_with_spark17(tmp_path)
    path = broken(tmp_path, "star8", "qsfp56-dd-4: 2x200G", "qsfp56-dd-4: 2x200G\n"
                  "    qsfp56-dd-5: 2x200G")
    text = path.read_text() + ("  - {a: spark17:p0, b: crs804:qsfp56-dd-4-3, speed: 200G}\n")
    path.write_text(text)
    code, _, err = run_cli(["topo", "check", str(path), "-i", str(inv)], capsys)
    flat = " ".join(err.split())
    assert code == 2
    assert "9 Sparks on crs804, which takes at most 8 at 200G" in flat
    assert f"{path}:{line_of(path, 'links:')} [links]" in flat
    assert "unknown port 'qsfp56-dd-5'" in flat


def test_host_missing_port_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = tmp_path / "inv"
    inv.mkdir()
    for name in ("groups.yaml", "defaults.yaml"):
        (inv / name).write_text((INVENTORY / name).read_text())
    hosts = (INVENTORY / "hosts.yaml").read_text()
    (inv / "hosts.yaml").write_text(hosts.replace(
        "spark03:\n  hostname: spark03.mgmt.studio.lan\n  groups: [sparks]\n  data:\n",
        "spark03:\n  hostname: spark03.mgmt.studio.lan\n  groups: []\n  data:\n"
        "    role: spark\n"))
    code, _, err = run_cli(["topo", "check", "star4", "-i", str(inv)], capsys)
    flat = " ".join(err.split())
    assert code == 2
    line = line_of(inv / "hosts.yaml", "spark03:")
    assert f"{inv / 'hosts.yaml'}:{line} [spark03.data.ports]: spark03 has no port map" in flat


def test_secret_in_inventory_is_refused(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yaml").write_text((INVENTORY / "hosts.yaml").read_text())
    (inv / "groups.yaml").write_text((INVENTORY / "groups.yaml").read_text().replace(
        "  platform: mikrotik_routeros\n", "  platform: mikrotik_routeros\n  password: hunter2\n"))
    code, _, err = run_cli(["topo", "check", "star4", "-i", str(inv)], capsys)
    assert code == 2
    assert "switches.password" in err and "hunter2" not in err


def test_yaml_syntax_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = broken(tmp_path, "ring4", "  - {a: spark02:p0", "  - {a: [spark02:p0")
    code, _, err = run_cli(["topo", "check", str(path)], capsys)
    assert code == 2
    assert f"{path}:{line_of(path, '[spark02:p0')}" in err and "YAML syntax" in err


def test_unknown_topology_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["topo", "check", "nosuch"], capsys)
    flat = " ".join(err.split())
    assert code == 2 and "known: ring4, star16, star4, star4-lossless, star8" in flat


def test_no_traceback_from_the_real_entry_point(tmp_path: Path) -> None:
    path = broken(tmp_path, "star4", "a: spark03:p0", "a: spark33:p0")
    proc = subprocess.run([sys.executable, "-m", "fabric", "topo", "check", str(path)],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "spark33" in proc.stderr


@pytest.mark.parametrize("name", ["ring4", "star4", "star4-lossless", "star8"])
def test_shipped_topologies_pass(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["topo", "check", name], capsys)
    assert code == 0, err
    assert f"ok {name}" in err


def test_star16_sixteen_sparks_at_100g_on_four_4x100g_ports() -> None:
    """A CRS804 takes 16 Sparks when each 400G port breaks out 4x100G (lanes 1, 3, 5, 7)."""
    from fabric.intent.build import load_intent

    intent = load_intent("star16")
    assert len(intent.sparks) == 16 and intent.profile.name == "cx7-100g"
    assert {lk.speed_gbps for lk in intent.links} == {100}
    assert intent.switch is not None
    lanes = sorted(lk.end_of(intent.switch.host).port for lk in intent.links)
    assert lanes == sorted(f"qsfp56-dd-{p}-{n}" for p in range(1, 5) for n in (1, 3, 5, 7))
    star8 = load_intent("star8")
    for host in (f"spark{n:02d}" for n in range(1, 9)):  # the first eight keep their addresses
        assert [i.address for i in intent.interfaces(host)] == \
            [i.address for i in star8.interfaces(host)]


def test_seventeen_sparks_at_100g_are_over_capacity(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    inv = inventory_with_spark17(tmp_path)
    path = tmp_path / "star17.yaml"
    path.write_text((TOPOLOGIES / "star16.yaml").read_text() + (
        "  - {a: spark17:p0, b: crs804:qsfp56-dd-4-2, speed: 100G}\n"))
    code, _, err = run_cli(["topo", "check", str(path), "-i", str(inv)], capsys)
    flat = " ".join(err.split())
    assert code == 2 and "17 Sparks on crs804, which takes at most 16 at 100G" in flat, flat
