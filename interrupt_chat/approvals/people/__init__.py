"""Approvals between people (§6.2): routing, reassigning, delegating, the inbox's scope."""
