"""The recorded cards side by side: what differs between the newest records of two cards
(notebooks 04, 07 and 08 show it)."""

from .lessons._gpu.cards import Differences, choices, compare_all, differences, summary

__all__ = ["Differences", "choices", "compare_all", "differences", "summary"]
