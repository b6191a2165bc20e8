"""The module Reflex loads for this checkout's app (``app_name = "interrupt_chat"``): the demo site."""

from .demo.site import app

__all__ = ["app"]
