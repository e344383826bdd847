"""``python -m gswitch``: the ``gswitch`` command."""

from gswitch.cli import main

raise SystemExit(main())
