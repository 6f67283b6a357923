"""A thin client for libtpu's ``RuntimeMetricService``, built on the generated messages.

Importing this module needs grpcio (``pip install leet-monitor[tpu]``); the
TPU collector imports it only on a machine that has a TPU. Every metric of a
sweep is asked at once, each with the same short deadline, so a sweep costs
one round trip (or one timeout), however many metrics it asks for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

# gRPC's native core logs connection events (a GOAWAY when a TPU workload
# exits, for one) straight to file descriptor 2, over the full-screen UI.
# Its verbosity is read once, when the core starts, so it is set before the import.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import grpc  # noqa: E402

from collectors.tpu_runtime import DOWN, HUNG, OK, REFUSED  # noqa: E402
from collectors.tpu_runtime import tpu_metric_service_pb2 as pb  # noqa: E402

SERVICE = "tpu.monitoring.runtime.RuntimeMetricService"
GET_RUNTIME_METRIC = f"/{SERVICE}/GetRuntimeMetric"
DEFAULT_ADDRESS = "localhost:8431"

# The service only exists while a workload holds the TPU: when it comes back,
# the channel should notice within seconds, not after gRPC's default backoff
# of up to two minutes. It is loopback, so no proxy may stand in between.
_CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 500),
    ("grpc.min_reconnect_backoff_ms", 500),
    ("grpc.max_reconnect_backoff_ms", 5000),
    ("grpc.enable_http_proxy", 0),
)


@dataclass(frozen=True)
class Answer:
    """One metric's reply: the metric, or how its request failed."""

    outcome: str
    metric: pb.TPUMetric | None = None
    detail: str = ""


class RuntimeMetricClient:
    """Asks the runtime metrics service at ``address`` for metrics by name."""

    def __init__(self, address: str = DEFAULT_ADDRESS, timeout: float = 0.5) -> None:
        self.address = address
        self.timeout = timeout
        # Local credentials are what libtpu's own clients use; on loopback they
        # also talk to a server that listens without any.
        self._channel = grpc.secure_channel(address, grpc.local_channel_credentials(), options=_CHANNEL_OPTIONS)
        self._get = self._channel.unary_unary(
            GET_RUNTIME_METRIC,
            request_serializer=pb.MetricRequest.SerializeToString,
            response_deserializer=pb.MetricResponse.FromString,
        )

    def ask(self, names: Iterable[str]) -> dict[str, Answer]:
        """Every named metric, asked in parallel; never raises for a failed request."""
        pending = {name: self._get.future(pb.MetricRequest(metric_name=name), timeout=self.timeout) for name in names}
        return {name: self._collect(future) for name, future in pending.items()}

    def close(self) -> None:
        try:
            self._channel.close()
        except Exception:  # noqa: BLE001 - close must not raise
            pass

    def _collect(self, future: grpc.Future) -> Answer:
        try:
            # The deadline ends the call; the extra second only guards against a
            # future that never settles.
            response = future.result(timeout=self.timeout + 1.0)
        except grpc.RpcError as error:
            return _failure(error)
        except grpc.FutureTimeoutError:
            future.cancel()
            return Answer(HUNG, detail="no answer")
        return Answer(OK, response.metric)


def _failure(error: grpc.RpcError) -> Answer:
    code = error.code() if callable(getattr(error, "code", None)) else None
    details = error.details() if callable(getattr(error, "details", None)) else ""
    detail = f"{code.name if code else 'error'}: {details or ''}".rstrip(": ")
    if code == grpc.StatusCode.UNAVAILABLE:
        return Answer(DOWN, detail=detail)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return Answer(HUNG, detail=detail)
    return Answer(REFUSED, detail=detail)
