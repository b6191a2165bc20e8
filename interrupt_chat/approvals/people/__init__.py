"""Approvals between people: who must decide each request, the two-person rule, reassignment,
delegation, reminders and escalation (``Chat(people=...)``, docs/decisions/0025)."""
