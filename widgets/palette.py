"""Chart colours taken from the active Textual theme.

Charts speak in style *keys* ("frame", "s0", "h3"…); this module turns keys
into Rich styles from the theme's variables, so a theme change recolours every
chart and no raw colour lives in widget code.
"""

from __future__ import annotations

from typing import Mapping

from rich.style import Style
from textual.color import Color

SERIES_VARIABLES = (
    "primary",
    "warning",
    "success",
    "error",
    "accent",
    "secondary",
    "primary-lighten-2",
    "warning-lighten-2",
    "success-lighten-2",
    "error-lighten-2",
    "accent-lighten-2",
    "secondary-lighten-2",
)
HEAT_LEVELS = 8


def _color(variables: Mapping[str, str], name: str, fallback: str = "white") -> Color:
    try:
        return Color.parse(variables.get(name, fallback))
    except Exception:
        return Color.parse(fallback)


def heat_colors(variables: Mapping[str, str], levels: int = HEAT_LEVELS) -> list[Color]:
    """A cool-to-hot ramp: calm success colour through warning to error."""
    low = _color(variables, "success")
    mid = _color(variables, "warning")
    high = _color(variables, "error")
    background = _color(variables, "surface", "black")
    colors = []
    for level in range(levels):
        f = level / max(1, levels - 1)
        if f < 0.5:
            color = low.blend(mid, f * 2)
        else:
            color = mid.blend(high, (f - 0.5) * 2)
        # The lowest levels fade toward the background so idle cells stay quiet.
        fade = max(0.0, 0.55 - f)
        colors.append(color.blend(background, fade))
    return colors


def chart_styles(variables: Mapping[str, str], base: Style, plain: bool = False) -> dict[str, Style]:
    """Every style key a chart uses, resolved against the theme.

    ``plain``: the terminal shows no colour, so what colour alone marks (the
    cursor's row, a focused chart's title) is reversed as well, and muted
    text is dim.
    """

    def fg(name: str, **extra) -> Style:
        return base + Style(color=_color(variables, name).rich_color, **extra)

    styles = {
        "empty": base,
        "frame": fg("panel-lighten-2"),
        "frame-focus": fg("accent", bold=True),
        "title": fg("foreground", bold=True),
        "title-focus": fg("accent", bold=True),
        "value": fg("foreground"),
        "muted": fg("foreground-darken-2"),
        "axis": fg("panel-lighten-2"),
        "label": fg("foreground-darken-1"),
        "warn": fg("warning"),
        "error": fg("error"),
        "ok": fg("success"),
        "bar": base,
        "key": fg("accent", bold=True),
        "heading": fg("foreground", bold=True),
        "cursor": base + Style(color=_color(variables, "foreground").rich_color, bgcolor=_color(variables, "panel-lighten-1").rich_color, bold=True),
    }
    # The spread of several nodes: a faint band, its median, the node that lags.
    styles["band"] = base + Style(color=_color(variables, "primary").blend(_color(variables, "surface", "black"), 0.55).rich_color)
    styles["median"] = fg("primary", bold=True)
    styles["outlier"] = fg("warning", bold=True)
    for index, name in enumerate(SERIES_VARIABLES):
        styles[f"s{index}"] = fg(name)
    for level, color in enumerate(heat_colors(variables)):
        styles[f"h{level}"] = base + Style(color=color.rich_color)
    if plain:
        styles["cursor"] += Style(reverse=True)
        styles["title-focus"] += Style(reverse=True)
        styles["muted"] += Style(dim=True)
    return styles


def series_key(index: int) -> str:
    return f"s{index % len(SERIES_VARIABLES)}"
