"""The call log of the read-only tools: one row per call, whichever transport (DRF or MCP) made it."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from memoryhub.models import Tenant


class ToolCall(models.Model):
    class Transport(models.TextChoices):
        API = "api"
        MCP_STDIO = "mcp-stdio"
        MCP_HTTP = "mcp-http"

    class Outcome(models.TextChoices):
        OK = "ok"
        INVALID = "invalid"  # arguments refused by the tool's input schema
        ERROR = "error"  # the tool raised (an unknown world, a missing version)

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    tool = models.CharField(max_length=64)
    transport = models.CharField(max_length=16, choices=Transport.choices)
    arguments = models.JSONField(default=dict)
    # What the answer was built from ("srd:Spells/fireball@1.0.0", "chunk:42"), so a wrong answer
    # can be traced to the knowledge that produced it.
    sources = models.JSONField(default=list)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.OK)
    error = models.TextField(blank=True, default="")
    latency_ms = models.FloatField()
    # The world a world tool read (lore_assert, ...), so figures can be given per world.
    world = models.CharField(max_length=64, blank=True, default="")
    # A judging tool's answer (lore_assert: supported / contradicted / unknown): the contradiction rate.
    verdict = models.CharField(max_length=16, blank=True, default="")
    # What the call spent on the LLM (memoryhub.llm.usage_meter); 0 offline.
    llm_tokens = models.PositiveIntegerField(default=0)
    llm_cost_usd = models.FloatField(default=0.0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # The admin's list and a tenant's recent calls, newest first.
            models.Index(fields=["tenant", "-created_at"], name="toolcall_tenant_created"),
            # Per-tool figures (latency, error share) over a period.
            models.Index(fields=["tool", "-created_at"], name="toolcall_tool_created"),
            # A world's quality page: its lore_assert verdicts over a period.
            models.Index(fields=["tenant", "world", "tool", "created_at"], name="toolcall_world_tool_created"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} ({self.outcome}, {self.latency_ms:.0f} ms)"
