"""gunicorn reads this file from the working directory. The Prometheus multiprocess bookkeeping
lives here (memoryhub/multiprocess.py), and a worker reads the search's data tables before its
first request; bind, workers and timeouts stay on the command line (Dockerfile, docker-compose.yml)."""

from typing import Any

# Underscore names: gunicorn reads this module's other globals as its settings.
from memoryhub import multiprocess as _metrics


def on_starting(server: object) -> None:
    # The master owns the metrics directory of its workers: fresh at start, removed at exit.
    _metrics.claim()


def child_exit(server: object, worker: Any) -> None:
    # A worker that exited (recycled, killed) keeps its counters in the totals; its live gauges go.
    _metrics.mark_dead(worker.pid)


def post_worker_init(worker: Any) -> None:
    # The WordNet categories and the word vectors are read once per process (~0.25 s together): at
    # start, not in the first request that searches or indexes. So is the embedder: a local
    # sentence-transformers model takes 5-10 s to load (torch), which the first request that wrote
    # or searched paid, and a model that does not fit stops the worker's boot instead.
    from memoryhub import embeddings, lexicon, wordvectors

    lexicon.stats()
    wordvectors.stats()
    embeddings.get_embedder()
