"""The framework-free model layer: forms, cards, message views, history deltas, policy matching, inbox order.

Plain data and functions over :mod:`interrupt_chat.agui`'s types; nothing here imports Reflex or
the database, so every rule about what a card shows or which policy matches is testable alone. Also
the typed protocols through which the layers above see the chat's states (:mod:`.protocols`).
"""
