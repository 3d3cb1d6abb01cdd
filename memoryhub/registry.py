"""Extension points the apps plug into, so the kernel never imports an app.

Apps register in their `AppConfig.ready()`:
- scrape metrics: functions yielding Prometheus metric families read at scrape time (state of the
  database, such as people per circle), so no write path keeps a gauge in step;
- job steps: run, in registration order, for every archival job of their kind (`index` for each
  stored batch, `extract` for a session's extraction);
- erasers: delete what the app holds for one user and return counts for the receipt;
- review queues: what waits for an editor (the admin's dashboard lists them, and the review API
  `/api/v1/review` serves them to a console of the tenant's own);
- dashboard links: pages of figures the admin's dashboard links to (a world's quality page);
- reindexers: namespaces of an app's own that `manage.py reindex` rebuilds besides the users' (a
  campaign's art cards).

A step has up to three phases, so that no network call (LLM, remote embedder) and no sleep ever
happens inside a transaction that holds a lock:
- `prepare(job, messages)`: outside any transaction. Reads, LLM calls, embeddings. Returns
  whatever `apply` needs. May raise `LLMUnavailable` / `LLMResponseError`: the kernel retries
  the job later (with a growing delay) and nothing has been written.
- `apply(job, messages, prepared)`: inside the kernel's short write transaction, which holds the
  user's archival lock and the job row, and records the step as done in the same commit. Only
  database work. Returns a JSON-serialisable summary, kept in `job.result["steps"][name]`. If
  the user was erased meanwhile, the kernel never calls it (the job row is gone).
- `after(job, summary)`: optional, after that commit, outside any transaction; network calls
  allowed, writes in its own short transactions (e.g. embed the people `apply` touched). Must
  tolerate rows that an erasure removed in between. The kernel records it as done (with what it
  returns, in `job.result["after"][name]`), so a job that crashed after `apply` resumes here
  without applying twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from django.db.models import QuerySet
    from rest_framework.serializers import BaseSerializer

    from memoryhub.models import ArchivalJob, Message, Tenant

INDEX = "index"
EXTRACT = "extract"


@dataclass(frozen=True)
class JobStep:
    kind: str
    name: str
    prepare: Callable[[ArchivalJob, Sequence[Message]], Any]
    apply: Callable[[ArchivalJob, Sequence[Message], Any], dict[str, Any]]
    after: Callable[[ArchivalJob, dict[str, Any]], dict[str, Any] | None] | None = None


@dataclass(frozen=True)
class Eraser:
    name: str
    run: Callable[[Tenant, str], dict[str, int]]


job_steps: list[JobStep] = []
erasers: list[Eraser] = []
scrape_metrics: dict[str, Callable[[], Iterable[Any]]] = {}


def register_job_step(
    kind: str,
    name: str,
    *,
    prepare: Callable[..., Any],
    apply: Callable[..., dict[str, Any]],
    after: Callable[..., dict[str, Any] | None] | None = None,
) -> None:
    if kind not in (INDEX, EXTRACT):
        raise ValueError(f"unknown job kind {kind!r}")
    if any(step.kind == kind and step.name == name for step in job_steps):
        return  # ready() can run twice under some test runners
    job_steps.append(JobStep(kind, name, prepare, apply, after))


def steps_for(kind: str) -> list[JobStep]:
    return [step for step in job_steps if step.kind == kind]


def register_eraser(name: str, run: Callable[..., dict[str, int]]) -> None:
    if any(e.name == name for e in erasers):
        return
    erasers.append(Eraser(name, run))


def register_scrape_metrics(name: str, collect: Callable[[], Iterable[Any]]) -> None:
    """`collect()` yields prometheus_client metric families; it runs on every scrape of /metrics."""
    scrape_metrics[name] = collect


@dataclass(frozen=True)
class Decision:
    when: datetime
    who: str
    what: str


# The status of an item waiting in any queue; every queue's model uses it.
PENDING = "pending"


@dataclass(frozen=True)
class ReviewApi:
    """A queue's items and decisions for the review API (`memoryhub.review_api`).

    The decisions are the services the admin's actions call, wrapped to take the API's caller as
    `actor` (a label such as "api-key:mh_1234abcd (console)") instead of a staff user, so an API
    decision writes the audit row an admin decision writes, with that label as who:
    - `approve(item, *, actor, reason)` and `reject(item, *, actor, reason)` decide a pending item;
    - `undo(item, *, actor, reason, force)`, where the admin can undo, reverses an item in
      `undo_status` (a merge: both people back as they were);
    each raises `ApplicationError` with status 409 when, under its lock, the item is no longer in
    the status it needs (another editor decided it first).
    `items(tenant)` is every item of that tenant, whatever its status; `evidence` serializes what
    an editor decides on (the source message, the two people, the diff); `statuses` are the values
    its `status` takes; `gone(tenant, item_id)`, where items can disappear (a fact replaced by a
    later approval), the 410 that says what became of one no longer stored, or None."""

    items: Callable[[Tenant], QuerySet]
    evidence: type[BaseSerializer]
    statuses: tuple[str, ...]
    approve: Callable[..., object]
    reject: Callable[..., object]
    undo: Callable[..., object] | None = None
    undo_status: str = "approved"
    gone: Callable[[Tenant, int], Exception | None] | None = None


@dataclass(frozen=True)
class ReviewQueue:
    """One kind of item waiting for an editor.

    `pending()` is the queue as a queryset (counted, and its oldest item by `age_field` shown);
    `describe(item)` is one line about an item; `url` opens the queue in the admin;
    `decided_since(moment)` lists the decisions taken since then, newest first; `api`, when given,
    puts the queue on the review API."""

    name: str
    label: str
    pending: Callable[[], QuerySet]
    describe: Callable[[Any], str]
    url: str
    decided_since: Callable[[datetime], list[Decision]]
    age_field: str = "created_at"
    api: ReviewApi | None = None


review_queues: dict[str, ReviewQueue] = {}


def register_review_queue(queue: ReviewQueue) -> None:
    review_queues[queue.name] = queue


@dataclass(frozen=True)
class DashboardLinks:
    """Pages the admin's home page links to under `label`; `links()` gives (text, url) pairs, shown to
    reviewers holding `permission` ("app.codename"; empty: every staff login)."""

    name: str
    label: str
    links: Callable[[], list[tuple[str, str]]]
    permission: str = ""


dashboard_links: dict[str, DashboardLinks] = {}


def register_dashboard_links(entry: DashboardLinks) -> None:
    dashboard_links[entry.name] = entry


@dataclass(frozen=True)
class Reindexer:
    """What `manage.py reindex` rebuilds of a tenant besides its users' namespaces, one progress step a unit:
    `units(tenant)` lists them (a campaign, say), `run(unit)` rebuilds one, embedding outside any transaction
    and writing in short ones as the users' rebuild does, and returns the chunks it wrote."""

    name: str
    label: str
    units: Callable[[Tenant], Sequence[Any]]
    run: Callable[[Any], int]


reindexers: dict[str, Reindexer] = {}


def register_reindexer(entry: Reindexer) -> None:
    reindexers[entry.name] = entry
