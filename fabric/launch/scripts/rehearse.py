#!/usr/bin/env python3
"""Launch rehearsal: a real torch.distributed all-reduce and all-gather across the nodes,
with exactly the env, ranks and rendezvous address the model launch will use.

Standalone (torch + stdlib) so it can run on any node. One process per rank; rank 0 prints
nccl-tests-compatible tables (`fabric parse nccl_tests` reads them).

Env (as the launch sets it): RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_RANK,
GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME / NCCL_IB_HCA / NCCL_IB_GID_INDEX ...
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import sys
import time
from typing import Any

EXIT_CANNOT_MEET = 3


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def sizes(lo: int, hi: int, factor: int) -> list[int]:
    out = []
    size = lo
    while size <= hi:
        out.append(size)
        size *= factor
    return out


def hint_for(exc: BaseException) -> str:
    env = {k: os.environ.get(k, "") for k in ("MASTER_ADDR", "MASTER_PORT",
                                              "GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")}
    return (f"ranks could not meet at {env['MASTER_ADDR']}:{env['MASTER_PORT']} "
            f"(GLOO_SOCKET_IFNAME={env['GLOO_SOCKET_IFNAME'] or '-'}, NCCL_SOCKET_IFNAME="
            f"{env['NCCL_SOCKET_IFNAME'] or '-'}): {type(exc).__name__}: {str(exc)[:300]}. "
            "Check that the socket interface exists on every node and carries the rendezvous "
            "address's subnet, that MASTER_ADDR is rank 0's fabric address, and that every "
            "rank was started.")


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    ap.add_argument("--ops", default="all_reduce,all_gather")
    ap.add_argument("-b", "--min-bytes", default="1M")
    ap.add_argument("-e", "--max-bytes", default="16M")
    ap.add_argument("-f", "--factor", type=int, default=2)
    ap.add_argument("-n", "--iters", type=int, default=10)
    ap.add_argument("-w", "--warmup", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds for ranks to meet")
    return ap.parse_args()


def _device(torch: Any, backend: str, local_rank: int) -> Any:
    """The rank's device (None after printing why this node cannot take the rank)."""
    if backend != "nccl":
        return torch.device("cpu")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "(all)")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if local_rank >= count:
        print(f"REHEARSAL-ERROR: LOCAL_RANK={local_rank} needs CUDA device {local_rank}, "
              f"but {socket.gethostname()} shows {count} (CUDA_VISIBLE_DEVICES={visible}). "
              "HINT: one rank per node uses LOCAL_RANK=0; use --backend gloo where there "
              "is no GPU.", flush=True)
        return None
    torch.cuda.set_device(local_rank)
    return torch.device("cuda", local_rank)


def _socket_ifnames_exist(backend: str) -> bool:
    """Fail fast, with a hint, when a socket interface named by the env does not exist here."""
    for var in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
        names = [n.lstrip("=^") for n in os.environ.get(var, "").split(",") if n]
        have = {name for _, name in socket.if_nameindex()}
        missing = [n for n in names if n not in have]
        if missing and (var == "GLOO_SOCKET_IFNAME" or backend == "nccl"):
            print(f"REHEARSAL-ERROR: {var}={os.environ[var]} names {', '.join(missing)}, "
                  f"which does not exist on {socket.gethostname()} (it has "
                  f"{', '.join(sorted(have))}). HINT: set {var} to the fabric twin that "
                  "carries rank 0's address.", flush=True)
            return False
    return True


def _print_devices(args: argparse.Namespace, dist: Any, torch: Any, device: Any, rank: int,
                   world: int, local_rank: int) -> None:
    """Rank 0 prints the nccl-tests preamble and every rank's host, pid and device."""
    host = socket.gethostname()
    if rank == 0:
        print(f"# fabric launch rehearsal (torch {torch.__version__}, backend {args.backend})")
        print(f"# nThread 1 nGpus 1 minBytes {parse_size(args.min_bytes)} maxBytes "
              f"{parse_size(args.max_bytes)} step: {args.factor}(factor) warmup iters: "
              f"{args.warmup} iters: {args.iters} agg iters: 1 validation: 1 graph: 0")
        print("#\n# Using devices")
    # Exchange host names through a byte tensor (all_gather_object would need numpy).
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        bus = f"{getattr(props, 'pci_domain_id', 0):04x}:{getattr(props, 'pci_bus_id', 0):02x}:00"
        dev_desc = f"{local_rank:2d} [{bus}] {props.name}"
    else:
        dev_desc = f"{local_rank:2d} [cpu] CPU"
    raw = (f"{host}|{os.getpid()}|{dev_desc}".encode()[:120]).ljust(128, b" ")
    mine = torch.tensor(list(raw), dtype=torch.uint8, device=device)
    gathered = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(gathered, mine)
    if rank == 0:
        for r, tensor in enumerate(gathered):
            h, pid, dev = bytes(tensor.cpu().tolist()).decode().strip().split("|")
            print(f"#  Rank {r:2d} Group  0 Pid {int(pid):7d} on {h} device {dev}")
        print("#")


