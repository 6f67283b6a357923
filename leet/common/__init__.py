"""The bottom room: pure helpers every room may import (text, units, time, ticks, matching).

Nothing here imports any other module of ours, nor Textual: these are the one
rule for untrusted text (`text`), for numbers as people read them (`units`,
`ticks`), for wall-clock time (`clock`) and for filters (`matching`).
"""
