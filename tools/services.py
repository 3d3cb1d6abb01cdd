"""Calling a tool: validate its arguments, run it, log the call (tool, arguments, sources, latency,
the world it read, a judging tool's verdict, what it spent on the LLM)."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from prometheus_client import Counter

from lore.campaigns.models import Campaign
from memoryhub import llm
from memoryhub.exceptions import ApplicationError
from memoryhub.models import Tenant
from memoryhub.validation import json_value_problem
from tools.models import ToolCall
from tools.registry import arguments_validate, tool_get

VERDICTS = Counter("memoryhub_tool_verdicts_total",
                   "Verdicts of judging tools (lore_assert: supported / contradicted / unknown); the contradiction "
                   "rate is contradicted over all", ["tool", "verdict"])


# What a logged call says until its outcome is filled in, and for good if its process died.
UNFINISHED = "unfinished: the process stopped during the call"


def _sources(result: dict[str, Any]) -> list[str]:
    sources = result.get("sources", [])
    return [str(s) for s in sources][:200] if isinstance(sources, list) else []


def tool_call(*, tenant: Tenant, name: str, arguments: Any, transport: str,
              scopes: Collection[str] | None = None) -> dict[str, Any]:
    """Run one tool for a tenant and log it. An unknown tool raises NotFound (not logged: there is
    no tool to log against); bad arguments and tool errors are logged, then raised. `scopes`: those
    of the caller's key (None: no key, a server an operator started for the tenant); a tool needing
    one it lacks is a 403 `missing_scope`.

    The call is logged before the tool reads and its outcome filled in after: an erasure of the
    user that comes while the call runs deletes the row (tools.services.user_erase), and the
    update then finds nothing, where a row written at the end would have kept the question asked
    about the erased user and the ids of their chunks. A process that dies mid-call leaves the row
    as an error that says so.

    No transaction wraps the call: the tools only read, and some (lore_assert with an LLM) call
    out over the network, which must not happen while a transaction holds a lock."""
    tool = tool_get(name)
    missing = tool.missing_scopes(scopes)
    if missing:
        # Not logged, as an unknown tool is not: nothing was read, and the key's holder may not learn more.
        names = ", ".join(f"'{scope}'" for scope in missing)
        raise ApplicationError(f"This API key lacks the {names} scope, which {name} needs.", code="missing_scope",
                               status_code=403)
    started = time.perf_counter()
    row = tool_call_log(tenant=tenant, tool=name, transport=transport,
                        arguments=arguments if isinstance(arguments, dict) else {"_": repr(arguments)[:500]},
                        sources=[], outcome=ToolCall.Outcome.ERROR, error=UNFINISHED, latency_ms=0.0)
    outcome, error, result = ToolCall.Outcome.OK, "", {}
    meter = llm.UsageMeter()
    try:
        args = arguments_validate(tool, arguments)
        with llm.usage_meter() as meter:
            result = tool.function(tenant, args)
        verdict = result.get("verdict")
        if isinstance(verdict, str):
            VERDICTS.labels(name, verdict).inc()
        return result
    except ApplicationError as exc:
        outcome = ToolCall.Outcome.INVALID if exc.status_code == 400 else ToolCall.Outcome.ERROR
        error = exc.message
        raise
    except Exception as exc:
        outcome, error = ToolCall.Outcome.ERROR, f"{type(exc).__name__}: {exc}"
        raise
    finally:
        ToolCall.objects.filter(pk=row.pk).update(
            sources=_sources(result), outcome=outcome, error=error[:2000],
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            world=_text(result.get("world"), 64), verdict=_text(result.get("verdict"), 16),
            llm_tokens=meter.tokens, llm_cost_usd=meter.cost_usd)


def _text(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def tool_call_log(*, tenant: Tenant, tool: str, transport: str, arguments: dict[str, Any], sources: list[str],
                  outcome: str, error: str, latency_ms: float, world: str = "", verdict: str = "",
                  llm_tokens: int = 0, llm_cost_usd: float = 0.0) -> ToolCall:
    if json_value_problem(arguments) is not None:
        # Refused arguments jsonb cannot hold (NUL, unpaired surrogates, 1e400) are kept as their repr.
        arguments = {"_unstorable": repr(arguments)[:2000]}
    return ToolCall.objects.create(tenant=tenant, tool=tool, transport=transport, arguments=arguments,
                                   sources=sources, outcome=outcome, error=error[:2000], latency_ms=latency_ms,
                                   world=world, verdict=verdict, llm_tokens=llm_tokens, llm_cost_usd=llm_cost_usd)


def user_erase(tenant: Tenant, user_id: str) -> dict[str, int]:
    """Eraser (runs inside the kernel's erasure transaction): the logged calls of the memory tools
    made for the user. Their arguments hold what was asked about the user ("what is Masha allergic
    to?") and their sources the user's chunks and facts; the world tools' calls name no user and stay
    for the quality figures."""
    calls, _ = ToolCall.objects.filter(tenant=tenant, arguments__user_id=user_id).delete()
    return {"tool_calls": calls}


def campaign_erase(campaign: Campaign) -> dict[str, int]:
    """Campaign eraser (runs inside `lore.campaigns.services.campaign_delete`'s transaction): the logged
    calls of the campaign tools made for the campaign. Their arguments hold what was asked about its
    story ("who betrayed the party at the bridge?") and their sources its summaries; left behind, a
    campaign created again under the same id would inherit them."""
    calls, _ = ToolCall.objects.filter(tenant_id=campaign.tenant_id, arguments__campaign_id=campaign.slug).delete()
    return {"tool_calls": calls}
