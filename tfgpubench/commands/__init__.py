"""The commands of `python -m tfgpubench`: one module each, with the same shape.

Each exposes `add_arguments(parser)` and `run(args) -> exit status`, parses
and prints at the edge, and leaves the work to the package's modules
(diagnosis, stacks, runner, report, selfcheck). Nothing heavy (TensorFlow,
matplotlib, asv) is imported at module level, so `--help` stays instant.
"""
