"""The frame every dialog screen shares: centred, bordered, sized to fit small terminals."""

from __future__ import annotations


def dialog_css(screen: str, *, max_width: int, max_height: int, height: str = "100%",
               border_title: bool = True) -> str:
    """CSS for `screen`'s #dialog container; screens add their own rules after it."""
    title = ("        border-title-color: $primary;\n        border-title-style: bold;\n"
             if border_title else "")
    return f"""
    {screen} {{
        align: center middle;
    }}
    {screen} #dialog {{
        width: 100%;
        height: {height};
        max-width: {max_width};
        max-height: {max_height};
        border: round $primary;
{title}        background: $surface;
        padding: 0 1;
    }}
"""
