"""A loopback TCP proxy that cuts event streams: every connection is relayed to the service as it is until the
service's answer turns out to be ``text/event-stream``; then, after a few more bytes (the next size of ``cuts``, in
turn), both sides are reset — mid-frame, as a dropped network would. Tests put it between an SSE client and a real
service to prove the client resumes without a gap or a duplicate."""

from __future__ import annotations

import itertools
import socket
import struct
import threading
from collections.abc import Callable, Iterable

__all__ = ["CuttingProxy"]

_SSE = b"text/event-stream"


class CuttingProxy:
    """``with CuttingProxy(port, cuts=[2000, 3500]) as proxy:`` — clients use ``proxy.url``; ``proxy.cut`` counts
    the streams it cut, ``proxy.connections`` the connections it relayed."""

    def __init__(self, upstream_port: int, cuts: Iterable[int] = (2500, 4000, 1200)) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self._cuts = itertools.cycle(list(cuts))
        self._lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.connections = 0
        self.cut = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> CuttingProxy:
        self._spawn(self._accept)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.listener.close()
        with self._lock:
            for s in self._sockets:
                _close(s)
        for t in self._threads:
            t.join(timeout=5)

    def _spawn(self, target: Callable[..., object], *args: object) -> None:
        t = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(t)
        t.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                self.connections += 1
                budget = next(self._cuts)
                self._sockets += [client, upstream]
            self._spawn(self._pipe, client, upstream, None)
            self._spawn(self._pipe, upstream, client, budget)

    def _pipe(self, src: socket.socket, dst: socket.socket, budget: int | None) -> None:
        """Relay ``src`` → ``dst``; with a ``budget``, reset both after that many bytes of an event stream."""
        seen = b""
        streaming = False
        try:
            while True:
                data = src.recv(4096)
                if not data:
                    break
                if budget is not None and not streaming:  # the answer's head passes whole
                    seen = (seen + data)[-4096:]
                    streaming = _SSE in seen
                elif streaming and budget is not None:
                    if len(data) >= budget:
                        dst.sendall(data[:budget])
                        with self._lock:
                            self.cut += 1
                        _reset(src)
                        _reset(dst)
                        return
                    budget -= len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            _close(dst)
            _close(src)


def _reset(s: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0): the peer sees a dropped connection, not an orderly end. ``SHUT_RD`` first
    wakes the other relay thread blocked reading this socket (a plain close would leave the socket alive under it)."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    _close(s)


def _close(s: socket.socket) -> None:
    try:
        s.close()
    except OSError:
        pass
