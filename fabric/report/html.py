"""The report as one self-contained HTML page: the fabric drawn with every host and link
coloured by its worst result (an arrowhead on the end a failing direction flows toward), the
failures beside it, every result below."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any

from fabric.errors import FabricError
from fabric.intent.model import Intent
from fabric.report.model import CheckResult, Report, host_status, link_status
from fabric.report.terminal import verdict

CSS = """
body{font-family:Helvetica,Arial,sans-serif;margin:0;color:#222;background:#fafafa}
header{padding:14px 24px;color:#fff}
header.pass{background:#2e8b57} header.fail{background:#c62828}
header h1{margin:0;font-size:22px} header p{margin:4px 0 0;font-size:14px}
main{display:flex;gap:20px;padding:16px 24px;align-items:flex-start}
figure{flex:3;margin:0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px;
min-width:0}
figure svg{width:100%;height:auto;max-height:78vh}
aside{flex:2;min-width:320px;max-height:82vh;overflow:auto}
aside h2,section h2{font-size:17px;margin:0 0 8px}
.card{background:#fff;border:1px solid #ddd;border-left:6px solid #999;border-radius:4px;
padding:8px 10px;margin-bottom:8px;font-size:13px}
.card.fail{border-left-color:#d62728}.card.error{border-left-color:#8b0000}
.card.warn{border-left-color:#d4a017}
.card .head{font-weight:bold}.card .where{color:#555;font-size:12px;word-break:break-all}
.card .ea{font-family:monospace;font-size:12px;margin:4px 0;word-break:break-all}
.card .hint{font-family:monospace;font-size:12px;background:#eef6ff;padding:4px;
word-break:break-all}
.badge{display:inline-block;padding:1px 6px;border-radius:3px;color:#fff;font-size:11px;
margin-right:6px}
.b-pass{background:#2e8b57}.b-fail{background:#d62728}.b-error{background:#8b0000}
.b-warn{background:#d4a017}.b-skip{background:#9e9e9e}
section{padding:0 24px 24px}
table{border-collapse:collapse;width:100%;font-size:12px;background:#fff}
td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
"""


#: How a per-direction result names its direction: `… on LINK, SRC→DST (WHERE): …`.
_WAY = re.compile(r" on (?P<link>\S+), (?P<src>[^\s→]+)→(?P<dst>[^\s(]+) \([^)]*\): ")


def failing_ways(report: Report) -> dict[str, list[tuple[str, str]]]:
    """Per link, the (sender, receiver) of each direction a failing result names."""
    ways: dict[str, list[tuple[str, str]]] = {}
    for r in report.results:
        m = _WAY.search(r.message) if r.failed else None
        if r.link is not None and m is not None and m.group("link") == r.link:
            known = ways.setdefault(r.link, [])
            if (way := (m.group("src"), m.group("dst"))) not in known:
                known.append(way)
    return ways


def _svg(intent: Intent, report: Report) -> str:
    from fabric.draw.render import draw

    try:
        svg = draw(intent, "svg", host_status=host_status(report),
                   link_status=link_status(report), link_ways=failing_ways(report)).decode()
    except FabricError as exc:
        return f"<p>drawing unavailable: {escape(str(exc))}</p>"
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    return re.sub(r"<!--.*?-->", "", svg, flags=re.S)


def _value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, dict):
        return " · ".join(f"{escape(str(k))}={_value(v)}" for k, v in value.items())
    return escape(value if isinstance(value, str) else json.dumps(value, default=str))


def _card(r: CheckResult) -> str:
    where = " · ".join(escape(x) for x in (r.host, r.link) if x)
    return (f'<div class="card {r.status}"><div class="head"><span class="badge '
            f'b-{r.status}">{r.status.upper()}</span>{escape(r.check)}</div>'
            f'<div class="where">{where}</div><div>{escape(r.message)}</div>'
            f'<div class="ea">expected {_value(r.expected)}<br>actual&nbsp;&nbsp; '
            f'{_value(r.actual)}</div>'
            + (f'<div class="hint">{escape(r.hint)}</div>' if r.hint else "") + "</div>")


def _row(r: CheckResult) -> str:
    return (f'<tr><td><span class="badge b-{r.status}">{r.status}</span></td>'
            f"<td>{escape(r.check)}</td><td>{escape(r.host or '')}</td>"
            f"<td>{escape(r.link or '')}</td><td>{escape(r.message)}</td>"
            f"<td>{_value(r.expected)}</td><td>{_value(r.actual)}</td>"
            f"<td>{escape(r.hint)}</td></tr>")


def to_html(report: Report, intent: Intent) -> str:
    bad = [r for r in report.ordered() if r.status in ("error", "fail", "warn")]
    cards = "".join(_card(r) for r in bad) or "<p>No failures.</p>"
    title = f"fabric validate: {report.topology}"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f'<header class="{"pass" if report.passed else "fail"}"><h1>{escape(title)}</h1>'
            f"<p>{escape(verdict(report))} · started {escape(report.started)}</p></header>"
            f'<main><figure id="fabric">{_svg(intent, report)}</figure>'
            f'<aside id="failures"><h2>Failures ({len(bad)})</h2>{cards}</aside></main>'
            f'<section id="results"><h2>All results ({len(report.results)})</h2><table>'
            "<tr><th>status</th><th>check</th><th>host</th><th>link</th><th>message</th>"
            "<th>expected</th><th>actual</th><th>fix</th></tr>"
            + "".join(_row(r) for r in report.ordered()) + "</table></section></body></html>\n")


def write_html(report: Report, intent: Intent, path: Path | str) -> None:
    """Write a self-contained page: the drawn fabric coloured by result, failures beside it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(to_html(report, intent))
