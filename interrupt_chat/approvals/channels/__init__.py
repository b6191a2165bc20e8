"""Where people decide: mail and Slack (``INTERRUPT_CHAT_SMTP_URL``, ``INTERRUPT_CHAT_SLACK_BOT_TOKEN``; issue 42).

A request assigned to people (:mod:`..people`) reaches each recipient through the channels they chose
(:mod:`.reach`), as items of the notification outbox: each sent once, retried with backoff, never twice
from two workers. :mod:`.mail` sends mail; :mod:`.slack` posts direct messages and takes their clicks.
"""

from . import mail  # registers the mail deliverer (reach.DELIVERERS["mail"])

__all__ = ["mail"]
