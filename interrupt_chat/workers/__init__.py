"""What several workers share: runs and their claims, live sync between tabs, load, presence, GC and emit tunings.

Below the chat: the chat's features call these; these never call a chat feature (a tab that
must act on a live-sync message is reached through the follower the chat layer registers).
"""
