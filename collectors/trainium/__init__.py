"""AWS Trainium and Inferentia through ``neuron-monitor``: W&B's ``trn.*`` keys.

``launch`` finds the tool and a Neuron device and writes W&B's config,
``supervisor`` keeps one ``neuron-monitor`` child running and reads it,
``parse`` maps a report W&B's way, and ``collector`` ties them together.
"""

from collectors.trainium.collector import TrainiumCollector
from collectors.trainium.launch import neuron_monitor_config

__all__ = ["TrainiumCollector", "neuron_monitor_config"]
