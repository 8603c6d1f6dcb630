"""How `make test` spreads the suite over the machine's cores (pytest-xdist, ``-n``).

A test module is one unit of work, so its module-scoped fixtures are made once, on one worker;
a few modules that share an expensive session fixture are one unit together (`GROUPS`): the
Binder replay's environment serves the replay's checks, the notebook series in JupyterLab and
the installed-wheel test. The units that take longest start first (`FIRST`), so that the rest
of the suite fills the other workers around them.
"""

from __future__ import annotations

from collections.abc import Sequence

#: modules that run on one worker together (they share a session fixture), by unit name
GROUPS: dict[str, tuple[str, ...]] = {
    "binder": (
        "tests/test_binder_replay.py",
        "tests/test_browser_notebooks.py",
        "tests/test_wheel_install.py",
    ),
}
#: the longest units, longest first (their seconds on a cold run: ``make suite-time``), so that
#: the suite ends on short units and no process waits at the end for one long unit
FIRST: tuple[str, ...] = (
    "binder",
    "tests/test_claims_any_machine.py",
    "tests/test_browser_missing.py",
    "tests/test_widget_ranges.py",
    "tests/test_contract_degrade.py",
    "tests/test_lessons_property.py",
    "tests/test_fingerprint.py",
    "tests/test_orders_tensorflow.py",
    "tests/test_browser_delivery.py",
)


def unit(nodeid: str) -> str:
    """The unit of work of a test: its group's name, else its module's path."""
    module = nodeid.split("::", 1)[0]
    for name, modules in GROUPS.items():
        if module in modules:
            return name
    return module


def ordered(nodeids: Sequence[str]) -> list[int]:
    """The positions of ``nodeids`` with the units of `FIRST` first (in its order), each
    unit's tests together, and the rest in their collected order."""
    rank = {name: i for i, name in enumerate(FIRST)}
    first_seen: dict[str, int] = {}
    for i, nodeid in enumerate(nodeids):
        first_seen.setdefault(unit(nodeid), i)

    def key(i: int) -> tuple[int, int, int]:
        u = unit(nodeids[i])
        return (rank.get(u, len(rank)), first_seen[u], i)

    return sorted(range(len(nodeids)), key=key)


def make_scheduler(config, log):
    """xdist's scheduler by scope, with `unit` as the scope and the collected order kept."""
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

    config.option.loadscopereorder = False  # keep the order `ordered` gave the collection
    return ByUnit(config, log)
