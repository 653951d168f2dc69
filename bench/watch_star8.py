"""What one `fabric watch` cycle costs on a lab, and how many SSH logins it makes (measured
numbers, no assertion).

    .venv/bin/python bench/watch_star8.py [--topology star8] [--cycles 20] [--interval 1]
        [--name t-watch-bench]

Builds lab NAME (root), configures it with `fabric push --apply`, runs `fabric watch --listen`
for `--cycles` cycles, reading `fabric_watch_cycle_seconds` and the per-host
`fabric_watch_scrape_seconds` from /metrics after each, and counts the SSH logins each Spark's
sshd logged (`Accepted publickey` in the lab's sshd log) while watch ran: one per Spark, however
many cycles. The Spark-side CPU of a scrape: the CPU time (user + system, children included)
that processes in each Spark's namespace other than its daemons (lldpd, chronyd) used between
the first and the last cycle observed, per cycle. The lab is taken down at the end.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def fabric(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    return subprocess.run([sys.executable, "-m", "fabric", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False, timeout=600)


def logins(lab_dir: Path) -> dict[str, int]:
    return {p.name.split(".")[0]: p.read_text(errors="replace").count("Accepted publickey")
            for p in sorted((lab_dir / "logs").glob("*.sshd.log"))}


DAEMONS = {"lldpd", "chronyd"}


def spark_cpu(lab: str) -> dict[str, float]:
    """CPU seconds used so far by each Spark's processes other than its daemons (the watch's
    SSH session and what its batches run), from /proc of the processes in its namespace."""
    from fabric.lab.lifecycle import registry

    info = registry.load_lab(lab)
    nets = {os.readlink(f"/proc/{h.pids['holder']}/ns/net"): name
            for name, h in info.hosts.items() if name.startswith("spark")}
    tick = os.sysconf("SC_CLK_TCK")
    out = dict.fromkeys(nets.values(), 0.0)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            host = nets.get(os.readlink(f"/proc/{pid}/ns/net"))
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        comm, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
        if host is None or comm in DAEMONS:
            continue
        out[host] += sum(int(v) for v in fields.split()[11:15]) / tick
    return out


def sample(url: str, name: str) -> dict[str, float]:
    text = urllib.request.urlopen(url, timeout=2).read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith((name + "{", name + " ")):
            key, _, value = line[len(name):].rpartition(" ")
            out[key] = float(value)
    return out


def measure(lab: str, lab_dir: Path, cycles: int, interval: float) -> None:
    from tests.watch.prom import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    before = logins(lab_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    proc = subprocess.Popen([sys.executable, "-m", "fabric", "watch", "--lab", lab, "--listen",
                             f"127.0.0.1:{port}", "--interval", str(interval)],
                            cwd=REPO, env=env, stderr=subprocess.DEVNULL)
    seen: dict[float, tuple[float, float]] = {}
    cpu: list[dict[str, float]] = []
    deadline = time.monotonic() + cycles * interval * 3 + 30
    try:
        while len(seen) < cycles and time.monotonic() < deadline:
            time.sleep(interval / 4)
            try:
                stamp = sample(url, "fabric_watch_last_cycle_timestamp_seconds")[""]
                cycle = sample(url, "fabric_watch_cycle_seconds")[""]
                slowest = max(sample(url, "fabric_watch_scrape_seconds").values())
            except (OSError, KeyError, ValueError):
                continue
            if stamp not in seen:
                seen[stamp] = (cycle, slowest)
                cpu.append(spark_cpu(lab))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    after = logins(lab_dir)
    walls = [c for c, _ in list(seen.values())[1:]]  # the first cycle opens the sessions
    first = next(iter(seen.values()))[0] if seen else float("nan")
    print(f"cycles observed: {len(seen)} (interval {interval:g} s)")
    print(f"first cycle (opens every session): {first:.3f} s")
    if walls:
        print(f"later cycles: median {statistics.median(walls):.3f} s, "
              f"min {min(walls):.3f}, max {max(walls):.3f}")
    if len(cpu) > 1:
        per = {h: (cpu[-1][h] - cpu[0][h]) / (len(cpu) - 1) * 1000 for h in cpu[0]}
        print(f"Spark-side CPU per scrape (over {len(cpu) - 1} cycles): min "
              f"{min(per.values()):.1f} ms, median "
              f"{statistics.median(per.values()):.1f} ms, max {max(per.values()):.1f} ms "
              f"({max(per, key=lambda h: per[h])})")
    print("SSH logins while watch ran: " + ", ".join(
        f"{h} {after.get(h, 0) - before.get(h, 0)}" for h in sorted(after)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topology", default="star8")
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--name", default="t-watch-bench")
    args = ap.parse_args()
    from fabric.lab.lifecycle import builder

    builder.down(args.name)
    info = builder.up(args.topology, args.name, switch_prepared=True, link_training_s=0.5)
    try:
        push = fabric("push", "--lab", args.name, "--apply")
        if push.returncode != 0:
            sys.exit(f"push failed: {push.stderr[-2000:]}")
        time.sleep(2)  # bench only: lanes train after the push (0.5 s here)
        measure(args.name, info.dir, args.cycles, args.interval)
    finally:
        builder.down(args.name)


if __name__ == "__main__":
    main()
