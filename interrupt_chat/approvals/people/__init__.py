"""Approvals between people (``Chat(people=...)``, docs/decisions/0025).

Who must decide each request, the two-person rule, reassignment, delegation, reminders and escalation.
"""
