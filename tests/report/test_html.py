"""The HTML page draws the fabric; checked in headless Chromium by its pixels."""

from __future__ import annotations

import dataclasses
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from fabric.draw.render import to_dot
from fabric.intent.model import Intent
from fabric.report import write_html
from fabric.report.html import failing_ways, to_html
from fabric.report.model import Report
from tests.report.png import Image, read_png
from tests.report.sample import EGRESS_1, STAR4_VETH, one_way_slow_report, passing_report
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


def _numbers(pattern: str, text: str) -> list[float]:
    """The numbers in the first group of `pattern`'s match in `text`."""
    found = re.search(pattern, text)
    assert found is not None, pattern
    return [float(x) for x in re.findall(r"-?[\d.]+", found.group(1))]


def test_failing_direction_is_named_and_drawn_toward_its_end() -> None:
    """One way slow (toward spark01): the card names the direction and both slow tests; the
    drawing puts an arrowhead on spark01's end of its cable, and nowhere else."""
    intent = builder.intent(str(STAR4_VETH))
    report = one_way_slow_report(intent)
    link = intent.links[0].id
    assert failing_ways(report) == {link: [("crs804", "spark01")]}
    html = to_html(report, intent)
    aside = html[html.index('<aside id="failures">'):html.index("</aside>")]
    assert aside.count(f"{link}, {EGRESS_1}: ") == 2  # twin A, twin B
    assert "spark04→spark01 0.25 Gb/s" in aside and "spark02→spark01 0.25 Gb/s" in aside
    esc = link.replace("-", "&#45;")
    edges = re.findall(r'<g id="link&#45;(.*?)" class="edge">(.*?)</a>', html, re.S)
    arrows = {name: body for name, body in edges if "<polygon" in body}
    assert list(arrows) == [esc]
    path = _numbers(r' d="M([^"]+)"', arrows[esc])
    head = _numbers(r'points="([^"]+)"', arrows[esc])
    start_y, end_y = path[1], path[-1]
    assert start_y < end_y  # drawn from the switch down to spark01
    assert min(head[1::2]) >= end_y - 1  # the arrowhead sits beyond spark01's end
    assert "crs804→spark01" in html[html.index(f'id="link&#45;{esc}"'):][:2000]


@pytest.mark.parametrize(("ways", "arrows"), [
    ([("crs804", "spark01")], "dir=forward"),
    ([("spark01", "crs804")], "dir=back"),
    ([("spark01", "crs804"), ("crs804", "spark01")], "dir=both"),
])
def test_direction_arrowheads_in_dot(star4: Intent, ways: list[tuple[str, str]],
                                     arrows: str) -> None:
    link = star4.links[0].id
    dot = to_dot(star4, link_status={link: "fail"}, link_ways={link: ways})
    [edge] = [line for line in dot.splitlines() if f'id="link-{link}"' in line]
    assert arrows in edge and all(f"{s}→{d}" in edge for s, d in ways)
    assert sum("dir=" in line for line in dot.splitlines()) == 1


def test_ring_direction_arrowheads_in_dot() -> None:
    ring = builder.intent("ring4")
    link = ring.links[1]
    dot = to_dot(ring, link_ways={link.id: [(link.b.host, link.a.host)]})
    [edge] = [line for line in dot.splitlines() if f'id="link-{link.id}"' in line]
    assert edge.strip().startswith(f'"{link.a.host}" -- "{link.b.host}"') and "dir=back" in edge
