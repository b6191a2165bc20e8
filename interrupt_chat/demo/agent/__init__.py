"""A scripted, LLM-free AG-UI 1.0 agent for the demo site and the tests.

It is a *producer*, independent of the client: it imports neither ``reflex`` nor
``interrupt_chat.agui``. Build it with :func:`create_app` and mount it anywhere (the
Reflex backend mounts it under ``/demo-agent``); see :mod:`.app` for the routes.

Scenario = first word of the last user message, lowercased, outer punctuation stripped
(``"/approval please"`` → ``approval``); anything else runs ``markdown``:

=================  ===================================================================
``markdown``       streamed markdown answer echoing the user's text as escaped plain text
``approval``       text + ``delete_files`` tool call, ``tool_call`` interrupt (approve/edit)
``choice``         ``input_required``: pick a color (enum)
``credential``     ``input_required``: masked ``api_key`` (never echoed, never logged)
``multi``          three interrupts in one outcome (tool approval, choice, confirmation)
``expiring``       ``confirmation`` with ``expiresAt`` = now + ``expires_in``
``pay``            text + ``pay_invoice`` tool call, ``tool_call`` interrupt with ``expiresAt`` ("pay invoice
                   12000 to ACME expires 30"; default 600 s; see :mod:`.payments`)
``legacy``         CUSTOM ``on_interrupt`` (JSON string with question/message/responseSchema),
                   plain RUN_FINISHED; alias ``legacy-json``
``legacy-string``  CUSTOM ``on_interrupt`` with the plain string "approval: publish the draft?"
``question``       CUSTOM ``on_interrupt`` with ``{"question": "Ship it?"}`` as a JSON string
``both``           CUSTOM ``on_interrupt`` *and* an interrupt outcome in the same run
``error``          CUSTOM ``on_interrupt`` then RUN_ERROR ``SIMULATED`` (nothing stays open)
``long``           ~2000 deltas (about a minute) to try the stop button
``xss``            markdown carrying script/img/javascript: payloads
``tools``          a tool call that completes (TOOL_CALL_RESULT) without interrupt
``history``        says how many messages it received, the user's texts in order, and the run's number
``write``          ``PredictState`` for ``document``, ``write_document_local`` streaming it, then ``confirm_changes``
``think``          AG-UI 1.0 reasoning (streamed), then the answer
``haiku``          a ``generate_haiku`` call with its result, only inside a ``MESSAGES_SNAPSHOT``
``flights``        legacy ``{agent: "flights", message, options: [...], recommendation}`` (the dojo's subgraphs)
``plan``           legacy ``{steps: [{description, status}, …]}`` (the dojo's LangGraph human in the loop)
=================  ===================================================================

Resumes are checked strictly (codes ``UNKNOWN_INTERRUPT_ID``, ``DUPLICATE_INTERRUPT_ID``,
``PARTIAL_RESUME``, ``INTERRUPT_EXPIRED``, ``INVALID_PAYLOAD``, legacy
``NO_PENDING_INTERRUPT``; see :mod:`.resume`). A plain new message on a thread with open
interrupts re-raises them unchanged (LangGraph behaviour) instead of failing.
"""

from .app import create_app
from .context import DEFAULT_DELAY, DEFAULT_EXPIRES_IN, DemoConfig
from .scenarios import DEFAULT_SCENARIO, SCENARIO_NAMES, select_scenario
from .store import DemoStore, OpenInterrupts, PendingInterrupt

__all__ = [
    "DEFAULT_DELAY",
    "DEFAULT_EXPIRES_IN",
    "DEFAULT_SCENARIO",
    "SCENARIO_NAMES",
    "DemoConfig",
    "DemoStore",
    "OpenInterrupts",
    "PendingInterrupt",
    "create_app",
    "select_scenario",
]
