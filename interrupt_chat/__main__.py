"""``python -m interrupt_chat``: the command line (``audit verify``, ``audit export``)."""

from .workers.audit_cli import main

raise SystemExit(main())
