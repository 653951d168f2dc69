"""The package as a user installs it: build a wheel from this checkout, install it into a fresh
venv, and render a launch and a push from there, away from the checkout.

What it proves: every file under fabric/ and validators/ ships in the wheel; the templates and
the rehearsal script load from the installed package (`jinja2.PackageLoader`,
`importlib.resources`, paths beside the modules), not from the checkout; `fabric launch` renders
per-node scripts from a topology and inventory in the working directory; push's netplan,
sysctl, lossless RoCE and RouterOS renders come out of the installed templates.

Offline: pip builds without build isolation (the test venv's setuptools, which builds wheels
itself) and installs with --no-index. The fresh venv sees its dependencies through a `.pth`
that lists the test venv's site-packages as a plain path: a path line does not run the `.pth`
files in that directory, so the editable install's finder (which maps `fabric` to a checkout)
stays out.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOPOLOGY = "star4-lossless"
#: What the source copy leaves behind: VCS data, venvs, caches, build and run outputs.
SKIP = {".git", ".venv", ".lab-tools", "build", "dist", "__pycache__", ".pytest_cache",
        ".mypy_cache", ".ruff_cache", "launch-out", "out", "runs", "demo-report.html"}
PACKAGES = ("fabric", "validators")

#: Runs inside the fresh venv, cwd = the work directory (topologies/ and inventory/ copied in).
PROBE = """
import json, sys
from pathlib import Path

import textfsm

import fabric
import fabric.launch.render
import fabric.plan.runbook
from fabric.intent.build import load_intent
from fabric.launch.rehearse import SCRIPT
from fabric.parsers.textfsm_runner import TEMPLATE_DIR, template_index
from fabric.devices.crs804 import render as switch_render
from fabric.devices.spark import render

intent = load_intent(sys.argv[1], Path("inventory"))
templates = {}
for package, module in (("fabric.launch", fabric.launch.render), ("fabric.devices.spark", render),
                        ("fabric.devices.crs804", switch_render),
                        ("fabric.plan", fabric.plan.runbook)):
    env = module._env()  # the module's own Environment: its PackageLoader and filters
    templates[package] = sorted(env.list_templates())
    for name in templates[package]:
        env.get_template(name)
for name in sorted(set(template_index().values())):
    with (TEMPLATE_DIR / name).open() as handle:
        textfsm.TextFSM(handle)
json.dump({"fabric": fabric.__file__, "textfsm_dir": str(TEMPLATE_DIR),
           "editable_finders": [repr(f) for f in sys.meta_path if "editable" in repr(f)],
           "rehearse_script": str(SCRIPT), "rehearse_text": SCRIPT.read_text(),
           "templates": templates,
           "spark_files": render.render_spark_files(intent, "spark01"),
           "routeros": switch_render.render_routeros(intent, "7.19.4")}, sys.stdout)
"""


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    work: Path
    env: dict[str, str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, args: Sequence[str | Path], what: str) -> subprocess.CompletedProcess[str]:
        return _run(args, self.work, self.env, what)


def _run(args: Sequence[str | Path], cwd: Path, env: dict[str, str],
         what: str) -> subprocess.CompletedProcess[str]:
    """Run a step; on failure, fail the test with the command and its output (no traceback)."""
    cmd = [str(a) for a in args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=180, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what}: timed out after 180 s: {' '.join(cmd)}", pytrace=False)
    if proc.returncode != 0:
        last = next((line for line in reversed(proc.stderr.splitlines()) if line.strip()), "")
        pytest.fail(f"{what} failed (exit {proc.returncode}): {last}\n{' '.join(cmd)}\n"
                    f"--- stderr ---\n{proc.stderr[-4000:]}\n--- stdout ---\n"
                    f"{proc.stdout[-2000:]}", pytrace=False)
    return proc


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n in SKIP or n.endswith((".egg-info", ".pyc"))}


def _clean_env(state: Path) -> dict[str, str]:
    """This environment less anything that could point Python or fabric at the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
           and not k.startswith(("FABRIC_", "PIP_"))}
    env |= {"FABRIC_STATE_DIR": str(state), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PYTHONNOUSERSITE": "1"}
    return env


def _site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages"))
    if len(found) != 1:
        pytest.fail(f"fresh venv {venv}: expected one lib/python*/site-packages, found {found}",
                    pytrace=False)
    return found[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("wheel")
    env = _clean_env(tmp / "state")
    # setuptools (70.1+ builds wheels itself; it vendors `wheel`) from this venv, not PyPI.
    if importlib.util.find_spec("setuptools") is None:
        pytest.fail(f"{sys.executable} lacks setuptools: the offline wheel build "
                    "(--no-build-isolation) needs it (`make venv`)", pytrace=False)
    # A copy, not the checkout: setuptools builds in the source tree, and its build/ keeps
    # files the checkout no longer has (they would ship), nor should a test write the repo.
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=_ignore, symlinks=True)
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--no-index", "-q", "-w", dist, src], tmp, env, "building the wheel")
    wheels = sorted(dist.glob("*.whl"))
    if len(wheels) != 1:
        pytest.fail(f"pip wheel wrote {[w.name for w in wheels]} in {dist}, not one wheel",
                    pytrace=False)
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp, env, "creating the venv")
    # This pip, run under the fresh venv's Python, installs into the fresh venv only.
    _run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q",
          "--no-deps", "--no-index", wheels[0]], tmp, env, "installing the wheel")
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (_site_packages(venv) / "zz_test_deps.pth").write_text("".join(f"{d}\n" for d in deps))
    work = tmp / "work"
    (work / "topologies").mkdir(parents=True)
    shutil.copy2(REPO / "topologies" / f"{TOPOLOGY}.yaml", work / "topologies")
    shutil.copytree(REPO / "inventory", work / "inventory")
    return Installed(wheels[0], venv, work, env)


