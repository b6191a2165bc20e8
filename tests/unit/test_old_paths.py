"""Issue 40: the package moved into layers; the paths apps used, and what was stored under them, still work."""

from __future__ import annotations

import pickle
import subprocess
import sys

import interrupt_chat as ic
from interrupt_chat.model.old_paths import MOVED, old_name


def test_every_old_module_path_is_the_module_at_its_new_path():
    import importlib

    for old, new in MOVED.items():
        assert importlib.import_module(f"interrupt_chat.{old}") is importlib.import_module(f"interrupt_chat.{new}"), old


def test_the_old_paths_an_app_may_use():
    from interrupt_chat.demo_agent.scenarios import SCENARIOS
    from interrupt_chat.state import ChatState, InterruptState

    from interrupt_chat import threads_db
    from interrupt_chat.agui import InterruptTracker
    from interrupt_chat.store.threads_db import ThreadDB

    assert threads_db.ThreadDB is ThreadDB and ChatState is ic.ChatState and InterruptState is ic.InterruptState
    assert InterruptTracker.__module__.startswith("interrupt_chat.agui") and SCENARIOS


def test_a_pickle_made_before_the_move_loads():
    from interrupt_chat.model.cards import Card

    card = Card(id="i-1", reason="tool_call", prompt="Delete?", kind="approve")
    old = pickle.dumps(card, protocol=0).replace(b"interrupt_chat.model.cards", b"interrupt_chat.cards")
    assert b"interrupt_chat.cards" in old and pickle.loads(old) == card


def test_chat_states_keep_their_names_so_stored_threads_keep_their_owner():
    chat_cls = ic.chat_state("http://127.0.0.1:9/", name="old-paths")
    assert chat_cls.__module__ == "interrupt_chat.registry"
    assert ".interrupt_chat___registry____chat_old_paths_" in chat_cls.get_full_name()
    assert old_name("interrupt_chat.demo.site") == "interrupt_chat.interrupt_chat"
    assert old_name("interrupt_chat.demo.dojo_pages.steps") == "interrupt_chat.dojo_pages.steps"
    assert old_name("myapp.states") == "myapp.states"


def test_the_core_still_imports_without_reflex_through_an_old_path():
    code = "import sys, interrupt_chat.cards; assert 'reflex' not in sys.modules, 'reflex imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
