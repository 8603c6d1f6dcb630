"""Symbolic addition trees: run an emulator on :class:`Node` leaves to see its order.

The emulators only use elementwise ``+``, indexing, reshaping and stacking, so an object
ndarray of nodes flows through the very code that adds floats, and the result is the tree of
additions the framework performs.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


class Node:
    """One value of a summation: a leaf ``x[index]``, a constant, or the sum of two nodes."""

    __slots__ = ("const", "index", "left", "right")

    def __init__(
        self,
        index: int | None = None,
        left: Node | None = None,
        right: Node | None = None,
        const: float | None = None,
    ) -> None:
        self.index, self.left, self.right, self.const = index, left, right, const

    def __add__(self, other: Node) -> Node:
        if not isinstance(other, Node):
            return NotImplemented
        return Node(left=self, right=other)

    @property
    def is_leaf(self) -> bool:
        """True for an input element ``x[index]``."""
        return self.index is not None

    @property
    def is_const(self) -> bool:
        """True for a constant such as the +0.0 an accumulator starts from."""
        return self.const is not None

    @property
    def is_sum(self) -> bool:
        """True for the sum ``left + right``."""
        return self.left is not None

    def leaves(self) -> list[int]:
        """Indices of the input elements under this node, left to right."""
        return [node.index for node in self.walk() if node.is_leaf]

    def walk(self) -> Iterator[Node]:
        """Every node under this one (itself included), depth first, left before right."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            if node.is_sum:
                stack.append(node.right)
                stack.append(node.left)

    def depth(self) -> int:
        """Number of additions on the longest path from this node down to a leaf."""
        depth: dict[int, int] = {}
        for node in reversed(list(self.walk())):
            depth[id(node)] = (
                1 + max(depth[id(node.left)], depth[id(node.right)]) if node.is_sum else 0
            )
        return depth[id(self)]

    def additions(self) -> int:
        """Number of ``+`` nodes in the tree."""
        return sum(1 for node in self.walk() if node.is_sum)

    def simplified(self) -> Node:
        """The same tree without additions of constant zeros (they do not change any value
        except the sign of a zero result)."""
        memo: dict[int, Node] = {}
        for node in reversed(list(self.walk())):
            if not node.is_sum:
                memo[id(node)] = node
                continue
            left, right = memo[id(node.left)], memo[id(node.right)]
            if left.is_const and left.const == 0 and not right.is_const:
                memo[id(node)] = right
            elif right.is_const and right.const == 0:
                memo[id(node)] = left
            elif left is node.left and right is node.right:
                memo[id(node)] = node
            else:
                memo[id(node)] = Node(left=left, right=right)
        return memo[id(self)]

    def expression(self) -> str:
        """The tree as a fully parenthesized expression, e.g. ``((x0 + x1) + x2)``."""
        text: dict[int, str] = {}
        for node in reversed(list(self.walk())):
            if node.is_leaf:
                text[id(node)] = f"x{node.index}"
            elif node.is_const:
                text[id(node)] = repr(node.const)
            else:
                text[id(node)] = f"({text[id(node.left)]} + {text[id(node.right)]})"
        return text[id(self)]

    def __repr__(self) -> str:
        if self.is_leaf:
            return f"Node(x{self.index})"
        if self.is_const:
            return f"Node({self.const!r})"
        return f"Node(+, {self.additions()} additions)"


ZERO = Node(const=0.0)
NEG_ZERO = Node(const=-0.0)


def leaves(n: int) -> np.ndarray:
    """An object ndarray of the leaves ``x0 .. x{n-1}``."""
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = Node(index=i)
    return out
