"""AMD GPUs: W&B's ``gpu.{i}.*`` keys from the ``amdsmi`` library, ``amd-smi`` or ``rocm-smi``.

``collector`` picks the first source that works (``library``, ``amd_smi``,
``rocm_smi``, each giving what ``source`` describes) once ``driver`` finds
``amdgpu`` live; ``tool`` runs the command-line tools and ``fields`` reads
what any source reports.
"""

from collectors.amd.collector import OLD_MEMORY_USE_NOTE, AmdCollector
from collectors.amd.source import AmdSourceError

__all__ = ["OLD_MEMORY_USE_NOTE", "AmdCollector", "AmdSourceError"]
