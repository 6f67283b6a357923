"""The settings leet runs with, as one frozen ``Config``, and ``ConfigError``, the one way a setting is refused."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from leet.common.text import escaped

if TYPE_CHECKING:  # collectors.openmetrics loads only where a setting names an endpoint or a filter
    from collectors.openmetrics import MetricFilter


class ConfigError(ValueError):
    """A setting that cannot be used, with where it came from."""

    def __init__(self, message: str) -> None:
        # Paths and values come from people and files: make them inert wherever this is printed.
        super().__init__(escaped(message))


@dataclass(frozen=True)
class Config:
    interval: float = 2.0
    theme: str = "textual-dark"
    grid_rows: int = 3
    grid_cols: int = 3
    history_minutes: float = 10.0
    disk_paths: tuple[str, ...] = ("/",)
    mouse: bool = True
    pid: int | None = None
    track_tree: bool = False
    label: str | None = None
    gpu_ids: tuple[int, ...] | None = None  # None: every GPU
    sidebar: bool = True
    crash_after: float = 600.0  # seconds; see leet.model.state
    ascii: bool | None = None  # None: as the locale says (resolve_ascii)
    color: bool = True
    images: str = "auto"  # the media pane: auto, blocks, sixel, kitty or off
    open_metrics_endpoints: tuple[tuple[str, str], ...] = ()  # (name, URL), in the order given
    open_metrics_filters: MetricFilter | None = None  # None: capture everything
    open_metrics_http_headers: tuple[tuple[str, str], ...] = ()
    dcgm_exporter: str | None = None
    max_connections: int = 64  # leet serve: connections served at once; past it, 503
    tls_cert: str | None = None  # leet serve: certificate chain (PEM) for https
    tls_key: str | None = None  # leet serve: its private key (PEM)
    alerts: Any = None  # leet.alerts.settings.AlertSettings from the [alerts] table; None: none given
    remember: bool = True  # keep the layout in layout.json (leet.config.layout_state)
    energy_price: float | None = None  # per kWh: the energy lines add what the energy cost; None: no cost shown
    energy_currency: str = "$"  # written before a cost
    source: str = field(default="defaults", compare=False)
    # Where each setting not left at its default came from: "file", "env", "flag" or "remembered".
    origins: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def origin(self, name: str) -> str:
        """Where setting ``name`` came from: "default", "file", "env", "flag" or "remembered"."""
        return dict(self.origins).get(name, "default")