def main() -> int:
    args = _parse_args()

    import warnings

    warnings.filterwarnings("ignore")  # keep rank 0's output a clean nccl-tests table
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        print(f"REHEARSAL-ERROR: torch is not importable here: {exc}", flush=True)
        return 2

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = _device(torch, args.backend, local_rank)
    if device is None or not _socket_ifnames_exist(args.backend):
        return EXIT_CANNOT_MEET
    try:
        dist.init_process_group(args.backend, rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=args.timeout))
        dist.barrier()
    except Exception as exc:  # any rendezvous failure gets the hint
        print(f"REHEARSAL-ERROR: HINT: {hint_for(exc)}", flush=True)
        return EXIT_CANNOT_MEET

    _print_devices(args, dist, torch, device, rank, world, local_rank)
    for op in [o.strip() for o in args.ops.split(",") if o.strip()]:
        run_op(op, args, dist, torch, device, rank, world)
    dist.destroy_process_group()
    return 0


def _print_op_header(op: str) -> None:
    print(f"# Collective test starting: {op}_perf")
    print("#                                                              out-of-place"
          "                       in-place          ")
    print("#       size         count      type   redop    root     time   algbw   busbw"
          " #wrong     time   algbw   busbw #wrong ")
    print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
          "            (us)  (GB/s)  (GB/s)        ")


def _print_op_footer(op: str, busbws: list[float]) -> None:
    avg = sum(busbws) / len(busbws) if busbws else 0.0
    print("# Out of bounds values : 0 OK")
    print(f"# Avg bus bandwidth    : {avg:.4f} ")
    print("#")
    print(f"# Collective test concluded: {op}_perf")
    print("#", flush=True)


def _time_op(op: str, args: argparse.Namespace, device: Any, rank: int, world: int,
             count: int, in_place: bool) -> tuple[float, int]:
    """Seconds per iteration of one collective over `count` floats, and the wrong elements."""
    import torch as t
    import torch.distributed as d

    if op == "all_reduce":
        src = t.full((count,), float(rank + 1), device=device)

        def once(src: t.Tensor = src, in_place: bool = in_place) -> t.Tensor:
            buf = src if in_place else src.clone()
            d.all_reduce(buf)
            return buf
        expect = world * (world + 1) / 2
    else:
        per = count // world
        src = t.full((per,), float(rank + 1), device=device)
        out = t.empty((per * world,), device=device)

        def once(src: t.Tensor = src, out: t.Tensor = out,
                 in_place: bool = in_place) -> t.Tensor:
            d.all_gather_into_tensor(out, src)
            return out
        expect = None
    for _ in range(args.warmup):
        once()
    _sync(t, device)
    start = time.perf_counter()
    for _ in range(args.iters):
        result = once()
    _sync(t, device)
    sec = (time.perf_counter() - start) / args.iters
    if expect is not None:
        # repeated in-place all_reduce compounds; validate one fresh reduction
        fresh = t.full((count,), float(rank + 1), device=device)
        d.all_reduce(fresh)
        wrong = int((fresh != expect).sum().item())
    else:
        want = t.arange(1, world + 1, device=device, dtype=t.float32)
        want = want.repeat_interleave(count // world)
        wrong = int((result != want).sum().item())
    return sec, wrong


def run_op(op: str, args: argparse.Namespace, dist: object, torch: object, device: object,
           rank: int, world: int) -> None:
    factor = 2 * (world - 1) / world if op == "all_reduce" else (world - 1) / world
    if rank == 0:
        _print_op_header(op)
    busbws: list[float] = []
    for size in sizes(parse_size(args.min_bytes), parse_size(args.max_bytes), args.factor):
        count = size // 4
        cols = []
        for in_place in (False, True):
            sec, wrong = _time_op(op, args, device, rank, world, count, in_place)
            algbw = size / sec / 1e9
            busbw = algbw * factor
            cols.append((sec * 1e6, algbw, busbw, wrong))
            busbws.append(busbw)
        if rank == 0:
            (t1, a1, b1, w1), (t2, a2, b2, w2) = cols
            redop = "sum" if op == "all_reduce" else "none"
            print(f"{size:12d}  {count:12d}     float  {redop:>6}      -1 {t1:8.1f} {a1:7.2f} "
                  f"{b1:7.2f} {w1:6d} {t2:8.1f} {a2:7.2f} {b2:7.2f} {w2:6d}", flush=True)
    if rank == 0:
        _print_op_footer(op, busbws)


def _sync(t: object, device: object) -> None:
    import torch

    if isinstance(device, torch.device) and device.type == "cuda":
        torch.cuda.synchronize(device)


if __name__ == "__main__":
    sys.exit(main())
