"""The W&B run transaction log (``run-<id>.wandb``): framing, records, events."""
