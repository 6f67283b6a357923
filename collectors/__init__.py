"""Where numbers come from: hardware backends (collectors) and the hub that runs them.

Nothing here imports Textual or the application; backends that need optional
libraries import them lazily inside their own module.
"""

from collectors.base import Collector, CollectorStatus, Health, Probe, Sample
from collectors.hub import Hub

__all__ = ["Collector", "CollectorStatus", "Health", "Hub", "Probe", "Sample"]
