"""Threaded TCP server for the API (one thread per connection) and its readiness signal."""

from __future__ import annotations

import logging
import os
import signal
import socket
import socketserver
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType

from .device import Device
from .observed import Observations, Observer, Sidecar, sidecar_path
from .session import Session

log = logging.getLogger(__name__)


class _Handler(socketserver.BaseRequestHandler):
    server: ApiServer

    def handle(self) -> None:
        # A reply is several sentences, one send each: without NODELAY, Nagle holds each
        # sentence after the first until the client's (delayed) ACK of the one before.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        Session(self.request, self.server.device).run()


class ApiServer(socketserver.ThreadingTCPServer):
    """The API on ``address``, plus the device's link-training thread (see ``Device``) and the
    observer's LLDP receiver and link watcher (see ``observed``), started before it serves."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], device: Device) -> None:
        self.device = device
        super().__init__(address, _Handler)
        observations = Observations(device.clock, Sidecar(sidecar_path(device.state_file.path)))
        self.observer: Observer | None = Observer(device.backend, observations)
        try:
            self.observer.start()
        except OSError:  # no CAP_NET_RAW, say: it serves on, observing nothing
            log.exception("LLDP receiver and link watcher not started")
            self.observer.stop()
            self.observer = None
        else:
            device.observations = observations
        self._trainer_stop = threading.Event()
        self._trainer = threading.Thread(
            target=device.run_trainer, args=(self._trainer_stop,), name="link-training",
            daemon=True,
        )  # fmt: skip
        self._trainer.start()

    def server_close(self) -> None:
        if self.observer is not None:
            self.observer.stop()
        self._trainer_stop.set()
        if self._trainer.is_alive() and self._trainer is not threading.current_thread():
            self._trainer.join(timeout=5)
        super().server_close()

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else host
        return f"{text}:{port}"


def _write_ready_file(path: str, text: str) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", dir=target.parent or ".")
    with os.fdopen(fd, "w") as fh:
        fh.write(text + "\n")
    os.replace(tmp, target)


def serve(device: Device, host: str, port: int, ready_file: str | None = None) -> None:
    """Reconcile the kernel with the state, bind, announce ``READY host:port``, serve forever."""
    device.record_settings()
    device.reconcile()
    server = ApiServer((host, port), device)

    def _stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _stop)
    try:
        if ready_file:
            _write_ready_file(ready_file, server.address)
        print(f"READY {server.address}", flush=True)
        server.serve_forever()
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        server.server_close()
        sys.stdout.flush()
