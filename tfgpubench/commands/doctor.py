"""Which TensorFlow and plugin this Python has, whether Apple pairs them, which
devices TensorFlow sees, and for each dtype and mode whether a '/GPU:0' multiply
is measured here. --check prints the GPU self-check that decides it, every
check with its evidence (the same checks `run` records beside each stack)."""

import json
import sys
from pathlib import Path

from ..config import add_config_argument, load_config
from ..diagnosis import diagnose, format_diagnosis, stack_of, stack_requirements
from ..names import TABLE_FILE
from ..stacks.install_stack import detect_variant
from ..stacks.machine import detect_facts
from ..stacks.table import TableError, load_table
from ..suite import suite_module


def add_arguments(parser):
    add_config_argument(parser)
    parser.add_argument("--check", action="store_true",
                        help="print every check of the GPU self-check with its evidence")
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON")


def _progress(message):
    print(f"  {message}...", file=sys.stderr, flush=True)


def run(args):
    config = load_config(args.config)
    checks = suite_module("checks", config.benchmark_dir)
    record = checks.run_checks(_progress if args.check and not args.json else None)
    diagnosis = diagnose(checks, record)
    diagnosis["stack"] = _stack_requirements(Path(args.config).resolve().parent,
                                             diagnosis["distributions"], diagnosis["tensorflow"])
    if args.json:
        print(json.dumps(diagnosis, indent=2))
    else:
        print(format_diagnosis(diagnosis, record if args.check else None))
    if diagnosis["pairing"] and not diagnosis["pairing"]["ok"]:
        print(
            "warning: this TensorFlow / tensorflow-metal pair is not one Apple supports",
            file=sys.stderr,
        )
    return 0


def _stack_requirements(root, installed, tensorflow_version):
    """The needs of this TensorFlow's row of stacks.toml (next to asv.conf.json), on
    this machine: the CUDA build where `run` would pick it (nvidia-smi sees a GPU)."""
    try:
        stacks = load_table(root / TABLE_FILE)
    except (OSError, TableError) as exc:
        return {"label": None, "needs": [], "lines": [f"stacks.toml not read: {exc}"]}
    stack = stack_of(stacks, sys.platform, installed)
    return stack_requirements(stack, detect_variant(), detect_facts(), tensorflow_version)
