"""Finding W&B runs on disk and telling, from a glance at their files, what each one is.

``layout`` decides what a path names (a folder of runs, an ordinary run with
its segments, or a shared run with its writers); ``probe`` reads the head and
tail of one run file for its identity and state. Neither starts a thread:
the workspace source and ``leet watch`` both build on them.
"""
