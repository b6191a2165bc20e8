"""Run the AG-UI repository's LangGraph dojo agents (``dojo/``, vendored unmodified) from their own venv.

Their model is OpenAI's ``gpt-4.1-mini`` through ``langchain-openai``; ``--llm`` points the OpenAI client at
an OpenAI-compatible server instead (the dojo's own tests use ``@copilotkit/aimock`` with the recorded
fixtures, see ``aimock/``). Every agent is at ``/agent/<feature>``, so the demo site's dojo pages take
``INTERRUPT_CHAT_DOJO_URL=http://127.0.0.1:<port>/agent``.

    scripts/producer_venvs.sh langgraph_dojo
    .producers/langgraph_dojo/bin/python examples/langgraph_dojo/server.py --port 8129 --llm http://127.0.0.1:5555/v1
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    argv = sys.argv[1:]
    if "--llm" in argv:  # set before the agents import langchain-openai
        at = argv.index("--llm")
        os.environ["OPENAI_BASE_URL"] = argv[at + 1]
        os.environ.setdefault("OPENAI_API_KEY", "sk-mock")
        del argv[at:at + 2]
    sys.path.insert(0, str(HERE.parents[1]))  # the repo root: the ``examples`` package
    sys.path.insert(0, str(HERE / "dojo"))  # the dojo's ``agents`` package
    from agents.dojo import app  # after the paths and the environment are set

    from examples._serve import serve

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    serve(app, default_port=8129, description="the AG-UI LangGraph dojo agents", argv=argv)


if __name__ == "__main__":
    main()
