"""One exception family: every message says what was given, what is accepted, and how to fix it."""

from __future__ import annotations


class FpexploreError(Exception):
    """Base class of every error fpexplore raises on purpose."""


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a message: past ``limit`` characters its middle is cut, keeping its
    start and its end (a path's file name); never raising (a value whose repr fails is named by
    its type)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    if len(text) <= limit:
        return text
    keep = (limit - 20) // 2
    return f"{text[:keep]}...{text[-keep:]} ({len(text)} chars)"


class InvalidParameter(FpexploreError, ValueError):
    """An argument is outside its accepted range or set of choices."""

    def __init__(self, name: str, given: object, accepted: str, where: str = "") -> None:
        self.name, self.given, self.accepted = name, given, accepted
        prefix = f"The '{name}' parameter" + (f" of {where}" if where else "")
        super().__init__(f"{prefix} must be {accepted}. Got {shown(given)} instead.")


class UnknownParameter(InvalidParameter):
    """A parameter name the lesson (or function) does not declare."""

    def __init__(self, name: str, given: object, known: tuple[str, ...], where: str = "") -> None:
        listed = ", ".join(known) if known else "none"
        self.name, self.given, self.known = name, given, known
        self.accepted = f"one of the parameters {listed}"
        ValueError.__init__(
            self, f"{where or 'this'} has no parameter {shown(name)}; its parameters are {listed}"
        )


class InvalidInput(FpexploreError, ValueError):
    """Array input of the wrong dtype, shape or content."""


class BackendUnavailable(FpexploreError, RuntimeError):
    """A framework, device or component is missing; the message says which command fixes it."""

    def __init__(self, backend: str, reason: str, fix: str = "") -> None:
        self.backend, self.reason, self.fix = backend, reason, fix
        super().__init__(
            f"{backend} is unavailable: {reason}" + (f" To fix it, run: {fix}" if fix else "")
        )


class NotEmulated(FpexploreError, NotImplementedError):
    """An emulator was asked for a case it does not reproduce bit for bit (it never guesses)."""


class PrecisionError(FpexploreError, ArithmeticError):
    """More certified digits were asked for than the computation can certify."""


class WorkerError(FpexploreError, RuntimeError):
    """An out-of-process worker (the JVM for DJL) crashed, timed out or returned an error."""


class ModelRaised(FpexploreError, RuntimeError):
    """The user's own model raised while it was run: the message names the layer (module path)
    that raised and the original error, which is chained as ``__cause__``."""

    def __init__(
        self, layer: str, original: BaseException, where: str = "", kind: str = ""
    ) -> None:
        self.layer, self.original = layer, original
        at = f"in layer {layer!r}" if layer else "in the model itself"
        at += f" ({kind})" if kind else ""
        super().__init__(
            f"{where or 'the model'}: the model raised {at}: {type(original).__name__}: {original}"
        )


class RecordError(FpexploreError, ValueError):
    """A recorded run (data/gpu/*.json) is missing or does not match its schema."""


class _ClaimError(FpexploreError, AssertionError):
    verb = ""

    def __init__(self, lesson: str, key: str, claim: object) -> None:
        self.lesson, self.key, self.claim = lesson, key, claim
        text, reason = getattr(claim, "text", ""), getattr(claim, "reason", "")
        super().__init__(
            f"claim {key!r} of lesson {lesson!r} {self.verb}: {text}"
            + (f" ({reason})" if reason else "")
        )


class ClaimFailed(_ClaimError):
    """A lesson's claim did not hold in this run (`Comparison.check`)."""

    verb = "fails"


class ClaimNotChecked(_ClaimError):
    """A lesson's claim could not be checked: a part it needs (torch, TensorFlow, Java, the DJL
    jars, a GPU) is missing; the message says which and the command that gets it."""

    verb = "was not checked"
