"""Alerts: what happened to a run, a node or a metric, and where to tell it.

No Textual here. ``events`` is the one alert type every part passes around;
``rules`` and ``thresholds`` judge metric values; ``sinks`` and ``delivery``
carry alerts off the machine (Apprise, a command) on threads of their own;
``ledger`` remembers what was sent; ``follow`` turns run files into alerts
for ``leet watch`` and the screens.
"""
