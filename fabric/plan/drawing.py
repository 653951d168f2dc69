"""Before/after drawing of a migration: changed cables highlighted (red, dashed) on both sides."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from fabric.draw import render
from fabric.errors import FabricError
from fabric.intent.model import Intent
from fabric.plan.cables import key


def changed_links(src: Intent, dst: Intent) -> tuple[set[str], set[str]]:
    """(link ids that go or change in src, link ids that are new or changed in dst)."""
    a = {key(link): link.id for link in src.links}
    b = {key(link): link.id for link in dst.links}
    return {v for k, v in a.items() if k not in b}, {v for k, v in b.items() if k not in a}


def _titles(src: Intent, dst: Intent, gone: set[str], new: set[str]) -> tuple[str, str]:
    return (f"BEFORE: {src.name} ({len(src.sparks)} Sparks, {src.kind})\\n"
            f"red dashed = {len(gone)} cable(s) unplugged or changed",
            f"AFTER: {dst.name} ({len(dst.sparks)} Sparks, {dst.kind})\\n"
            f"red dashed = {len(new)} new, moved or changed cable(s)")


def before_after(src: Intent, dst: Intent, fmt: str) -> bytes:
    """One image (svg or png): the source fabric left, the target right."""
    gone, new = changed_links(src, dst)
    t1, t2 = _titles(src, dst, gone, new)
    if fmt == "svg":
        left = render.draw(src, "svg", highlight=gone, title=t1).decode()
        right = render.draw(dst, "svg", highlight=new, title=t2).decode()
        return _side_by_side_svg(left, right).encode()
    if fmt != "png":
        raise FabricError(f"unknown drawing format {fmt!r} (svg or png)")
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp, "before.png"), Path(tmp, "after.png")
        a.write_bytes(render.draw(src, "png", highlight=gone, title=t1))
        b.write_bytes(render.draw(dst, "png", highlight=new, title=t2))
        dot = ("digraph migration { rankdir=LR; bgcolor=white; nodesep=0.2;\n"
               '  node [shape=none, label=""];\n'
               f'  before [image="{a}"]; after [image="{b}"];\n'
               '  before -> after [label="migrate", fontname="Helvetica", fontsize=28, '
               'penwidth=4, arrowsize=2, color="#555555"];\n}\n')
        exe = shutil.which("dot")
        if exe is None:
            raise FabricError("Graphviz `dot` is not installed (apt-get install graphviz)")
        proc = subprocess.run([exe, "-Tpng"], input=dot.encode(), capture_output=True,
                              check=False)
        if proc.returncode != 0:
            raise FabricError(f"dot failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout


def _size(svg: str) -> tuple[float, float]:
    m = re.search(r'<svg[^>]*width="([\d.]+)pt"[^>]*height="([\d.]+)pt"', svg)
    return (float(m[1]), float(m[2])) if m else (800.0, 600.0)


def _inner(svg: str, x: float) -> str:
    body = svg[svg.index("<svg"):]
    return body.replace("<svg", f'<svg x="{x:.0f}" y="0"', 1)


def _side_by_side_svg(left: str, right: str) -> str:
    (w1, h1), (w2, h2) = _size(left), _size(right)
    gap = 60.0
    width, height = w1 + gap + w2, max(h1, h2)
    mid = w1 + gap / 2
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" '
            f'xmlns:xlink="http://www.w3.org/1999/xlink" width="{width:.0f}pt" '
            f'height="{height:.0f}pt" viewBox="0 0 {width:.0f} {height:.0f}">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n{_inner(left, 0)}\n'
            f'<text x="{mid:.0f}" y="{height / 2:.0f}" font-family="Helvetica" font-size="28" '
            f'text-anchor="middle">&#8594;</text>\n{_inner(right, w1 + gap)}\n</svg>\n')
