"""Each page of the demo site compiles its components into a file of its own (decision 0038).

Reflex writes a page's memoised components into the file of the page function's module, and a
route loads that file whole: in one file, every route would load every page's chat and the charts.
"""

from __future__ import annotations

from reflex_base.utils import memo_paths


def test_every_page_of_the_demo_has_a_file_of_its_own():
    from interrupt_chat.demo import site  # (the app module: its App is the process's one)

    pages = site.app._unevaluated_pages
    assert {"index", "approval", "inbox", "insights", "steps", "decide/[token]"} <= set(pages)
    files = {route: memo_paths.module_to_mirrored_segments(page._source_module) for route, page in pages.items()}
    assert len(set(files.values())) == len(pages)  # no two routes share a file
    for route, segments in files.items():
        function = pages[route].component
        # .web/app_components/interrupt_chat/demo/site/<page>.jsx, named after the page's function
        assert segments == ("interrupt_chat", "demo", "site", function.__name__), route
        assert function is getattr(site, function.__name__)  # still the module's own function
