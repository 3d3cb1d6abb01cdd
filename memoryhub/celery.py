"""The Celery app. With `REDIS_URL` unset, tasks run in-process (eager), so no broker is needed."""

import logging
import os
from typing import Any

from celery import Celery
from celery import Task as BaseTask
from celery.signals import worker_process_shutdown, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")


class Task(BaseTask):
    """Publishing goes through a breaker: after the broker failed, a publish fails at once for
    `REDIS_RETRY_SECONDS` instead of waiting out the broker's timeouts. Callers already treat a
    failed publish as "the sweeper will enqueue it" (the job row is committed first)."""

    def apply_async(self, *args: Any, **kwargs: Any) -> Any:
        if self.app.conf.task_always_eager:
            return super().apply_async(*args, **kwargs)
        from kombu.exceptions import OperationalError
        from redis import RedisError

        from memoryhub.redis_client import broker_breaker

        return broker_breaker.call(self.app.conf.broker_url, lambda: super(Task, self).apply_async(*args, **kwargs),
                                   (OperationalError, RedisError, OSError))


app = Celery("memoryhub", task_cls=Task)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _vector_width_checked(**kwargs: Any) -> None:
    """A worker started with an EMBEDDING_DIMENSIONS the vector columns lack said "ready" and failed every
    index job with a DataError; the web process answers 503 naming the command. Say so where the operator
    looks, and stop: nothing it took would succeed."""
    from rag import vector_width

    try:
        problem = vector_width.problem()
    except Exception:  # the database not up yet: the jobs retry, as they would anyway
        return
    if problem:
        logging.getLogger(__name__).critical("worker stopping: %s", problem)
        os._exit(78)  # EX_CONFIG: a supervisor sees a configuration error, not a crash to restart into


@worker_process_shutdown.connect
def _pool_process_exits(pid: int | None = None, **kwargs: Any) -> None:
    # The worker's main process owns the metrics directory (claimed when it loaded the settings,
    # before forking its pool); a pool process that exits keeps its counters there.
    from memoryhub import multiprocess

    multiprocess.mark_dead(pid or os.getpid())
