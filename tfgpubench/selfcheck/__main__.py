"""`python -m tfgpubench.selfcheck`: the same command without the other commands' imports."""

from . import main

raise SystemExit(main())
