"""Settings: defaults < config file < LEET_* environment < command-line flags.

The file is TOML at ``$LEET_CONFIG`` or ``<user config dir>/leet/config.toml``:

    interval = 2.0          # seconds between samples
    theme = "textual-dark"
    history_minutes = 10    # width of the live time window
    disk_paths = ["/"]
    mouse = true
    gpu_ids = [0, 2]        # only these NVIDIA GPUs (default: all)
    crash_after = "10m"     # a run silent this long with no exit record is presumed crashed
    ascii = true            # draw in ASCII only (default: when the locale's character set is not UTF-8)
    color = false           # no colour (also NO_COLOR set to anything, or TERM=dumb)
    dcgm_exporter = "http://prometheus:9090/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP"
    open_metrics_filters = ["node_load1"]   # or {"metric regex" = {label = "value regex"}}

    [grid]
    rows = 3
    cols = 3

    [open_metrics_endpoints]          # name = URL: one collector each
    node = "http://localhost:9100/metrics"

    [open_metrics_http_headers]       # sent to every endpoint and to dcgm_exporter
    Authorization = "Bearer TOKEN"

The last four are W&B's ``x_stats_open_metrics_endpoints``, ``_filters``,
``_http_headers`` and ``x_stats_dcgm_exporter``. Their flags add to the file's
mappings (``--openmetrics NAME=URL``, ``--openmetrics-header 'K: V'``: a name
the file also has takes the flag's value) and replace its filters and DCGM URL.

Everything is validated into a frozen ``Config`` (``settings``) before
anything uses it, by one check per key (``checks``): numbers are finite and
in range, themes are known, the file is a readable regular UTF-8 file
(``files``: a FIFO is refused, never waited on). A bad value is a clear
``ConfigError`` naming where it came from (the file and the key, the
``LEET_*`` variable, or the flag), never a traceback. ``load`` (``layers``)
puts the four layers together.

Two settings also follow the terminal (``terminal``). ``ascii`` left unset
means "as the locale says" (``resolve_ascii``); ``LEET_ASCII``, the file or
``--ascii``/``--no-ascii`` decide otherwise. ``color`` is off when
``NO_COLOR`` or ``TERM=dumb`` says so, whatever the file says.
"""

from leet.config.checks import THEMES, interval_flag, parse_grid
from leet.config.layers import load, resolve_ascii
from leet.config.settings import Config, ConfigError

__all__ = ["THEMES", "Config", "ConfigError", "interval_flag", "load", "parse_grid", "resolve_ascii"]
