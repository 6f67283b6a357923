"""Screens of the leet app: symon (live host), help."""
