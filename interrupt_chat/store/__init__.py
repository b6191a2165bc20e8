"""The thread database's storage: its tables, and the small modules that grow beside ``threads_db``."""
