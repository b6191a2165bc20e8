"""LLM-free AG-UI producer servers used by the tests, the stream captures and the demo (see README.md)."""
