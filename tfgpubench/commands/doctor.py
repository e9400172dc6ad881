"""Which TensorFlow and plugin this Python has, whether Apple pairs them, which
devices TensorFlow sees, and for each dtype where a '/GPU:0' multiply runs."""

import json
import sys

from ..config import add_config_argument, load_config
from ..diagnosis import diagnose, format_diagnosis
from ..suite import load_suite_common


def add_arguments(parser):
    add_config_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON")


def run(args):
    config = load_config(args.config)
    diagnosis = diagnose(load_suite_common(config.benchmark_dir))
    print(json.dumps(diagnosis, indent=2) if args.json else format_diagnosis(diagnosis))
    if diagnosis["pairing"] and not diagnosis["pairing"]["ok"]:
        print(
            "warning: this TensorFlow / tensorflow-metal pair is not one Apple supports",
            file=sys.stderr,
        )
    return 0
