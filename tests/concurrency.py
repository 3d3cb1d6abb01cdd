"""Running calls at the same time, as two clients or workers would."""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connections


def at_once(*calls: Callable[[], object], timeout: float = 60) -> list[object]:
    """Run `calls` on threads released together (a barrier), each on its own database connection,
    closed after; returns each call's result or the exception it raised, in the order given."""
    barrier = threading.Barrier(len(calls))
    outcomes: list[object] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            barrier.wait()
            outcomes[i] = calls[i]()
        except BaseException as exc:  # returned to the test, not lost in the thread
            outcomes[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    return outcomes


def errors_of(outcomes: list[object]) -> list[BaseException]:
    return [o for o in outcomes if isinstance(o, BaseException)]
