"""``python -m fabric.lab.routeros serve|shell`` (see the package docstring)."""

from __future__ import annotations

import argparse
import logging
import sys

from .device import DEFAULT_LINE_RATE_MBIT, Device
from .kernel import KernelBackend
from .state import DEFAULT_TRAINING_S, StateFile


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fabric.lab.routeros")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_serve = sub.add_parser("serve", help="RouterOS API server (port 8728 protocol)")
    p_serve.add_argument("--state", required=True)
    p_serve.add_argument("--listen", type=_listen, default=("127.0.0.1", 8728))
    p_serve.add_argument("--line-rate-mbit", type=int, default=DEFAULT_LINE_RATE_MBIT)
    p_serve.add_argument("--ready-file")
    p_serve.add_argument("--netns", help="drive this namespace's kernel from outside it")
    p_serve.add_argument("--training-s", type=float, default=DEFAULT_TRAINING_S,
                         help="seconds a lane stays at no-link after a speed/FEC/autoneg change")
    p_shell = sub.add_parser("shell", help="interactive RouterOS terminal (sshd ForceCommand)")
    p_shell.add_argument("--state", required=True)
    p_shell.add_argument("--netns", help="drive this namespace's kernel from outside it")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.cmd == "serve":
        from .server import serve

        if args.training_s < 0:
            parser.error("--training-s must be >= 0")
        device = Device(StateFile(args.state), KernelBackend(args.netns), args.line_rate_mbit,
                        training_s=args.training_s)
        host, port = args.listen
        serve(device, host, port, args.ready_file)
        return 0
    from .shell import run_shell

    state_file = StateFile(args.state)
    rate = state_file.load().line_rate_mbit
    return run_shell(Device(state_file, KernelBackend(args.netns), rate))


if __name__ == "__main__":
    sys.exit(main())
