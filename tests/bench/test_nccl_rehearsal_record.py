"""The NCCL rehearsal recorded on 2x H200 parses with our nccl-tests parser to its averages."""

from __future__ import annotations

from pathlib import Path

from fabric.launch.rehearse import split_collectives
from fabric.parsers import parse
from fabric.parsers.records import NcclTestRow, NcclTestSummary

RECORD = Path(__file__).resolve().parents[2] / "bench" / "nccl_rehearsal_h200x2" / "rank0.txt"


def test_recorded_rehearsal_parses_to_its_averages() -> None:
    blocks = split_collectives(RECORD.read_text())
    assert len(blocks) == 2
    summaries: dict[str, float | None] = {}
    rows = 0
    for block in blocks:
        for record in parse("nccl_tests", block):
            if isinstance(record, NcclTestSummary):
                assert record.collective is not None
                summaries[record.collective] = record.avg_busbw_GBps
                assert record.out_of_bounds == 0
            elif isinstance(record, NcclTestRow):
                rows += 1
                assert record.oop_wrong == "0" and record.ip_wrong == "0"
    assert summaries == {"all_reduce_perf": 307.097, "all_gather_perf": 275.255}
    assert rows == 8  # 512M, 1G, 2G, 4G for each collective
