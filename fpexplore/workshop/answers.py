"""Exercise checks that Run All keeps collapsed: what the check prints lands in a closed
``<details>`` element, so running a notebook top to bottom never shows an answer's numbers."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout

SUMMARY = "Check the answer (opens the numbers the answer rests on)"
#: what a plain-text view (a terminal, nbconvert to text) shows instead of the numbers
PLAIN = "[the answer's check ran; its numbers are collapsed]"


def collapsed(text: str, summary: str = SUMMARY) -> dict[str, str]:
    """The mime bundle of ``text`` inside a closed ``<details>``."""
    from ..templates import part

    return {"text/html": part("collapsed", summary, text), "text/plain": PLAIN}


@contextmanager
def hidden_answer(summary: str = SUMMARY) -> Iterator[None]:
    """Run an exercise's check with its printed output collapsed (shown even when it fails,
    still collapsed; the failure's traceback is not hidden)."""
    buf = io.StringIO()
    try:
        with redirect_stdout(buf):
            yield
    finally:
        text = buf.getvalue()
        if text:
            from IPython.display import display

            display(collapsed(text, summary), raw=True)
