"""The thread database's tables (SQLAlchemy Core), shared by the store's modules.

- ``interrupt_chat_schema``: the schema version.
- ``interrupt_chat_threads``: one row per (owner, thread); ``revision`` is the arbiter of every
  write (docs/decisions/0016).
- ``interrupt_chat_messages``: one row per AG-UI message.
- ``interrupt_chat_decisions``: the append-only audit trail.
- ``interrupt_chat_tombstones``: the threads that were deleted; a save never brings one back.
- ``interrupt_chat_outbox``: notifications to deliver (at least once), claimed row by row.
- ``interrupt_chat_secrets``: secrets the app did not configure, generated once (the link secret).
- ``interrupt_chat_link_uses``: decision links already used (each works once).
- ``interrupt_chat_feedback``: thumbs up / down on assistant messages, one per owner and message.
- ``interrupt_chat_policies``: the owners' rules ("always allow", …), kept after a revoke for the audit export.
- ``interrupt_chat_files``: attached files (their bytes), referenced from messages as ``ic-file:<id>``.
- ``interrupt_chat_branches``: the hidden versions of edited messages and regenerated answers (agui/branches.py).
- ``interrupt_chat_requests``: who must decide each request of a chat with people (its assignees, approvals so far).
- ``interrupt_chat_request_assignees``: one row per open request and assignee (``mine``: what is assigned to me).
- ``interrupt_chat_delegations``: a person's delegate while away, until a date.
- ``interrupt_chat_channel_prefs``: where each person wants requests: the app, mail, Slack, or both.
- ``interrupt_chat_slack_messages``: the Slack messages sent about a request (updated in place once it is decided).
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Column, DateTime, Index, Integer, LargeBinary, MetaData, String, Table, Text

__all__ = ["assignees_table", "audit_head_table", "branches_table", "channel_prefs_table", "decisions_table",
           "delegations_table",
           "feedback_table", "files_table", "link_uses_table", "messages_table", "metadata", "outbox_table",
           "pauses_table", "policies_table", "requests_table", "schema_version_table", "secrets_table",
           "slack_messages_table", "threads_table", "tombstones_table"]

# -- schema ------------------------------------------------------------------------------------------

metadata = MetaData()

schema_version_table = Table(
    "interrupt_chat_schema", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", Integer, nullable=False),
)

threads_table = Table(
    "interrupt_chat_threads", metadata,
    Column("owner", String, primary_key=True),
    Column("thread_id", String, primary_key=True),
    Column("title", Text, nullable=False),
    Column("title_custom", Boolean, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("version", Integer, nullable=False),
    Column("revision", Integer, nullable=False),
    Column("state", JSON),
    Column("pending", JSON),
    Column("answers", JSON),
    Column("meta", JSON),
    Column("last_run_id", Text),
    Column("error", Text),
    Column("pending_count", Integer, nullable=False),
    Column("pending_since", DateTime(timezone=True)),
    Index("interrupt_chat_threads_owner_updated", "owner", "updated_at"),
)

messages_table = Table(
    "interrupt_chat_messages", metadata,
    Column("owner", String, primary_key=True),
    Column("thread_id", String, primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("message_id", Text, nullable=False),
    Column("role", String(32), nullable=False),
    Column("body", JSON, nullable=False),
    Column("text", Text, nullable=False),
    Column("hash", String(32), nullable=False),
)

decisions_table = Table(
    "interrupt_chat_decisions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("owner", String, nullable=False),
    Column("thread_id", String, nullable=False),
    Column("run_id", Text),
    Column("interrupt_id", Text, nullable=False),
    Column("reason", Text),
    Column("action", String(16), nullable=False),
    Column("payload", JSON),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("decided_by", String(16)),  # person | bulk | policy | link | expiry (schema 2; NULL before: person)
    Column("detail", JSON),  # a policy's answer: {tool, rule, policyId, toolCallId} (schema 3)
    Column("owner_public", Text),  # the owner as the export names them (owner= id or an HMAC; schema 6)
    Column("decider", Text),  # who decided, named so too ("": the owner; schema 6)
    Column("tool", Text),  # the tool a request was about ("" when none; schema 6)
    Column("waited_ms", Integer),  # from the request surfacing to this entry (NULL: unknown; schema 6)
    Column("prev_hash", String(64)),  # the chain (store/chain.py; schema 6)
    Column("hash", String(64)),
    Index("interrupt_chat_decisions_owner_thread", "owner", "thread_id", "id"),
    # /insights (schema 6), covering: a period's waits; its outcomes by tool (scanned in order, no sort)
    Index("interrupt_chat_decisions_at", "at", "action", "waited_ms"),
    Index("interrupt_chat_decisions_tools", "tool", "action", "decided_by", "at"),
    Index("interrupt_chat_decisions_waits", "waited_ms", "at", "action"),  # /insights: a percentile's bin
    Index("interrupt_chat_decisions_decider", "decider", "at"),
)

audit_head_table = Table(  # the chain's head, written with each entry: a deletion at the end shows (schema 6)
    "interrupt_chat_audit_head", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),  # always 1
    Column("entries", Integer, nullable=False),
    Column("last_id", Integer, nullable=False),
    Column("hash", String(64), nullable=False),
)

tombstones_table = Table(
    "interrupt_chat_tombstones", metadata,
    Column("owner", String, primary_key=True),
    Column("thread_id", String, primary_key=True),
    Column("deleted_at", DateTime(timezone=True), nullable=False),
)

outbox_table = Table(
    "interrupt_chat_outbox", metadata,
    Column("id", String(64), primary_key=True),  # the notification's stable id: enqueued once
    Column("chat", Text, nullable=False),  # the chat state's full name: whose notify function
    Column("body", JSON, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_at", DateTime(timezone=True), nullable=False),  # due (or leased until)
    Column("state", String(16), nullable=False),  # pending | delivered | failed
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("interrupt_chat_outbox_due", "state", "next_at"),
)

secrets_table = Table(
    "interrupt_chat_secrets", metadata,
    Column("name", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

link_uses_table = Table(
    "interrupt_chat_link_uses", metadata,
    Column("token_id", String(64), primary_key=True),
    Column("used_at", DateTime(timezone=True), nullable=False),
)

policies_table = Table(
    "interrupt_chat_policies", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("owner", String, nullable=False),
    Column("tool", Text, nullable=False),
    Column("scope", String(16), nullable=False),  # thread | always
    Column("effect", String(16), nullable=False),  # allow | deny
    Column("thread_id", String, nullable=False),  # "" for scope always
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),  # NULL while the rule holds
    Column("conditions", JSON),  # {argument: {op: value}}; NULL or {}: any call of the tool (schema 5)
    Column("expires_at", DateTime(timezone=True)),  # NULL: until revoked (schema 5)
    Column("schema_hash", String(64)),  # the tool's fingerprint when it was made; NULL: any (schema 5)
    Index("interrupt_chat_policies_owner", "owner", "revoked_at"),
)

pauses_table = Table(  # a person's pause (§6.4): a row while it is on (schema 5)
    "interrupt_chat_pauses", metadata,
    Column("owner", String, primary_key=True),
    Column("since", DateTime(timezone=True), nullable=False),
)

feedback_table = Table(
    "interrupt_chat_feedback", metadata,
    Column("owner", String, primary_key=True),
    Column("message_id", String, primary_key=True),
    Column("thread_id", String, nullable=False),
    Column("rating", String(8), nullable=False),  # up | down
    Column("comment", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Index("interrupt_chat_feedback_owner_thread", "owner", "thread_id"),
)

branches_table = Table(
    "interrupt_chat_branches", metadata,
    Column("owner", String, primary_key=True),
    Column("thread_id", String, primary_key=True),
    Column("branch_id", String(64), primary_key=True),
    Column("parent_id", Text, nullable=False),  # the message before the fork ("" : the thread's start)
    Column("record", JSON, nullable=False),  # the continuation: messages, pending set, answers, status, state
    Column("text", Text, nullable=False),  # what search reads: its user and assistant messages
    Column("hidden_at", DateTime(timezone=True), nullable=False),
)

files_table = Table(
    "interrupt_chat_files", metadata,
    Column("file_id", String(64), primary_key=True),  # random: a message references it as ic-file:<id>
    Column("owner", String, nullable=False),
    Column("thread_id", String, nullable=False),  # the thread shown when it was attached
    Column("name", Text, nullable=False),
    Column("mime", String(128), nullable=False),  # from its content
    Column("size", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("interrupt_chat_files_owner_thread", "owner", "thread_id"),
)

requests_table = Table(
    "interrupt_chat_requests", metadata,
    Column("owner", String, primary_key=True),  # the asker's key: whose thread
    Column("thread_id", String, primary_key=True),
    Column("interrupt_id", String, primary_key=True),  # "" for a legacy interrupt
    Column("run_id", Text, nullable=False),  # the run that raised it
    Column("chat", String, nullable=False),  # the chat state's class name (the owner key's last part)
    Column("asker", Text, nullable=False),  # the asker's owner= id ("" for an anonymous visitor)
    Column("assignees", JSON, nullable=False),  # person ids and role:<name>
    Column("need", Integer, nullable=False),  # distinct approvals it needs
    Column("approvals", JSON, nullable=False),  # [{"actor", "for", "at"}] so far
    Column("tool", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("surfaced_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True)),
    Column("remind_at", DateTime(timezone=True)),  # NULL: no reminder (or sent: reminded)
    Column("escalate_at", DateTime(timezone=True)),
    Column("escalate_to", JSON),
    Column("reminded", Boolean, nullable=False),
    Column("escalated", Boolean, nullable=False),
    Column("state", String(16), nullable=False),  # open | closed
    Column("revision", Integer, nullable=False),  # every change is conditional on it
    Column("about", JSON),  # what mail and Slack say of it: {"message", "args", "masked", "title"}
    Index("interrupt_chat_requests_due", "state", "remind_at", "escalate_at"),
)

assignees_table = Table(
    "interrupt_chat_request_assignees", metadata,
    Column("assignee", String, primary_key=True),  # a person id or role:<name>
    Column("owner", String, primary_key=True),
    Column("thread_id", String, primary_key=True),
    Column("interrupt_id", String, primary_key=True),
    Column("chat", String, nullable=False),
    Index("interrupt_chat_request_assignees_chat", "chat", "assignee"),
)

delegations_table = Table(
    "interrupt_chat_delegations", metadata,
    Column("person", String, primary_key=True),  # an owner= id
    Column("delegate", String, nullable=False),
    Column("until", DateTime(timezone=True), nullable=False),
    Column("set_at", DateTime(timezone=True), nullable=False),
    Index("interrupt_chat_delegations_delegate", "delegate"),
)

channel_prefs_table = Table(
    "interrupt_chat_channel_prefs", metadata,
    Column("person", String, primary_key=True),  # an owner= id
    Column("choice", String(8), nullable=False),  # app | mail | slack | both
    Column("set_at", DateTime(timezone=True), nullable=False),
)

slack_messages_table = Table(
    "interrupt_chat_slack_messages", metadata,
    Column("owner", String, primary_key=True),  # the request's asker key
    Column("thread_id", String, primary_key=True),
    Column("interrupt_id", String, primary_key=True),
    Column("person", String, primary_key=True),  # the recipient
    Column("kind", String(16), primary_key=True),  # assigned | reminder | escalated: each message is updated
    Column("channel", String, nullable=False),  # the DM channel chat.postMessage answered with
    Column("ts", String, nullable=False),
    Column("posted_at", DateTime(timezone=True), nullable=False),
)
