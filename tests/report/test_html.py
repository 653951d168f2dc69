"""The HTML page draws the fabric; checked in headless Chromium by its pixels."""

from __future__ import annotations

import dataclasses
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from fabric.intent.model import Intent
from fabric.report import write_html
from fabric.report.model import Report
from tests.report.png import Image, read_png
from tests.report.sample import passing_report
from tests.validators import builder
from validators import run_checks

CHROMIUM = Path("/usr/bin/chromium")


def screenshot(html: Path, tmp_path: Path) -> Path:
    png = tmp_path / "shot.png"
    subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'ud'}",
                    f"--screenshot={png}", "--window-size=1400,900", html.as_uri()],
                   check=True, capture_output=True, timeout=120)
    return png


def straggler_report(intent: Intent, link: str) -> Report:
    """Only a link fails (bandwidth results name no host): the hosts stay green."""
    facts = builder.healthy(intent)
    bw = tuple(dataclasses.replace(b, gbps=20.0) if (b.link_id, b.tool) == (link, "iperf3")
               else b for b in facts.bandwidth)
    results = run_checks(intent, dataclasses.replace(facts, bandwidth=bw))
    return Report.build(topology=intent.name, intent_hash=intent.intent_hash,
                        started="2026-11-30T00:00:00+00:00", duration_s=2.0, results=results)


PAGE = (250, 250, 250)  # #fafafa around the figure; the figure itself is white


def _run_end(img: Image, x: int, y: int, dx: int, dy: int) -> tuple[int, int]:
    """Walk from (x, y) until ten page-coloured pixels in a row; the last non-page pixel."""
    last, page = (x, y), 0
    while 0 <= x < img.width and 0 <= y < img.height and page < 10:
        if img.pixel(x, y) == PAGE:
            page += 1
        else:
            page, last = 0, (x, y)
        x, y = x + dx, y + dy
    return last


def _figure_box(img: Image) -> tuple[int, int, int, int]:
    """The white figure: the first white pixel below the header, then out to the page colour
    (the failure cards beside it are white too, but a strip of page colour parts them)."""
    start = next((x, y) for y in range(80, img.height) for x in range(img.width // 4)
                 if img.pixel(x, y) == (255, 255, 255))
    x0, y0 = start
    x1, _ = _run_end(img, x0, y0 + 5, 1, 0)
    _, y1 = _run_end(img, x0 + 5, y0, 0, 1)
    return x0, y0, x1, y1


def _red(img: Image, box: tuple[int, int, int, int]) -> list[tuple[int, int]]:
    x0, y0, x1, y1 = box
    out = []
    for y in range(y0, y1):
        for x in range(x0, x1):
            r, g, b = img.pixel(x, y)
            if r > 180 and g < 90 and b < 90:
                out.append((x, y))
    return out


def _edge_fraction(svg: str, link: str) -> float:
    """Where the link's vertical edge sits, as a fraction of the drawing's width."""
    vb = re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) [\d.]+"', svg)
    tx = re.search(r"translate\(([\d.]+) ", svg)
    esc = link.replace("-", "&#45;")
    edge = re.search(rf'id="a_link&#45;{re.escape(esc)}">.*?d="M([\d.]+),', svg, re.S)
    assert vb and tx and edge
    return (float(edge.group(1)) + float(tx.group(1))) / float(vb.group(1))


@pytest.fixture(autouse=True)
def _chromium_installed() -> None:
    """`make setup` installs chromium; without it the screenshot tests fail, never skip."""
    if not CHROMIUM.exists():
        pytest.fail("no /usr/bin/chromium: run `make apt` (package chromium)", pytrace=False)


def test_failed_link_is_drawn_red(star4: Intent, tmp_path: Path) -> None:
    link = star4.links[2].id  # spark03
    report = straggler_report(star4, link)
    assert [r.link for r in report.results if r.status == "fail"] == [link]
    html = tmp_path / "report.html"
    write_html(report, star4, html)
    text = html.read_text()
    assert "<svg" in text and "<?xml" not in text and "http://" not in text.split("<svg")[0]
    png = screenshot(html, tmp_path)
    assert png.stat().st_size > 20_000
    img = read_png(png)
    assert (img.width, img.height) == (1400, 900)
    box = _figure_box(img)
    red = _red(img, box)
    assert len(red) > 300, "no red link in the drawing"
    x0, _, x1, _ = box
    pad = 9  # figure padding + border
    want = x0 + pad + _edge_fraction(text, link) * (x1 - x0 - 2 * pad)
    got = statistics.median(x for x, _ in red)
    assert abs(got - want) < 15, (got, want)


def test_passing_fabric_has_no_red(star4: Intent, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    write_html(passing_report(star4), star4, html)
    img = read_png(screenshot(html, tmp_path))
    assert _red(img, _figure_box(img)) == []
