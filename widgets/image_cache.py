"""Logged images decoded and scaled for a tile, held in a small LRU bounded by decoded bytes.

An image is read only when a tile on screen asks for it, and kept only at
the size that tile draws: a large JPEG is decoded at a fraction of its size
(``draft``), anything else is shrunk as it loads (``thumbnail``). A file
whose header claims more than ``MAX_PIXELS`` is refused before decoding.
Pillow is imported on the first image, never before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, BinaryIO, Callable

MAX_PIXELS = 64_000_000
CACHE_BYTES = 24 << 20  # decoded RGB bytes kept across tiles and steps


class ImageCache:
    """Scaled RGB images by file, each at the largest size asked of it yet; a failure is kept as its one-line reason.

    A tile drawn again smaller (a relayout, a narrower pane) takes the image
    already held; only a larger box than the one it was read for reads it again.
    Tiles read on threads of their own: ``held`` is what the screen may take
    without reading, ``get`` reads (off the screen's thread).
    """

    def __init__(self, max_bytes: int = CACHE_BYTES, max_pixels: int = MAX_PIXELS) -> None:
        self.max_bytes = max_bytes
        self.max_pixels = max_pixels
        self._entries: OrderedDict[str, tuple[Any, tuple[int, int]]] = OrderedDict()  # name → (image or why, its full size)
        self.held_bytes = 0
        self.loads = 0  # images read from disk, for tests and the benchmark
        self._lock = threading.Lock()  # the entries and the figures; reading and decoding happen outside it

    def held(self, name: str, box: tuple[int, int]) -> Any:
        """The image (or why not) already held for ``name`` at ``box``, without reading; None when it must be read."""
        box = (max(1, box[0]), max(1, box[1]))
        with self._lock:
            held = self._entries.get(name)
            if held is not None and _big_enough(*held, box):
                self._entries.move_to_end(name)
                return held[0]
        return None

    def get(self, name: str, opener: Callable[[], BinaryIO], box: tuple[int, int]) -> Any:
        """The image at ``name`` fitted into ``box`` pixels (a PIL image), or a ``str``: why not.

        ``opener`` opens the file (it is called only when the image is not held).
        """
        found = self.held(name, box)
        if found is not None:
            return found
        entry = self._load(opener, (max(1, box[0]), max(1, box[1])))
        with self._lock:
            if name in self._entries:
                self._drop(name)
            self._keep(name, entry)
        return entry[0]

    def _load(self, opener: Callable[[], BinaryIO], box: tuple[int, int]) -> tuple[Any, tuple[int, int]]:
        from PIL import Image, UnidentifiedImageError

        with self._lock:
            self.loads += 1
        try:
            with opener() as handle:
                image = Image.open(handle)
                size = image.size
                if size[0] * size[1] > self.max_pixels:
                    return f"{size[0]}×{size[1]} is over {self.max_pixels // 1_000_000} Mpx: not read", (0, 0)
                image.draft("RGB", box)  # JPEG: decode at 1/2, 1/4 or 1/8 scale when that still fills the box
                image.thumbnail(box)
                return image.convert("RGB"), size
        except FileNotFoundError:
            why = "no such file"
        except UnidentifiedImageError:
            why = "not an image Pillow can read"
        except Image.DecompressionBombError:
            why = f"over {self.max_pixels // 1_000_000} Mpx: not read"
        except (OSError, ValueError, SyntaxError) as error:  # truncated, corrupt, unreadable
            why = " ".join((getattr(error, "strerror", None) or str(error) or type(error).__name__).split())
        return why, (0, 0)

    def _keep(self, name: str, entry: tuple[Any, tuple[int, int]]) -> None:
        size = _bytes(entry[0])
        if size > self.max_bytes:
            return
        self._entries[name] = entry
        self.held_bytes += size
        while self.held_bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def _drop(self, name: str) -> None:
        image, _ = self._entries.pop(name)
        self.held_bytes -= _bytes(image)

    def __len__(self) -> int:
        return len(self._entries)


def _big_enough(image: Any, full: tuple[int, int], box: tuple[int, int]) -> bool:
    """Whether ``image`` (read from one of ``full`` size) holds every pixel a fit into ``box`` would."""
    if isinstance(image, str):
        return True  # a failure stands until the file changes name
    scale = min(1.0, box[0] / full[0], box[1] / full[1])
    return image.size[0] >= int(full[0] * scale) and image.size[1] >= int(full[1] * scale)


def _bytes(entry: Any) -> int:
    if isinstance(entry, str):
        return len(entry)
    width, height = entry.size
    return width * height * 3
