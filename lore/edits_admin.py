"""The lore edit queue in the admin: pending counts, a diff of old and new text, approve / reject."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from lore import edits
from lore.edit_models import KnowledgeEdit, KnowledgeEditEvent
from memoryhub.admin import action_confirmation, apply_each
from memoryhub.exceptions import ApplicationError


def _edit_label(edit: KnowledgeEdit) -> str:
    return f"edit {edit.pk}"


class RejectForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), max_length=2000,
                             help_text="Shown to the proposer and kept in the audit trail.")


class ProposeForm(forms.ModelForm):
    class Meta:
        model = KnowledgeEdit
        fields = ["world", "domain", "action", "language", "entry_id", "title", "text", "reason"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors or self.instance.pk:
            return data
        try:
            edits.knowledge_edit_check(world=data["world"], domain=data["domain"], action=data["action"],
                                       language=data.get("language", ""), entry_id=data["entry_id"],
                                       reason=data["reason"], text=data.get("text", ""),
                                       title=data.get("title", ""))
        except ApplicationError as exc:
            field = exc.field if exc.field in self.fields else None
            raise forms.ValidationError({field: exc.message} if field else exc.message) from exc
        return data


class EventInline(admin.TabularInline):
    model = KnowledgeEditEvent
    extra = 0
    can_delete = False
    fields = ["created_at", "action", "actor", "reason", "version"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(KnowledgeEdit)
class KnowledgeEditAdmin(admin.ModelAdmin):
    list_display = ["id", "status", "world", "tenant", "domain", "action", "language", "entry_id", "proposed_by",
                    "created_at", "decided_by", "produced"]
    list_filter = ["status", "domain", "action", "tenant", "world"]
    list_select_related = ["world", "tenant", "produced_version"]
    search_fields = ["entry_id", "title", "reason", "proposed_by"]
    raw_id_fields = ["world"]
    inlines = [EventInline]
    form = ProposeForm
    actions = ["approve", "reject"]
    decided = ["status", "decided_by", "decided_at", "decision_reason", "produced_version", "base_version",
               "old_title", "proposed_by", "created_at", "diff"]

    def get_fields(self, request: HttpRequest, obj: KnowledgeEdit | None = None) -> list[str]:
        proposal = ["world", "domain", "action", "language", "entry_id", "title", "text", "reason"]
        return proposal if obj is None else ["diff", *proposal, *self.decided[:-1]]

    def get_readonly_fields(self, request: HttpRequest, obj: KnowledgeEdit | None = None) -> list[str]:
        if obj is None:
            return []
        # A proposal is what the reviewer decides on: it is not rewritten under review.
        return ["world", "domain", "action", "language", "entry_id", "title", "text", "reason", *self.decided]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: KnowledgeEdit, form: Any, change: bool) -> None:
        if change:
            return  # a proposal is read-only under review; decisions are the actions
        # New edits go through the service, which checks the entry and writes the audit row.
        created = edits.knowledge_edit_propose(
            world=obj.world, domain=obj.domain, action=obj.action, language=obj.language, entry_id=obj.entry_id,
            title=obj.title, text=obj.text, reason=obj.reason, actor=f"admin:{request.user}")
        obj.pk = created.pk

    @admin.display(description="produced")
    def produced(self, obj: KnowledgeEdit) -> str:
        return obj.produced_version.version if obj.produced_version else "-"

    @admin.display(description="diff (before → after)")
    def diff(self, obj: KnowledgeEdit) -> str:
        # HtmlDiff escapes the entry text; the table markup is its own.
        return format_html("<div style='overflow:auto'>{}</div>", mark_safe(edits.edit_diff_html(obj)))

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        counts = (edits.review_pending().values("world__slug", "domain").annotate(n=Count("id"))
                  .order_by("world__slug", "domain"))
        total = sum(row["n"] for row in counts)
        per = ", ".join(f"{row['world__slug']}/{row['domain']}: {row['n']}" for row in counts)
        title = f"Lore edits: {total} pending" + (f" ({per})" if per else "")
        return super().changelist_view(request, {**(extra_context or {}), "title": title})

    @staticmethod
    def _decided_before(queryset: QuerySet[KnowledgeEdit]) -> list[KnowledgeEdit]:
        # Read before the decision: read after, the edits just approved or rejected counted as "already decided".
        return list(queryset.exclude(status=KnowledgeEdit.Status.PENDING).order_by("id")[:6])

    def _skipped_decided(self, request: HttpRequest, decided: list[KnowledgeEdit]) -> None:
        if decided:
            shown = "; ".join(f"{_edit_label(e)} ({e.get_status_display()})" for e in decided[:5])
            self.message_user(request, f"Already decided, left as they are ({shown}{', …' if len(decided) > 5 else ''})"
                                       ": only pending edits are approved or rejected.", messages.WARNING)

    @admin.action(description="Approve (builds the next staged version; publish it separately)", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[KnowledgeEdit]) -> None:
        pending = queryset.filter(status=KnowledgeEdit.Status.PENDING).select_related("world").order_by("id")
        skipped = self._decided_before(queryset)
        approved: list[KnowledgeEdit] = []
        count = apply_each(self, request, pending, _edit_label, lambda edit: approved.append(
            edits.knowledge_edit_approve(edit=edit, actor=f"admin:{request.user}")))
        building = sum(edit.produced_version_id is None for edit in approved)
        # The versions they made, and that they are staged: "1 edit(s) approved" left an editor believing
        # the change was live.
        made = sorted({f"{e.world.slug}/{e.domain} {e.produced_version.version}" for e in approved
                       if e.produced_version_id is not None})
        staged = (f": staged as {', '.join(made)}, not live until published (run the smoke queries, then "
                  "publish, on the world's page or POST …/publish)") if made else ""
        if count:
            self.message_user(request, f"{count} edit(s) approved{staged}" + (
                f"; {building} of them build their version in the background (Knowledge builds: it shows the "
                "progress; an edit whose build fails is pending again)" if building else ""))
        self._skipped_decided(request, skipped)

    @admin.action(description="Reject… (with a reason)", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[KnowledgeEdit]) -> HttpResponse | None:
        form = RejectForm(request.POST if "apply" in request.POST else None)
        pending = queryset.filter(status=KnowledgeEdit.Status.PENDING).select_related("world").order_by("id")
        if "apply" in request.POST and form.is_valid():
            skipped = self._decided_before(queryset)
            count = apply_each(self, request, pending, _edit_label, lambda edit: edits.knowledge_edit_reject(
                edit=edit, actor=f"admin:{request.user}", reason=form.cleaned_data["reason"]))
            if count:
                self.message_user(request, f"{count} edit(s) rejected")
            self._skipped_decided(request, skipped)
            return None
        return action_confirmation(self, request, template="admin/lore/knowledgeedit/reject_confirmation.html",
                                   title="Reject lore edits", action="reject", objects=pending, form=form,
                                   submit_label=f"Reject {len(pending)} edit(s)")