@pytest.fixture(scope="module")
def probe(installed: Installed) -> dict[str, object]:
    script = installed.work.parent / "probe.py"
    script.write_text(PROBE)
    out = installed.run([str(installed.python), str(script), TOPOLOGY],
                        "rendering from the installed package (probe.py)").stdout
    try:
        result: dict[str, object] = json.loads(out)
    except json.JSONDecodeError as exc:
        pytest.fail(f"probe.py printed no JSON ({exc}): {out[:2000]!r}", pytrace=False)
    return result


def _in(path: object, tree: Path) -> bool:
    return Path(str(path)).resolve().is_relative_to(tree.resolve())


def test_wheel_carries_every_package_file(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as whl:
        shipped = set(whl.namelist())
    wanted = {p.relative_to(REPO).as_posix() for pkg in PACKAGES
              for p in (REPO / pkg).rglob("*")
              if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    missing = sorted(wanted - shipped)
    assert not missing, ("files in the checkout's packages that the wheel leaves out (add "
                         f"their pattern to [tool.setuptools.package-data]): {missing}")


def test_installed_fabric_is_the_wheel_not_the_checkout(installed: Installed,
                                                        probe: dict[str, object]) -> None:
    for key in ("fabric", "textfsm_dir", "rehearse_script"):
        assert _in(probe[key], installed.venv), (
            f"{key} = {probe[key]}: not inside the fresh venv {installed.venv}")
        assert not _in(probe[key], REPO), f"{key} = {probe[key]}: loaded from the checkout"
    assert probe["editable_finders"] == [], (
        f"an editable install's finder is active in the fresh venv: {probe['editable_finders']}")
    version = installed.run([str(installed.venv / "bin" / "fabric"), "version"],
                            "fabric version (console script)")
    assert version.stdout.strip() == "0.1.0"


def test_packaged_templates_load(probe: dict[str, object]) -> None:
    templates = probe["templates"]
    assert isinstance(templates, dict)
    for package in ("fabric.launch", "fabric.devices.spark", "fabric.devices.crs804",
                    "fabric.plan"):
        on_disk = sorted(p.name for p in
                         (REPO / package.replace(".", "/") / "templates").glob("*.j2"))
        assert templates[package] == on_disk, (
            f"{package}: PackageLoader in the wheel install finds {templates[package]}, the "
            f"checkout has {on_disk}")
    text = str(probe["rehearse_text"])
    assert "torch.distributed" in text and "REHEARSAL-ERROR" in text, text[:500]


def test_launch_renders_from_the_wheel(installed: Installed) -> None:
    out = installed.work / "launch-out"
    run = installed.run([str(installed.venv / "bin" / "fabric"), "launch", "sglang",
                         "-t", TOPOLOGY, "--out", str(out), "--force"],
                        "fabric launch sglang (installed console script)")
    assert "rendered 4 files for sglang" in run.stderr, run.stderr
    assert "--force" in (out / "launch.log").read_text()
    plan = json.loads((out / "plan.json").read_text())
    hosts = [r["host"] for r in plan["ranks"]]
    assert hosts == ["spark01", "spark02", "spark03", "spark04"], plan["ranks"]
    assert plan["topology"] == TOPOLOGY and plan["tp"] == 4, plan
    for rank, host in enumerate(hosts):
        script = (out / f"{host}-sglang.sh").read_text()
        assert f"Node {host} is rank {rank} of 4" in script, script
        assert f"--node-rank {rank} \\\n" in script, script
        assert "export NCCL_IB_HCA==rocep1s0f0,roceP2p1s0f0\n" in script, script
        assert "--dist-init-addr 10.210.0.1:20000" in script, script
        assert "export NCCL_IB_TC=106" in script, script  # lossless: the RoCE traffic class


def test_push_renders_from_the_wheel(probe: dict[str, object]) -> None:
    files = probe["spark_files"]
    assert isinstance(files, dict)
    assert list(files) == ["/etc/netplan/40-fabric.yaml", "/etc/sysctl.d/40-fabric.conf",
                           "/etc/systemd/logind.conf.d/40-fabric.conf",
                           "/etc/fabric/roce-qos.sh", "/etc/udev/rules.d/70-fabric-roce-qos.rules"]
    netplan = files["/etc/netplan/40-fabric.yaml"]
    assert f"written by `fabric push` from topology {TOPOLOGY}" in netplan, netplan
    assert "    enp1s0f0np0:\n" in netplan and "      mtu: 9000\n" in netplan, netplan
    assert "        - 10.210.0.1/24\n" in netplan, netplan
    assert "net.ipv4.conf.enp1s0f0np0.arp_ignore = 1" in files["/etc/sysctl.d/40-fabric.conf"]
    assert "mlnx_qos" in files["/etc/fabric/roce-qos.sh"]
    routeros = str(probe["routeros"])
    assert "set [ find default-name=qsfp56-dd-1-1 ] auto-negotiation=" in routeros, routeros
    assert 'add bridge="bridge" interface="qsfp56-dd-1-1" hw=yes' in routeros, routeros
    assert "# qos: lossless on RouterOS 7.19.4" in routeros, routeros
