"""Run the langgraph example (``examples/langgraph_agent.py``) from its own venv, as the producer browser tests do.

    scripts/producer_venvs.sh langgraph
    .producers/langgraph/bin/python examples/langgraph/server.py --port 8123
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: the ``examples`` package

from examples._serve import serve  # after the path is set
from examples.langgraph_agent import app

if __name__ == "__main__":
    serve(app, default_port=8123, description="LLM-free LangGraph AG-UI server")
