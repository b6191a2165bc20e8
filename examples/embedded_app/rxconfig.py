import reflex as rx

config = rx.Config(
    app_name="embedded_app",
    plugins=[rx.plugins.RadixThemesPlugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
