import reflex as rx

config = rx.Config(
    app_name="naive_chat",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
