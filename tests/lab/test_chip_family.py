"""The lossless push on a CRS804 whose switch chip has no `use-shared-buffers` (MikroTik's CLI
reference: prestera-cpss), on a lab built by `fabric lab up --switch-chip prestera-cpss`: the
switch's rows do not show the property, the push leaves it out and says what that costs, the
apply verifies, and the emulator (which would trap the property) never saw it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import Labs, fabric
from tests.lab.test_qos import api_call

pytestmark = pytest.mark.lab

LAB = "t-cpss"
QUEUE = "/interface/ethernet/switch/qos/tx-manager/queue"


@pytest.fixture(scope="module")
def lab(labs: Labs) -> LabInfo:
    return labs("star4-lossless", LAB, cli=True, switch_prepared=True,
                switch_chip="prestera-cpss")


def test_the_lab_records_its_chip_and_its_rows_lack_the_property(lab: LabInfo) -> None:
    assert lab.options["switch_chip"] == "prestera-cpss"
    rows = api_call(lab, QUEUE, "rows", {})
    assert rows and not any("use-shared-buffers" in r or "queue-buffers" in r for r in rows)
    with pytest.raises(Exception, match="unknown parameter"):
        api_call(lab, QUEUE, "set", {"numbers": "*5", "use-shared-buffers": "yes"})


def test_lossless_push_leaves_the_property_out_says_so_and_verifies(lab: LabInfo,
                                                                    tmp_path: Path) -> None:
    r = fabric("push", "--lab", LAB, "--apply", state_dir=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = " ".join(r.stderr.split())
    assert "use-shared-buffers is not a property of this switch" in out and "not sent" in out
    assert "verified" in out
    q3 = next(row for row in api_call(lab, QUEUE, "rows", {}) if row["traffic-class"] == "3")
    assert q3["ecn"] == "true" and "use-shared-buffers" not in q3
