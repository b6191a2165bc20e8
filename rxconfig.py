import os

import reflex as rx

from interrupt_chat.model.policy_file import load

config = rx.Config(
    app_name="interrupt_chat",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="violet", gray_color="slate", radius="large"))],
    disable_plugins=[rx.plugins.SitemapPlugin],
)

# Rules as code (docs/guides/rules.md): a malformed policy file stops every start here, in the process that
# starts the servers (backend-only too, whose workers import the app on their own), before anything is served.
if os.environ.get("INTERRUPT_CHAT_POLICY_FILE", "").strip():
    load(os.environ["INTERRUPT_CHAT_POLICY_FILE"].strip())
