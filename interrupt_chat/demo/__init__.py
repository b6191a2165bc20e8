"""The demo, apart from the library: the demo site, the dojo pages and the scripted demo agent.

A user of the public API only (docs/dom-contract.md); not shipped in the wheel.
"""
