"""leet: a full-screen terminal monitor for machine-learning hosts and W&B runs."""

__version__ = "0.1.0"
