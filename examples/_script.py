"""The script every example producer's stand-in model follows (standard library only: the producers'
own venvs import it through the repo root, as they do ``_serve``).

``clean up`` (any first word but these) calls ``delete_files`` with :data:`DELETE_ARGS`; ``steps``
calls the chat's frontend tool :data:`STEPS_TOOL` with :data:`STEPS_ARGS`; a steps result is answered
by :func:`steps_answer`, any other result ``Tool said: <result>``.
"""

from __future__ import annotations

import json
from typing import Any

DELETE_ARGS = {"path": "/tmp/demo", "count": 3}
STEPS_TOOL = "generate_task_steps"
STEPS = ("Back up the files", "Delete the temp folder", "Email the team")
STEPS_ARGS = {"steps": [{"description": step, "status": "enabled"} for step in STEPS]}


def first_word(text: str) -> str:
    """The first word of a user's text, lower case, without trailing punctuation ("" for none)."""
    words = text.split()
    return words[0].lower().strip(",.!?") if words else ""


def steps_answer(result: Any) -> str | None:
    """``Running 2 of 3 steps: A, C.`` for a steps result (its JSON text or the parsed object), else None."""
    try:
        steps = (json.loads(result) if isinstance(result, str) else result)["steps"]
        enabled = [step["description"] for step in steps if step["status"] == "enabled"]
    except (ValueError, TypeError, KeyError):
        return None
    return f"Running {len(enabled)} of {len(steps)} steps: {', '.join(enabled)}."
