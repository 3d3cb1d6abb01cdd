"""The review console for facts: a queue of pending facts, each beside the message it came from and
the key's current value, with approve / reject / edit-and-approve decisions that go through the
services and leave an audit row."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from memoryhub.admin import action_confirmation
from memoryhub.exceptions import ApplicationError
from memoryhub.models import Message
from profiles import selectors, services
from profiles.conf import confidence_threshold
from profiles.models import FactEvent, UserProfile


class StatusFilter(admin.SimpleListFilter):
    """Status, defaulting to the review queue: a reviewer opening the list sees what waits for them."""

    title = "status"
    parameter_name = "status"
    default = UserProfile.Status.PENDING

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("pending", "pending review"), ("active", "active"), ("rejected", "rejected"), ("all", "all")]

    def choices(self, changelist: Any) -> Any:
        current = self.value() or self.default
        for lookup, title in self.lookup_choices:
            yield {
                "selected": current == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request: HttpRequest, queryset: QuerySet[UserProfile]) -> QuerySet[UserProfile]:
        value = self.value() or self.default
        return queryset if value == "all" else queryset.filter(status=value)


class ConfidenceBandFilter(admin.SimpleListFilter):
    title = "confidence"
    parameter_name = "confidence"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        threshold = confidence_threshold()
        return [("low", "low (< 0.5)"), ("medium", f"medium (0.5 – {threshold:g})"),
                ("high", f"high (≥ {threshold:g}, reaches prompts)")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[UserProfile]) -> QuerySet[UserProfile]:
        threshold = confidence_threshold()
        if self.value() == "low":
            return queryset.filter(confidence__lt=0.5)
        if self.value() == "medium":
            return queryset.filter(confidence__gte=0.5, confidence__lt=threshold)
        if self.value() == "high":
            return queryset.filter(confidence__gte=threshold)
        return queryset


class FactReviewForm(forms.ModelForm):
    review_note = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why (kept in the fact's history).",
    )

    class Meta:
        model = UserProfile
        fields = ["value"]

    def clean_value(self) -> str:
        try:
            _, value = services.fact_value_check(key=self.instance.key, value=self.cleaned_data["value"],
                                                 source=UserProfile.Source.ADMIN)
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from None
        return value


class RejectForm(forms.Form):
    reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 60}))


# Decided facts a review action left alone, named in its message (the rest counted).
DECIDED_LISTED = 5


@admin.register(UserProfile)
class UserProfileAdmin(admin.ModelAdmin):
    form = FactReviewForm
    list_display = ["user_id", "key", "value", "current_value_column", "confidence_band", "status", "source",
                    "source_said", "tenant", "updated_at"]
    list_display_links = ["value"]
    list_filter = [StatusFilter, "key", ConfidenceBandFilter, "tenant", "source"]
    list_select_related = ["tenant", "source_message"]
    search_fields = ["user_id", "key", "value"]
    ordering = ["-updated_at"]
    actions = ["approve", "reject", "edit_and_approve", "reopen"]
    readonly_fields = ["tenant", "user_id", "key", "current_value_detail", "confidence", "status", "source",
                       "source_message_detail", "meta", "history", "created_at", "updated_at", "confirmed_at"]
    fieldsets = [
        (None, {"fields": [("tenant", "user_id", "key"), ("value", "current_value_detail"),
                           ("confidence", "status", "source")]}),
        ("Where it came from", {"fields": ["source_message_detail", "meta"]}),
        ("Decision", {"fields": ["review_note"],
                      "description": "Saving approves the value as written here (edit and approve)."}),
        ("History", {"fields": ["history", ("created_at", "updated_at", "confirmed_at")]}),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[UserProfile]:
        return selectors.with_current_value(super().get_queryset(request))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # facts come from users and their apps, through the API and extraction

    def has_delete_permission(self, request: HttpRequest, obj: UserProfile | None = None) -> bool:
        return False  # a wrong fact is rejected (kept, so it is not extracted again); erasure is per user

    def has_change_permission(self, request: HttpRequest, obj: UserProfile | None = None) -> bool:
        # A decided fact's page is read-only: saving it would re-decide it in one stray click.
        # "Reopen for review" puts it back in the queue on purpose.
        if obj is not None and obj.status != UserProfile.Status.PENDING:
            return False
        return super().has_change_permission(request, obj)

    def get_fieldsets(self, request: HttpRequest, obj: UserProfile | None = None) -> list:
        if obj is None or obj.status == UserProfile.Status.PENDING:
            return self.fieldsets
        decided = (f"Decided: {obj.get_status_display()}. To change it, select it in the list and use "
                   "“Reopen for review”; it then waits in the queue like a new proposal.")
        return [(name, {"fields": [], "description": decided}) if name == "Decision" else (name, options)
                for name, options in self.fieldsets]

    # --- columns -----------------------------------------------------------------------------
    @admin.display(description="current value")
    def current_value_column(self, obj: UserProfile) -> str:
        value = getattr(obj, "current_value", None)
        if value is None:
            return "—"
        return f"{value} ({obj.current_confidence:.2f})"

    @admin.display(description="confidence", ordering="confidence")
    def confidence_band(self, obj: UserProfile) -> str:
        return f"{obj.confidence:.2f}"

    @admin.display(description="source message")
    def source_said(self, obj: UserProfile) -> str:
        message = obj.source_message
        return f"{message.role}: {message.text[:120]}" if message else "—"

    # --- change form -------------------------------------------------------------------------
    @admin.display(description="current value of the key")
    def current_value_detail(self, obj: UserProfile) -> str:
        if obj.multi:
            return "multi-valued key: values add up, nothing is replaced"
        value = getattr(obj, "current_value", None)
        if value is None:
            return "none (approving makes this the key's value)"
        # format_html escapes its arguments to strings first, so numbers are formatted beforehand.
        return format_html("<strong>{}</strong> (confidence {}): approving replaces it", value,
                           f"{obj.current_confidence:.2f}")

    @admin.display(description="source message")
    def source_message_detail(self, obj: UserProfile) -> str:
        message = obj.source_message
        if message is None:
            return "—"
        before = list(Message.objects.filter(conversation_id=message.conversation_id, tenant_id=obj.tenant_id,
                                             created_at__lte=message.created_at).exclude(pk=message.pk)
                      .order_by("-created_at", "-id")[:2])[::-1]
        earlier = format_html_join("", "<div style='color:#666'>{}: {}</div>", ((m.role, m.text) for m in before))
        return format_html("{}<div><strong>{}: {}</strong></div><div style='color:#666'>{}</div>", earlier,
                           message.role, message.text, message.created_at.strftime("%Y-%m-%d %H:%M"))

    @admin.display(description="history of this key")
    def history(self, obj: UserProfile) -> str:
        events = FactEvent.objects.filter(tenant_id=obj.tenant_id, user_id=obj.user_id, key=obj.key).order_by(
            "-created_at", "-id")[:20]
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} → {}</td><td>{}</td></tr>",
            ((e.created_at.strftime("%Y-%m-%d %H:%M"), e.action, e.who, e.old_value or "∅", e.new_value or "∅",
              e.reason) for e in events),
        )
        return format_html("<table><tr><th>when</th><th>what</th><th>who</th><th>old → new</th><th>why</th></tr>{}"
                           "</table>", rows)

    def save_model(self, request: HttpRequest, obj: UserProfile, form: forms.ModelForm, change: bool) -> None:
        # The form only validates; the decision is the service's, which re-reads the row under lock.
        result = services.fact_edit_approve(
            fact=obj, reviewer=request.user, value=form.cleaned_data["value"],
            reason=form.cleaned_data.get("review_note") or "edited and approved in the admin",
        )
        obj.pk = result.pk

    # --- actions -----------------------------------------------------------------------------
    def _skipped_decided(self, request: HttpRequest, queryset: QuerySet[UserProfile]) -> None:
        decided = list(queryset.exclude(status=UserProfile.Status.PENDING)[:DECIDED_LISTED + 1])
        if decided:
            # Named, with what they are: "0 fact(s) approved" alone left an editor guessing why.
            shown = "; ".join(f"{f.key} = {f.value} ({f.get_status_display()})" for f in decided[:DECIDED_LISTED])
            more = ", …" if len(decided) > DECIDED_LISTED else ""
            self.message_user(request, f"Already decided, left as they are ({shown}{more}): only pending facts are "
                                       "approved or rejected; reopen a decided one first.", messages.WARNING)

    def _done(self, request: HttpRequest, count: int, verb: str) -> None:
        if count:
            self.message_user(request, f"{count} fact(s) {verb}")

    @admin.action(description="Approve selected facts (pending ones)", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[UserProfile]) -> None:
        count, stale = 0, []
        for fact in queryset.filter(status=UserProfile.Status.PENDING):
            try:
                services.fact_approve(fact=fact, reviewer=request.user, reason="approved in the admin",
                                      refuse_stale=True)
            except ApplicationError as refused:
                if refused.code != "stale":
                    raise
                stale.append(f"{fact.key} = {fact.value} (now {refused.extra['current']['value']})")
                continue
            count += 1
        self._done(request, count, "approved")
        if stale:
            self.message_user(request, f"{len(stale)} fact(s) not approved: the key's value changed since they "
                                       f"were proposed ({'; '.join(stale)}). Open one to correct and approve it, "
                                       "or reject it.", level=messages.WARNING)
        self._skipped_decided(request, queryset)

    @admin.action(description="Reopen for review (decided facts)", permissions=["change"])
    def reopen(self, request: HttpRequest, queryset: QuerySet[UserProfile]) -> None:
        count = 0
        for fact in queryset.exclude(status=UserProfile.Status.PENDING):
            services.fact_reopen(fact=fact, reviewer=request.user, reason="reopened in the admin")
            count += 1
        self.message_user(request, f"{count} fact(s) reopened for review")

    @admin.action(description="Reject selected facts… (pending ones)", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[UserProfile]) -> HttpResponse | None:
        form = RejectForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            reason = form.cleaned_data["reason"] or "rejected in the admin"
            count = 0
            for fact in queryset.filter(status=UserProfile.Status.PENDING):
                services.fact_reject(fact=fact, reviewer=request.user, reason=reason)
                count += 1
            self._done(request, count, "rejected")
            self._skipped_decided(request, queryset)
            return None
        return action_confirmation(self, request, template="admin/profiles/userprofile/reject_confirmation.html",
                                   title="Reject facts", action="reject", objects=queryset, form=form,
                                   submit_label=f"Reject {len(queryset)} fact(s)")

    @admin.action(description="Edit and approve (one fact)", permissions=["change"])
    def edit_and_approve(self, request: HttpRequest, queryset: QuerySet[UserProfile]) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one fact to edit and approve.", messages.WARNING)
            return None
        fact = queryset.get()
        return HttpResponseRedirect(reverse("admin:profiles_userprofile_change", args=[fact.pk]))


@admin.register(FactEvent)
class FactEventAdmin(admin.ModelAdmin):
    """The audit trail: read-only."""

    list_display = ["created_at", "user_id", "key", "action", "who", "change", "reason", "tenant"]
    list_filter = ["action", "actor", "tenant"]
    list_select_related = ["tenant", "reviewer"]
    search_fields = ["user_id", "key", "old_value", "new_value", "reviewer_name"]
    date_hierarchy = "created_at"

    @admin.display(description="old → new")
    def change(self, obj: FactEvent) -> str:
        confidence = ""
        if obj.old_confidence is not None or obj.new_confidence is not None:
            old = "∅" if obj.old_confidence is None else f"{obj.old_confidence:.2f}"
            new = "∅" if obj.new_confidence is None else f"{obj.new_confidence:.2f}"
            confidence = f" [{old} → {new}]"
        return f"{obj.old_value or '∅'} → {obj.new_value or '∅'}{confidence}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: FactEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: FactEvent | None = None) -> bool:
        return False
