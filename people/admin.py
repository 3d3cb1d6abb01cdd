"""The people review console: people with their circles and mentions, the merge-proposal queue with
both profiles side by side, merges that can be undone, and the audit trail. Every decision goes
through a service, which writes the audit row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from memoryhub.exceptions import ApplicationError
from people import selectors, services
from people.dedup import merged_display_name
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonMention, PersonMerge, PersonRelation

MENTIONS_SHOWN = 20
# A value of the merged person shown in full would be a wall of text (a bio, the search terms).
CHANGE_SHOWN_CHARS = 300


class MentionCountFilter(admin.SimpleListFilter):
    title = "mentions"
    parameter_name = "mentions"
    BUCKETS = {"1": (1, 1), "2-9": (2, 9), "10-99": (10, 99), "100+": (100, None)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(key, key) for key in self.BUCKETS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        bucket = self.BUCKETS.get(self.value() or "")
        if bucket is None:
            return queryset
        low, high = bucket
        queryset = queryset.filter(mention_count__gte=low)
        return queryset.filter(mention_count__lte=high) if high is not None else queryset


class InnerCircleFilter(admin.SimpleListFilter):
    title = "context"
    parameter_name = "context"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("inner", "inner circle (always in context)"), ("relevant", "relevant people (reranked)")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "inner":
            return queryset.filter(circle__in=Person.INNER_CIRCLES)
        if self.value() == "relevant":
            return queryset.exclude(circle__in=Person.INNER_CIRCLES)
        return queryset


class RelationInline(admin.TabularInline):
    model = PersonRelation
    fk_name = "subject"
    extra = 0
    fields = ["kind", "object", "label", "created_at"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Person)
class PersonAdmin(admin.ModelAdmin):
    list_display = ["display_name", "username", "circle", "mention_count", "last_seen", "user_id", "status", "tenant"]
    list_filter = ["circle", MentionCountFilter, InnerCircleFilter, "status", "circle_locked", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["display_name", "name_key", "username", "user_id"]
    raw_id_fields = ["merged_into"]
    # Editable here: display name, aliases, circle, bio; saved through people.services.person_update.
    fields = ["tenant", "user_id", "display_name", "aliases", "username", "telegram_id", "circle", "circle_locked",
              "bio", "mention_count", "first_seen", "last_seen", "status", "merged_into", "relations_summary",
              "mentions_detail"]
    readonly_fields = ["tenant", "user_id", "username", "telegram_id", "circle_locked", "mention_count",
                       "first_seen", "last_seen", "status", "merged_into", "relations_summary", "mentions_detail"]
    inlines = [RelationInline]
    actions = ["propose_merge"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Person]:
        return super().get_queryset(request).defer("embedding", "name_terms", "search_terms")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # people come from conversations

    @admin.display(description="relations")
    def relations_summary(self, obj: Person) -> str:
        rels = selectors.person_relations(person=obj) if obj.pk else []
        return "; ".join(f"{r['kind']} ({r['direction']}) {r['display_name']}" for r in rels) or "—"

    @admin.display(description="mentioned in (newest first)")
    def mentions_detail(self, obj: Person) -> str:
        """The evidence an editor decides on: the messages that mention this person."""
        mentions = (PersonMention.objects.filter(person=obj).select_related("message", "message__conversation")
                    .order_by("-message__created_at")[:MENTIONS_SHOWN]) if obj.pk else []
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((m.message.created_at.strftime("%Y-%m-%d %H:%M"), m.message.conversation.session_id, m.message.role,
              m.message.text[:300]) for m in mentions))
        if not rows:
            return "—"
        return format_html("<table><tr><th>when</th><th>session</th><th>who</th><th>message</th></tr>{}</table>",
                           rows)

    @admin.action(description="Propose merging the two selected people (fewer mentions into more)",
                  permissions=["change"])
    def propose_merge(self, request: HttpRequest, queryset: QuerySet[Person]) -> None:
        people = list(queryset.order_by("mention_count", "id"))
        if len(people) != 2 or people[0].user_id != people[1].user_id or people[0].tenant_id != people[1].tenant_id:
            self.message_user(request, "Select exactly two people of the same user.", messages.WARNING)
            return
        source, target = people
        with transaction.atomic():
            proposal = services.merge_proposal_create(
                source=source, target=target, rule="manual", score=1.0, origin=MergeProposal.Origin.EDIT,
                evidence=[{"rule": "manual", "reason": f"proposed in the admin by {request.user}"}])
        if proposal is None:
            self.message_user(request, f"No proposal: {source} and {target} were already judged different, or one "
                                       "is merged.", messages.WARNING)
            return
        url = reverse("admin:people_mergeproposal_change", args=[proposal.pk])
        self.message_user(request, format_html('Merge proposal <a href="{}">#{}</a>: {} into {}, waiting for review.',
                                               url, proposal.pk, source, target))

    def save_model(self, request: HttpRequest, obj: Person, form: Any, change: bool) -> None:
        data = {name: form.cleaned_data[name] for name in ("display_name", "aliases", "bio", "circle")
                if name in form.changed_data}
        if data:
            pair = Q(source=obj) | Q(target=obj)
            before = set(MergeProposal.objects.filter(pair, status=MergeProposal.Status.PENDING)
                         .values_list("pk", flat=True))
            try:
                services.person_update(person=obj, actor=request.user, actor_label=f"admin:{request.user}", **data)
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
                return
            # A renamed person may now look like someone else: say so where the editor looks.
            for proposal in (MergeProposal.objects.filter(pair, status=MergeProposal.Status.PENDING)
                             .exclude(pk__in=before).select_related("source", "target")):
                url = reverse("admin:people_mergeproposal_change", args=[proposal.pk])
                self.message_user(request, format_html(
                    'The change opened merge proposal <a href="{}">#{}</a>: {} into {}.', url, proposal.pk,
                    proposal.source, proposal.target), messages.WARNING)

    # Deleting goes through the service as the API's DELETE does: Django's own cascade left the people
    # merged into the person as tombstones with no survivor, and wrote no audit row.
    def delete_model(self, request: HttpRequest, obj: Person) -> None:
        services.person_delete(person=obj, actor=request.user, actor_label=f"admin:{request.user}")

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, set[str], Any]:
        # The merges, proposals and audit rows a person takes with them are deleted by the service, not by
        # the editor's hand: their own pages allow no delete, which Django would read as a missing permission.
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Person]) -> None:
        for person in queryset.filter(status=Person.Status.ACTIVE).order_by("pk"):
            try:
                services.person_delete(person=person, actor=request.user, actor_label=f"admin:{request.user}")
            except ApplicationError:
                continue  # deleted or merged by another request since the page was shown
        # A tombstone selected on its own is deleted with the person it was merged into, not alone.


def _profile(person: Person) -> dict[str, Any]:
    return {
        "id": person.pk, "display_name": person.display_name, "aliases": ", ".join(person.aliases) or "—",
        "username": f"@{person.username}" if person.username else "—", "telegram_id": person.telegram_id or "—",
        "circle": person.circle, "bio": person.bio, "mention_count": person.mention_count,
        "first_seen": person.first_seen, "last_seen": person.last_seen, "status": person.status,
        "relations": selectors.person_relations(person=person),
    }


class UndoAnywayForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), max_length=2000, required=False,
                             help_text="Optional; kept in the audit trail beside the changes the undo discards.")


def _shown(value: Any) -> str:
    text = "—" if value in (None, "", []) else ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= CHANGE_SHOWN_CHARS else text[:CHANGE_SHOWN_CHARS] + "…"


def _changes_since(merge: PersonMerge, fields: Sequence[str]) -> list[tuple[str, str, str]]:
    """(field, at the merge, now) for what the service named as changed: what forcing would discard."""
    now = services.snapshot(Person.objects.get(pk=merge.target_id))
    return [(name, _shown(merge.target_after.get(name)), _shown(now.get(name))) for name in fields]


class _ReviewActions:
    """Approve / reject / undo as admin actions that call the services and report a count."""

    # The changelist URL name the undo confirmation posts back to (its action runs the forced undo).
    changelist_url_name = ""

    def _run(self, request: HttpRequest, items: Any, fn: Any, verb: str) -> None:
        done, failed = 0, []
        for item in items:
            try:
                fn(item)
                done += 1
            except ApplicationError as exc:
                failed.append(f"#{item.pk}: {exc.message}")
        self.message_user(request, f"{done} {verb}")  # type: ignore[attr-defined]
        if failed:
            self.message_user(request, "Not done: " + "; ".join(failed), messages.WARNING)  # type: ignore[attr-defined]

    def _undo(self, request: HttpRequest, items: Sequence[Any], merge_of: Callable[[Any], PersonMerge | None],
              undo: Callable[..., Any], done_text: str = "") -> HttpResponse | None:
        """Undo each selected merge (`done_text`: what a proposal's own button says when it undid it). One
        refused only because the merged person changed since (mentioned
        again, edited) is listed on a confirmation page with what changed; confirming undoes it anyway,
        the review API's `force`: the service discards those changes and its audit row keeps them."""
        form = UndoAnywayForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            reason = form.cleaned_data["reason"]
            self._run(request, items, lambda item: undo(item, force=True, reason=reason), "merge(s) undone")
            return None
        done, failed, changed = 0, [], []
        for item in items:
            try:
                undo(item, force=False, reason="")
                done += 1
            except ApplicationError as exc:
                merge = merge_of(item)
                if exc.code == "changed_since_merge" and merge is not None:
                    changed.append((item, _changes_since(merge, exc.extra.get("changed", []))))
                else:
                    failed.append(f"#{item.pk}: {exc.message}")
        if done or not changed:
            self.message_user(request, done_text if done_text and done == 1 and not failed  # type: ignore[attr-defined]
                              else f"{done} merge(s) undone")
        if failed:
            self.message_user(request, "Not done: " + "; ".join(failed), messages.WARNING)  # type: ignore[attr-defined]
        if not changed:
            return None
        model_admin: admin.ModelAdmin = self  # type: ignore[assignment]
        context = {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta,
                   "title": "Undo merges the merged person changed since", "changed": changed, "form": form,
                   "objects": [item for item, _ in changed], "action": "undo",
                   "submit_label": "Undo anyway, discarding these changes",
                   "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                   "form_url": reverse(self.changelist_url_name)}
        return TemplateResponse(request, "admin/people/undo_anyway_confirmation.html", context)


@admin.register(MergeProposal)
class MergeProposalAdmin(_ReviewActions, admin.ModelAdmin):
    change_form_template = "admin/people/mergeproposal/change_form.html"
    list_display = ["id", "source", "target", "kept_as", "rule", "score", "origin", "status", "user_id", "created_at"]
    list_filter = ["status", "rule", "origin", "tenant"]
    list_select_related = ["source", "target", "tenant"]

    @admin.display(description="kept as")
    def kept_as(self, obj: MergeProposal) -> str:
        # The merge keeps the fuller name ("Hannah Miller" into "Hannah" stays "Hannah Miller").
        return merged_display_name(obj.source, obj.target)
    search_fields = ["source__display_name", "target__display_name", "user_id"]
    raw_id_fields = ["source", "target", "merge"]
    # The evidence is shown once, by the template beside both profiles, not again as a raw field.
    fields = ["tenant", "user_id", "source", "target", "rule", "score", "origin", "status", "merge", "created_at",
              "decided_at", "decided_by"]
    readonly_fields = fields
    actions = ["approve", "reject", "undo"]
    changelist_url_name = "admin:people_mergeproposal_changelist"

    def get_queryset(self, request: HttpRequest) -> QuerySet[MergeProposal]:
        return (super().get_queryset(request).select_related("source", "target", "tenant")
                .defer("source__embedding", "target__embedding"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a decision's record; rejecting is how a proposal goes

    @admin.action(description="Approve: merge the source into the target", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[MergeProposal]) -> None:
        self._run(request, queryset, lambda p: services.merge_proposal_approve(proposal=p, reviewer=request.user),
                  "proposal(s) approved and merged")

    @admin.action(description="Reject: they are different people", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[MergeProposal]) -> None:
        self._run(request, queryset, lambda p: services.merge_proposal_reject(proposal=p, reviewer=request.user),
                  "proposal(s) rejected")

    @admin.action(description="Undo the merge of approved proposals", permissions=["change"])
    def undo(self, request: HttpRequest, queryset: QuerySet[MergeProposal]) -> HttpResponse | None:
        return self._undo(request, list(queryset.select_related("merge")), lambda p: p.merge,
                          self._proposal_undo(request))

    @staticmethod
    def _proposal_undo(request: HttpRequest) -> Callable[..., Any]:
        return lambda p, *, force, reason: services.merge_proposal_undo(proposal=p, reviewer=request.user,
                                                                        force=force, reason=reason)

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        proposal = context.get("original")
        if proposal is not None:
            context["profiles"] = [("Source (merged away)", _profile(proposal.source)),
                                   ("Target (kept)", _profile(proposal.target))]
            context["profile_rows"] = ["display_name", "aliases", "username", "telegram_id", "circle", "bio",
                                       "mention_count", "first_seen", "last_seen", "status"]
        return super().render_change_form(request, context, *args, **kwargs)

    def response_change(self, request: HttpRequest, obj: MergeProposal) -> HttpResponse:
        if "_undo" in request.POST:
            # As the action: a merge whose person changed since asks before discarding that.
            return (self._undo(request, [obj], lambda p: p.merge, self._proposal_undo(request),
                               done_text=f"Proposal #{obj.pk} undone.")
                    or HttpResponseRedirect(request.path))
        for button, fn, verb in (
            ("_approve", services.merge_proposal_approve, "approved and merged"),
            ("_reject", services.merge_proposal_reject, "rejected"),
        ):
            if button in request.POST:
                try:
                    fn(proposal=obj, reviewer=request.user)
                    self.message_user(request, f"Proposal #{obj.pk} {verb}.")
                except ApplicationError as exc:
                    self.message_user(request, exc.message, messages.ERROR)
                return HttpResponseRedirect(request.path)
        return super().response_change(request, obj)


@admin.register(PersonMerge)
class PersonMergeAdmin(_ReviewActions, admin.ModelAdmin):
    list_display = ["id", "source", "target", "rule", "reviewer", "created_at", "undone_at"]
    list_filter = ["rule", ("undone_at", admin.EmptyFieldListFilter), "tenant"]
    list_select_related = ["source", "target", "reviewer"]
    raw_id_fields = ["source", "target"]
    readonly_fields = ["tenant", "user_id", "source", "target", "rule", "reviewer", "source_before", "target_before",
                       "target_after", "moved", "created_at", "undone_at", "undone_by"]
    actions = ["undo"]
    changelist_url_name = "admin:people_personmerge_changelist"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # what an undo restores from

    @admin.action(description="Undo: restore both people as they were", permissions=["change"])
    def undo(self, request: HttpRequest, queryset: QuerySet[PersonMerge]) -> HttpResponse | None:
        return self._undo(request, list(queryset), lambda m: m, lambda m, *, force, reason: services.person_merge_undo(
            merge=m, reviewer=request.user, force=force, reason=reason))


@admin.register(PeopleAuditEntry)
class PeopleAuditEntryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "action", "actor_label", "person", "user_id", "tenant"]
    list_filter = ["action", "tenant"]
    list_select_related = ["person", "tenant"]
    search_fields = ["actor_label", "user_id", "person__display_name"]
    readonly_fields = ["tenant", "user_id", "action", "actor", "actor_label", "person", "proposal", "merge",
                       "details", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the audit trail is not edited, not even by deletion
