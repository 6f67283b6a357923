"""Textual widgets for leet, and the pure helpers they draw with.

Importing this package imports nothing heavy: each widget module imports
Textual itself, and the pure helpers (braille, raster, ticks, units,
chartframe) import no Textual at all, so the CLI can format values without
paying for the UI.
"""
