"""The quiet-output and line-length scanners that the browser test runs over every output of the
executed series (`browser_support.noise_lines`, `browser_support.long_lines`), and the one
place that sets TensorFlow's log level."""

from __future__ import annotations

import re
from pathlib import Path

from browser_support import PRINT_WIDTH, long_lines, noise_lines, repeated_claims

ROOT = Path(__file__).resolve().parents[1]


def _cell(*texts, name="stderr"):
    outputs = [{"output_type": "stream", "name": name, "text": t} for t in texts]
    return {"index": 1, "outputs": outputs}


def test_scanner_finds_framework_logs_warnings_and_progress_bars():
    noisy = [
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
        "I0000 00:00:1795722527.354557   31057 port.cc:153] oneDNN custom operations are on.\n",
        "2025-09-17 14:44:05.157831: I external/local_xla/xla/tsl/cuda/cudart_stub.cc:32] x\n",
        "/x/y.py:3: UserWarning: something\n  warnings.warn(\n",
        " 40%|████      | 4/10 [00:01<00:02,  2.9it/s]\r",
    ]
    found = noise_lines([_cell(*noisy)])
    assert len(found) == 6, found
    assert all(line.startswith("cell 1 (stderr): ") for line in found)


def test_a_widgets_fallback_text_is_not_read_as_output():
    """A progress widget closed when done leaves only its fallback text in the notebook's JSON;
    the browser test looks for a bar still in view instead."""
    widget = {
        "output_type": "display_data",
        "data": {
            "application/vnd.jupyter.widget-view+json": {"model_id": "x"},
            "text/plain": "configurations:   0%|          | 0/13 [00:00<?, ?it/s]",
        },
    }
    assert noise_lines([{"index": 6, "outputs": [widget]}]) == []


def test_scanner_leaves_lesson_output_alone():
    quiet = [
        "[holds] world_sizes_differ: the plain float32 all-reduce gives different bits\n",
        "[observed] bits_differ: elements whose bits differ: 0\n",
        "truth: sum(float32[8x2048], axis=0) = array[2048] [-1393.5911, …] (exact)\n",
        "float32 relative error 2.98e-08  (24.0 correct bits)\n",
        "Warning signs of a bad port: none here\n",
    ]
    assert noise_lines([_cell(*quiet, name="stdout")]) == []


def test_line_scanner_finds_printed_lines_too_long_for_the_output_area():
    fits, over = "x" * PRINT_WIDTH, "y" * (PRINT_WIDTH + 1)
    found = long_lines([_cell(f"{fits}\n{over}\n", name="stdout")])
    assert found == [f"cell 1 (stdout, {PRINT_WIDTH + 1} chars): {over}"]
    shown = {"output_type": "execute_result", "data": {"text/plain": over}}
    assert len(long_lines([{"index": 2, "outputs": [shown]}])) == 1
    # a result shown as HTML (a table) is measured by the page, not as text
    html = {"output_type": "display_data", "data": {"text/html": "<p/>", "text/plain": over}}
    assert long_lines([{"index": 3, "outputs": [html]}]) == []


def test_tensorflow_log_level_is_set_in_one_place():
    """Only fpexplore/quiet.py sets TF_CPP_MIN_LOG_LEVEL; everything else imports TensorFlow
    through `fpexplore.backends.load`, which calls it (notebooks included)."""
    setters = re.compile(r"TF_CPP_MIN_LOG_LEVEL\W{1,4}[,=:]?\s*\"?\d")
    places = []
    for path in [*ROOT.glob("fpexplore/**/*.py"), *ROOT.glob("notebooks/*.ipynb")]:
        text = path.read_text(encoding="utf-8")
        if 'os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL"' in text or setters.search(text):
            places.append(str(path.relative_to(ROOT)))
    assert sorted(places) == ["fpexplore/quiet.py"], places


def test_claims_scanner_finds_a_claim_shown_twice_in_one_section():
    """A table lists its claims; a `check` printing one of them again in the same section is
    found, the same claim in the next section or another claim with the same key is not."""
    from fpexplore.result import Claim, Comparison
    from fpexplore.result.html import claims_html

    c = Comparison("t", {}, None, (), {"k": Claim("x is within 2 ULP", True)})
    listed = {"output_type": "display_data", "data": {"text/html": claims_html(c)}}
    printed = {"output_type": "stream", "text": "[holds] k: x is within 2\n    ULP\n"}
    other = {"output_type": "stream", "text": "[holds] k: y is within 3 ULP\n"}

    def code(*outs):
        return {"cell_type": "code", "source": "", "outputs": list(outs)}

    def head(title):
        return {"cell_type": "markdown", "source": f"## {title}\n\ntext", "outputs": []}

    assert repeated_claims([head("1"), code(listed), code(printed)]) == [
        "1: k: x is within 2 ULP (2 times)"
    ]
    assert repeated_claims([head("1"), code(listed), head("2"), code(printed)]) == []
    assert repeated_claims([head("1"), code(listed), code(other)]) == []
