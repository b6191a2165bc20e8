import reflex as rx

config = rx.Config(
    app_name="interrupt_chat",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="violet", gray_color="slate", radius="large"))],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
