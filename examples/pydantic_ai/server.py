"""Run the pydantic-ai example (``examples/pydantic_ai_agent.py``) from its own venv, as the producer browser tests do.

    scripts/producer_venvs.sh pydantic_ai
    .producers/pydantic_ai/bin/python examples/pydantic_ai/server.py --port 8124
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: the ``examples`` package

from examples._serve import serve  # after the path is set
from examples.pydantic_ai_agent import app

if __name__ == "__main__":
    serve(app, default_port=8124, description="LLM-free pydantic-ai AG-UI server")
