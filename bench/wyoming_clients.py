"""Wyoming service latency: one client, then N clients at once, against the shipped model.

Usage::

    python bench/wyoming_clients.py                 # 1 client, then 50 clients x 4 requests
    python bench/wyoming_clients.py --clients 100 --requests 2

The service runs in-process exactly as the agent runs it (``edge_agent.bridges.wyoming``: its own
thread and event loop, recognition on a worker thread under the intent handler's lock) on a free
loopback port; the clients are the wyoming library's ``AsyncTcpClient``. Each request is a
``recognize`` on one connection of its own (as Home Assistant does: connect, one request, close).
Prints per-request latency (connect to answer) p50 / p95 / max and requests per second.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time

from wyoming.client import AsyncTcpClient
from wyoming.intent import Recognize

from edge_agent.app import build_engines
from edge_agent.bridges.wyoming import WyomingService
from edge_agent.config import parse

TEXTS = ["turn on the kitchen light", "set the bedroom lamp to fifty percent", "set a timer for 5 minutes",
         "turn off the lights", "what is the meaning of life"]
HOME = {"areas": ["Kitchen", "Bedroom"], "entities": [
    {"name": "Kitchen Light", "domain": "light", "area": "Kitchen"},
    {"name": "Bedroom Lamp", "domain": "light", "area": "Bedroom"}]}


async def _one(port: int, text: str) -> float:
    start = time.perf_counter()
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Recognize(text=text).event())
        reply = await client.read_event()
    assert reply is not None and reply.type in ("intent", "not-recognized"), reply
    return (time.perf_counter() - start) * 1000.0


async def _round(port: int, clients: int, requests: int) -> tuple[list[float], float]:
    async def client(i: int) -> list[float]:
        return [await _one(port, TEXTS[(i + k) % len(TEXTS)]) for k in range(requests)]

    start = time.perf_counter()
    per_client = await asyncio.gather(*(client(i) for i in range(clients)))
    return [ms for lat in per_client for ms in lat], time.perf_counter() - start


def _report(label: str, lat: list[float], wall_s: float) -> None:
    q = statistics.quantiles(lat, n=20)
    print(f"{label}: {len(lat)} requests, p50 {statistics.median(lat):.1f} ms, p95 {q[18]:.1f} ms, "
          f"max {max(lat):.1f} ms, {len(lat) / wall_s:.0f} requests/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=4, help="requests per client (one connection each)")
    args = parser.parse_args()
    config = parse({"home": HOME, "wyoming": {"enabled": True, "port": 0, "max_clients": args.clients + 8}})
    engines = build_engines(config)
    lock = threading.Lock()
    service = WyomingService(config.wyoming, engines.recognizer, lock, lambda: engines.model_id,
                             list(engines.recognizer.intents), config.site_id)  # type: ignore[attr-defined]
    service.start()
    assert service.port is not None, "the service did not start"
    try:
        asyncio.run(_round(service.port, 1, 5))  # warm-up
        _report("1 client", *asyncio.run(_round(service.port, 1, 40)))
        _report(f"{args.clients} clients", *asyncio.run(_round(service.port, args.clients, args.requests)))
    finally:
        service.stop()
        if engines.runtime is not None:
            engines.runtime.close()


if __name__ == "__main__":
    main()
