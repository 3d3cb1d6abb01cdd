"""Lore API: worlds, source upload (a new staged version), knowledge search, smoke, publish, rollback."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lore import builds, selectors, services, smoke
from lore.models import Alias, Domain, KnowledgeBuild, KnowledgeChange, KnowledgeVersion
from lore.normalize import PRESETS, SourceOptions
from lore.services import LANGUAGES, SEMVER_PATTERN, SLUG_PATTERN
from memoryhub.auth import request_actor, request_tenant
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import ApiKey
from memoryhub.validation import (
    ClosedSerializerMixin,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictFloatField,
    StrictIntegerField,
    StrictRegexField,
    VisibleCharField,
)

# Past `_MAX_LISTED_CHOICES` a choice error points to the schema; a language's lists the codes itself,
# so a client that sent "xx" or "eng" reads what it may send.
LANGUAGE_ERRORS = {"invalid_choice": f'"{{input}}" is not an ISO 639 code Django knows '
                                     f"(django.conf.locale.LANG_INFO); allowed: {', '.join(LANGUAGES)}."}
EDITOR = (ApiKey.Scope.EDITOR,)
READERS = (ApiKey.Scope.TOOLS, ApiKey.Scope.ENGINE, ApiKey.Scope.EDITOR)

ERRORS = {
    400: OpenApiResponse(description="Invalid input; `error.fields` names the field (and for a source the "
                                     "file and JSON path or line)."),
    401: OpenApiResponse(description="No or invalid API key."),
    403: OpenApiResponse(description="The key lacks the scope this operation needs (named in the message)."),
    404: OpenApiResponse(description="Unknown world, alias or version (another tenant's world is unknown)."),
}


# The refusal of a version the retention policy pruned (lore.pruning), wherever one is named.
PRUNED_TEXT = ("the version was pruned by the retention policy (`error.code` version_pruned; `error.fields` names "
               "`version` where the request names it; `error.version`, `error.pruned_at`, and in `error.reindex` "
               "the `manage.py lore_reindex WORLD DOMAIN VERSION` that rebuilds it as a new staged version)")


def _actor(request: Request) -> str:
    return request_actor(request)


class VersionSerializer(serializers.ModelSerializer):
    sources = serializers.SerializerMethodField()
    aliases = serializers.SerializerMethodField()

    class Meta:
        model = KnowledgeVersion
        fields = ["domain", "version", "status", "namespace", "entry_count", "chunk_count", "reused_chunks",
                  "sources", "aliases", "smoke", "created_by", "created_at", "pruned_at",
                  "pruned_by"]
        extra_kwargs = {
            "status": {"help_text": "staged, live, retired, or pruned: its chunks were deleted by the retention "
                                    "policy (LORE_KEEP_VERSIONS, LORE_PRUNE_MIN_AGE_HOURS) and it can no longer be "
                                    "searched, smoked or published; its sources and edits are kept, and "
                                    "`manage.py lore_reindex WORLD DOMAIN VERSION` rebuilds it as a new staged "
                                    "version. `chunk_count` stays what it held."},
            "pruned_at": {"help_text": "When it was pruned; null for a version that holds its chunks."},
            "pruned_by": {"help_text": "Who pruned it: `the daily retention job`, `manage.py lore_prune`, or an "
                                       "editor in the admin with their reason; empty while it holds its chunks."},
        }

    def get_sources(self, obj: KnowledgeVersion) -> list[str]:
        return [f"{s.language}/{s.filename}" for s in obj.sources.all()]

    def get_aliases(self, obj: KnowledgeVersion) -> list[str]:
        return [a.name for a in obj.aliases.all()]


class ChangeSerializer(serializers.ModelSerializer):
    from_version = serializers.CharField(source="from_version.version", allow_null=True, default=None)
    to_version = serializers.CharField(source="to_version.version")
    edits_left_out = serializers.SerializerMethodField(
        help_text="Ids of approved lore edits that the version live before holds and this one does not (a "
                  "rollback, or a publish of a version built before them): no longer live, though approved. "
                  "Propose them again, or publish a version that holds them.")

    class Meta:
        model = KnowledgeChange
        fields = ["domain", "action", "from_version", "to_version", "actor", "reason", "smoke", "took_ms",
                  "share", "edits_left_out", "created_at"]
        extra_kwargs = {
            "action": {"help_text": "publish, forced_publish, rollback; canary (started, or its share changed: "
                                    "`to_version` serves `share` of `from_version`'s `latest` searches) and "
                                    "canary_end (stopped, or ended by a publish or rollback)."},
            "share": {"help_text": "A canary's share of `latest` searches; null for a publish or rollback."},
        }

    def get_edits_left_out(self, change: KnowledgeChange) -> list[int]:
        if change.from_version is None or change.action in (KnowledgeChange.Action.CANARY,
                                                            KnowledgeChange.Action.CANARY_END):
            return []
        kept = set(change.to_version.edits)
        return [pk for pk in change.from_version.edits if pk not in kept]


class BuildSerializer(serializers.ModelSerializer):
    """A background build of an upload."""

    world = serializers.CharField(source="world.slug")
    version = serializers.CharField(source="version.version", allow_null=True, default=None,
                                    help_text="The version it made, once `done` (staged: smoke and publish as "
                                              "after a 201).")
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = KnowledgeBuild
        fields = ["id", "world", "domain", "status", "step", "chunks_done", "chunks_total", "version",
                  "requested_version",
                  "error", "error_code", "error_field", "attempts", "next_attempt_at", "created_by", "created_at",
                  "started_at", "finished_at", "status_url"]
        extra_kwargs = {
            "status": {"help_text": "pending (waiting for a worker, or for a retry after `error`), building, done, "
                                    "or failed (the input was refused: `error`, `error_field`; send it again fixed)."},
            "step": {"help_text": "While building: waiting (for the domain's other build), embedding, writing (one "
                                  "insert of every chunk; long for a large version)."},
            "chunks_done": {"help_text": "Chunks with their vectors so far, of `chunks_total` (known once building)."},
            "attempts": {"help_text": "Failed runs in a row (e.g. the embedding endpoint away); tried again at "
                                      "`next_attempt_at`."},
        }

    def get_status_url(self, build: KnowledgeBuild) -> str:
        return build_status_url(build)


def build_status_url(build: KnowledgeBuild) -> str:
    return f"/api/v1/worlds/{build.world.slug}/builds/{build.pk}"


class WorldCreateApi(APIView):
    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        slug = StrictRegexField(SLUG_PATTERN, help_text="Lowercase letters, digits and hyphens.")
        name = StrictCharField(max_length=200, required=False, default="", allow_blank=True)
        languages = serializers.ListField(
            child=StrictChoiceField(choices=LANGUAGES, error_messages=LANGUAGE_ERRORS), min_length=1,
            default=["en"], help_text="ISO 639 codes (those Django knows); the first is a source's default.")

    class OutputSerializer(serializers.Serializer):
        slug = serializers.CharField()
        name = serializers.CharField()
        languages = serializers.ListField(child=serializers.CharField())

    @extend_schema(operation_id="world_create", request=InputSerializer,
                   responses={201: OutputSerializer, 409: OpenApiResponse(description="The slug is taken."), **ERRORS},
                   examples=[OpenApiExample("A world", request_only=True,
                                            value={"slug": "dnd5e", "name": "D&D 5e", "languages": ["en", "ru"]})])
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        world = services.world_create(tenant=request_tenant(request), **serializer.validated_data)
        return Response(self.OutputSerializer(world).data, status=status.HTTP_201_CREATED)


class WorldVersionsApi(APIView):
    required_scopes = READERS

    class OutputSerializer(serializers.Serializer):
        world = serializers.CharField()
        languages = serializers.ListField(child=serializers.CharField())
        versions = VersionSerializer(many=True)
        changes = ChangeSerializer(many=True)

    @extend_schema(operation_id="world_versions", responses={200: OutputSerializer, **ERRORS})
    def get(self, request: Request, world: str) -> Response:
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        versions = found.versions.order_by("domain", "-id").prefetch_related("sources", "aliases")
        changes = found.changes.order_by("-id").select_related("from_version", "to_version")[:50]
        return Response(self.OutputSerializer({"world": found.slug, "languages": found.languages,
                                               "versions": versions, "changes": changes}).data)


class SourceUploadApi(APIView):
    """Upload source files; they become a new staged version (aliased `stage`) of the domain."""

    required_scopes = (ApiKey.Scope.EDITOR, ApiKey.Scope.ENGINE)
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        files = serializers.ListField(child=serializers.FileField(), min_length=1,
                                      help_text="JSON (an array of entries) or Markdown (.md) files.")
        domain = serializers.ChoiceField(choices=Domain.choices)
        language = serializers.ChoiceField(choices=LANGUAGES, error_messages=LANGUAGE_ERRORS, required=False,
                                           default="", allow_blank=True,
                                           help_text="Language of the files, one of the world's (another is a "
                                                     "400 naming `language`). Without it, in a world of several "
                                                     "languages each entry is labelled with the one its text is "
                                                     "written in (by its script: Han, Cyrillic, else Latin); in "
                                                     "a world of one, that one.")
        preset = serializers.ChoiceField(choices=PRESETS, default=PRESETS[0])
        id_field = serializers.CharField(max_length=64, default="index")
        title_field = serializers.CharField(max_length=64, default="name")
        text_fields = serializers.CharField(required=False, default="",
                                            help_text="Comma-separated fields holding the text (JSON); default: all.")
        id_prefix = serializers.CharField(max_length=64, required=False, default="",
                                          help_text="Entry ids are '<prefix>/<id>'; default: the file name.")
        entry_level = serializers.IntegerField(min_value=1, max_value=6, default=2,
                                               help_text="Markdown: headings down to this level start an entry.")
        version = serializers.RegexField(SEMVER_PATTERN, max_length=32, required=False,
                                         help_text="SemVer (MAJOR.MINOR.PATCH) above the newest of the domain "
                                                   "(409 otherwise); default: next minor.")
        replace_all = serializers.BooleanField(default=False,
                                               help_text="Build only from these files, not also from the "
                                                         "previous version's other sources.")
        background = serializers.BooleanField(
            required=False, allow_null=True, default=None,
            help_text="Build in the background: 202 with a build to poll (`status_url`) instead of 201 with the "
                      "version. Default: when the files together exceed LORE_BACKGROUND_BYTES (1 MiB), the version "
                      "carried forward holds over LORE_BACKGROUND_CHUNKS (10,000) chunks, or another build of the "
                      "domain runs past LORE_BUILD_WAIT_SECONDS. `false`: always within the request (409 "
                      "`world_busy` if it cannot start).")

    @extend_schema(operation_id="world_sources_upload", request={"multipart/form-data": InputSerializer},
                   responses={201: VersionSerializer, 202: BuildSerializer, 409: OpenApiResponse(
                       description="The version exists or is not above the newest (`version_not_newer`), or other "
                                   "uploads kept moving `stage` while this one was built (`stage_moved`: send again)."),
                              **ERRORS})
    def post(self, request: Request, world: str) -> Response:
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        uploads = []
        for upload in data["files"]:
            if upload.size > settings.LORE_MAX_UPLOAD_BYTES:
                raise ApplicationError(f"{upload.name}: larger than {settings.LORE_MAX_UPLOAD_BYTES} bytes.",
                                       field="files")
            uploads.append(services.UploadedFile(upload.name, upload.read(), data["language"]))
        options = SourceOptions(
            preset=data["preset"], id_field=data["id_field"], title_field=data["title_field"],
            text_fields=tuple(f.strip() for f in data["text_fields"].split(",") if f.strip()),
            id_prefix=data["id_prefix"], entry_level=data["entry_level"],
        )
        background = data["background"]
        if background is None:
            background = builds.large_build(world=found, domain=data["domain"], replace_all=data["replace_all"],
                                            upload_bytes=sum(len(u.content) for u in uploads))
        args = {"world": found, "domain": data["domain"], "files": uploads, "options": options,
                "actor": _actor(request), "version": data.get("version"), "replace_all": data["replace_all"]}
        if not background:
            try:
                version = services.knowledge_ingest(**args, wait=settings.LORE_BUILD_WAIT_SECONDS)
            except ApplicationError as exc:
                if exc.code != "world_busy" or data["background"] is False:
                    raise
                # Another build of the domain holds it: this one queues behind it instead of a 409.
            else:
                return Response(VersionSerializer(version).data, status=status.HTTP_201_CREATED)
        build = builds.knowledge_build_create(**args)
        build.refresh_from_db()  # an in-process task may have built it already
        return Response(BuildSerializer(build).data, status=status.HTTP_202_ACCEPTED,
                        headers={"Location": build_status_url(build)})


class BuildDetailApi(APIView):
    """A background build's progress and outcome: what a client polls after a 202 from an upload."""

    required_scopes = (ApiKey.Scope.EDITOR, ApiKey.Scope.ENGINE)

    @extend_schema(operation_id="world_build_get", responses={200: BuildSerializer, **ERRORS})
    def get(self, request: Request, world: str, build_id: str) -> Response:
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        build = KnowledgeBuild.objects.filter(world=found, pk=int(build_id)).select_related("world", "version").first()
        if build is None:
            raise ApplicationError(f"World {world!r} has no build {build_id}.", code="not_found", field="build_id",
                                   status_code=404)
        return Response(BuildSerializer(build).data)


class KnowledgeFiltersSerializer(ClosedSerializerMixin, serializers.Serializer):
    """Filters of a knowledge search; an unknown filter is refused."""

    languages = serializers.ListField(child=StrictChoiceField(choices=LANGUAGES, error_messages=LANGUAGE_ERRORS),
                                      required=False, default=list)
    categories = serializers.ListField(child=StrictCharField(max_length=64), required=False,
                                       default=list, help_text='Entry id prefixes, e.g. ["Spells"].')


class KnowledgeSkippedStepSerializer(serializers.Serializer):
    step = serializers.ChoiceField(choices=["vector", "rerank"])
    reason = serializers.ChoiceField(choices=["embedder_unavailable", "reindex_needed", "llm_off", "llm_failed",
                                              "not_applicable"])


class KnowledgeSearchApi(APIView):
    required_scopes = READERS

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        mutually_exclusive = ("alias", "version")  # the schema says so too (memoryhub.openapi.AutoSchema)

        query = VisibleCharField(max_length=2000)
        domains = serializers.ListField(child=StrictChoiceField(choices=Domain.choices), min_length=1,
                                        default=["srd"], help_text="Default: srd alone; name lore for a "
                                                                   "world's own notes.")
        k = StrictIntegerField(min_value=1, max_value=50, required=False)
        alias = StrictChoiceField(choices=Alias.Name.choices, required=False)
        version = StrictRegexField(SEMVER_PATTERN, required=False)
        filters = KnowledgeFiltersSerializer(required=False, help_text="Unknown filters are refused.")
        session = StrictCharField(
            max_length=200, required=False,
            help_text="The caller's key (a player's session, a party): while a domain runs a canary (`PUT "
                      "…/domains/{domain}/canary`), a `latest` search with the same key is always served by the same "
                      "version; without one each search is drawn afresh.")
        rerank = StrictBooleanField(
            required=False, allow_null=True, default=None,
            help_text="LLM rerank of the fused top candidates (config/knowledge.yaml `rerank.candidates`, 12–20): "
                      "true or false overrides the domains' `rerank.enabled` (default: off). It needs an LLM "
                      "(LLM_PROVIDER); without one, or when the model fails, the fused order stands and "
                      "`skipped_steps` says why.")

        def validate(self, attrs: dict) -> dict:
            if "alias" in attrs and "version" in attrs:
                raise serializers.ValidationError({"version": ["Give an alias or a version, not both."]})
            attrs.setdefault("filters", {"languages": [], "categories": []})
            return attrs

    class HitSerializer(serializers.Serializer):
        entry_id = serializers.CharField()
        title = serializers.CharField()
        heading_path = serializers.ListField(child=serializers.CharField())
        language = serializers.CharField()
        domain = serializers.CharField()
        version = serializers.CharField()
        text = serializers.CharField()
        score = serializers.FloatField(help_text="RRF score.")
        components = serializers.DictField(child=serializers.FloatField(),
                                           help_text="bm25, vector (cosine), title, name; rerank (the LLM's 0–10) "
                                                     "when it re-ordered the top.")
        ranks = serializers.DictField(child=serializers.IntegerField(), help_text="1-based rank per component.")

    class OutputSerializer(serializers.Serializer):
        query = serializers.CharField()
        versions = serializers.DictField(child=serializers.CharField(), help_text="Version searched per domain.")
        canary = serializers.BooleanField(help_text="Whether a domain's canary served this `latest` search: its "
                                                    "staged version is in `versions` and each item's `version`.")
        took_ms = serializers.FloatField()
        items = serializers.ListField(child=serializers.DictField())
        llm_steps = serializers.ListField(child=serializers.CharField(),
                                         help_text='LLM steps that ran: ["rerank"] when the model re-ordered the top.')
        skipped_steps = KnowledgeSkippedStepSerializer(
            many=True, help_text="Present when the vectors took no part and the knowledge was searched by words "
                                 "and titles alone: `embedder_unavailable` (a remote embedder away), `reindex_needed` "
                                 "(a version built by another embedder than the configured one: `manage.py "
                                 "lore_reindex WORLD DOMAIN` builds one with it); and when a rerank asked for (by "
                                 "the request or the domain's setting) did not run: `llm_off` (LLM_PROVIDER=off), "
                                 "`llm_failed` (the model was slow, refused or answered nonsense: the fused order "
                                 "stands), `not_applicable` (no hits).", required=False)

    @extend_schema(operation_id="world_search", request=InputSerializer,
                   responses={200: OutputSerializer,
                              409: OpenApiResponse(description=f"A `version` was asked for and {PRUNED_TEXT}."),
                              **ERRORS},
                   examples=[OpenApiExample("Rules question", request_only=True,
                                            value={"query": "how far does a fireball reach?", "domains": ["srd"],
                                                   "k": 5})])
    def post(self, request: Request, world: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        tenant_id = request_tenant(request).pk
        targets = selectors.targets_resolve(tenant_id=tenant_id, world_slug=world,
                                            domains=list(dict.fromkeys(data["domains"])),
                                            alias=data.get("alias"), version=data.get("version"),
                                            canary_key=data.get("session"))
        filters = selectors.KnowledgeFilters(languages=tuple(data["filters"]["languages"]),
                                             categories=tuple(data["filters"]["categories"]))
        result = selectors.knowledge_search(tenant_id=tenant_id, targets=targets, query=data["query"],
                                            k=data.get("k"), filters=filters, rerank=data["rerank"])
        items = [self.HitSerializer(hit).data for hit in result.hits]
        body = {"query": data["query"], "versions": result.versions, "canary": any(t.canary for t in targets),
                "took_ms": result.took_ms, "items": items, "llm_steps": result.llm_steps}
        if result.skipped_steps:
            body["skipped_steps"] = result.skipped_steps
        return Response(body)


def _version(request: Request, world: str, domain: str, number: str) -> KnowledgeVersion:
    found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
    version = KnowledgeVersion.objects.filter(world=found, domain=domain, version=number).select_related(
        "world").first()
    if version is None:
        raise NotFound(f"World {world!r} has no {domain} version {number!r}.")
    return version


class VersionSmokeApi(APIView):
    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        split = StrictChoiceField(choices=["test", "tune", "all"], default="test")

    @extend_schema(operation_id="world_version_smoke", request=InputSerializer,
                   responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
                       "The figures recorded on the version (what the publish gate reads): `by_language` and "
                       "`overall` hit@1/5/10 and MRR, `golden` (where the queries came from), `split`, and `misses`, "
                       "the queries not answered in the top 5: `id`, `language`, `rank` (null: not in the top 10), "
                       "`top` (the first 3 entry ids found) and `missing`, the expected entry ids this version does "
                       "not hold (not empty: the golden set names an entry no source of the version has, most often "
                       "a wrong id; a publish refused for the figures names them too).")),
                              409: OpenApiResponse(description=f"No golden queries (`error.code` no_golden), or "
                                                               f"{PRUNED_TEXT}."),
                              **ERRORS})
    def post(self, request: Request, world: str, domain: str, version: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        split = serializer.validated_data["split"]
        found = _version(request, world, domain, version)
        result = smoke.version_smoke(version=found, split=None if split == "all" else split)
        return Response(result)


class GoldenQuerySerializer(ClosedSerializerMixin, serializers.Serializer):
    id = StrictCharField(max_length=100)
    language = StrictChoiceField(choices=LANGUAGES, error_messages=LANGUAGE_ERRORS,
                                 help_text="One of the world's languages (another is a 400 naming "
                                           "`queries[i].language`).")
    split = StrictChoiceField(choices=["tune", "test"], default="test",
                              help_text="`test` (the default) is what the publish gate runs; `tune` is for "
                                        "choosing settings.")
    query = VisibleCharField(max_length=2000, help_text="As a player or a game master would ask.")
    expected = serializers.ListField(child=StrictCharField(max_length=300), min_length=1, max_length=50,
                                     help_text="Entry ids that answer it (e.g. 'Conditions/blinded').")
    note = StrictCharField(max_length=2000, required=False)


class GoldenWarningSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=["unknown_entries"])
    field = serializers.CharField(help_text="The query's `expected`, as `queries[i].expected`.")
    query = serializers.CharField(help_text="The query's id.")
    entry_ids = serializers.ListField(child=serializers.CharField(), help_text="Its expected ids no version holds.")
    message = serializers.CharField()


class GoldenSetApi(APIView):
    """A world's golden queries of one domain: what the smoke run gating a publish searches with."""

    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        queries = GoldenQuerySerializer(many=True, allow_empty=False, max_length=2000)

    class OutputSerializer(serializers.Serializer):
        world = serializers.CharField()
        domain = serializers.CharField()
        source = serializers.CharField(allow_blank=True, help_text="`api` (sent here), the file under LORE_GOLDEN_DIR "
                                                                   "in use, or empty when there are none.")
        queries = GoldenQuerySerializer(many=True)
        updated_by = serializers.CharField(allow_blank=True)
        updated_at = serializers.DateTimeField(allow_null=True)
        warnings = GoldenWarningSerializer(
            many=True, help_text="Expected entry ids that no version of the domain holds (pruned versions aside), "
                                 "one item per query: a set may be written before its sources, so it is kept (200), "
                                 "but until a version holds them every smoke run counts the query a miss. Empty: "
                                 "every expected id is in a version.")

    @extend_schema(operation_id="world_golden_get", responses={200: OutputSerializer, **ERRORS})
    def get(self, request: Request, world: str, domain: str) -> Response:
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        sent = found.golden_sets.filter(domain=domain).first()
        if sent is not None:
            body = {"source": "api", "queries": sent.queries, "updated_by": sent.updated_by,
                    "updated_at": sent.updated_at}
        else:
            path = smoke.golden_path(found.slug, domain)
            try:
                queries = [{"id": q.id, "language": q.language, "split": q.split, "query": q.query,
                            "expected": list(q.expected)} for q in smoke.golden_load(path)]
            except ApplicationError as exc:
                if exc.code != "no_golden":
                    raise
                queries = []  # none yet: the answer to send some, not an error
            body = {"source": smoke.shown_path(path) if queries else "", "queries": queries, "updated_by": "",
                    "updated_at": None}
        warnings = smoke.golden_unknown_entries(world=found, domain=domain, queries=body["queries"])
        return Response(self.OutputSerializer({"world": found.slug, "domain": domain, **body,
                                               "warnings": warnings}).data)

    @extend_schema(operation_id="world_golden_put", request=InputSerializer,
                   responses={200: OpenApiResponse(OutputSerializer, description=(
                       "The set as kept. An expected entry id that no version of the domain holds is no refusal (a "
                       "golden set may be written before its sources) but a warning in `warnings`, naming the query "
                       "and the ids.")), **ERRORS},
                   examples=[OpenApiExample("Two queries", request_only=True, value={"queries": [
                       {"id": "en-1", "language": "en", "query": "what happens when my character is blinded?",
                        "expected": ["Conditions/blinded"]},
                       {"id": "en-2", "language": "en", "split": "tune", "query": "how big is a fireball?",
                        "expected": ["Spells/fireball"]}]}),
                             OpenApiExample("An id no version holds", response_only=True, status_codes=["200"],
                                            value={"world": "eldoria", "domain": "lore", "source": "api",
                                                   "queries": [{"id": "en-1", "language": "en", "split": "test",
                                                                "query": "who guards the moon bridge?",
                                                                "expected": ["nope/nope"]}],
                                                   "updated_by": "editor", "updated_at": "2025-08-27T11:42:00Z",
                                                   "warnings": [{
                                                       "code": "unknown_entries", "field": "queries[0].expected",
                                                       "query": "en-1", "entry_ids": ["nope/nope"],
                                                       "message": "Query 'en-1' expects nope/nope, which no version "
                                                                  "of eldoria/lore holds: a smoke run counts it a "
                                                                  "miss until a version holds them (check the ids, "
                                                                  "or upload the entries)."}]})])
    def put(self, request: Request, world: str, domain: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        queries = [dict(q) for q in serializer.validated_data["queries"]]
        sent = services.golden_set_save(world=found, domain=domain, queries=queries, actor=_actor(request))
        warnings = smoke.golden_unknown_entries(world=found, domain=domain, queries=sent.queries)
        return Response(self.OutputSerializer({
            "world": found.slug, "domain": domain, "source": "api", "queries": sent.queries,
            "updated_by": sent.updated_by, "updated_at": sent.updated_at, "warnings": warnings}).data)


class VersionPublishApi(APIView):
    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        version = StrictRegexField(SEMVER_PATTERN)
        force = StrictBooleanField(default=False, help_text="Publish despite a failed smoke run.")
        reason = StrictCharField(max_length=2000, required=False, default="",
                                       help_text="Required with force; recorded in the changelog.")

    @extend_schema(operation_id="world_publish", request=InputSerializer,
                   responses={200: ChangeSerializer,
                              409: OpenApiResponse(description="Smoke failed or missing (`error.code` smoke_failed, "
                                                               "figures in `error.smoke`), already live (conflict), "
                                                               f"or {PRUNED_TEXT}."),
                              **ERRORS})
    def post(self, request: Request, world: str, domain: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        version = _version(request, world, domain, data["version"])
        change = services.lore_version_publish(version=version, actor=_actor(request), force=data["force"],
                                               reason=data["reason"])
        return Response(ChangeSerializer(change).data)


class VersionRollbackApi(APIView):
    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        reason = StrictCharField(max_length=2000, required=False, default="")

    @extend_schema(operation_id="world_rollback", request=InputSerializer,
                   responses={200: ChangeSerializer,
                              409: OpenApiResponse(description="Nothing to roll back to (`error.code` "
                                                               "nothing_to_roll_back), or the version live before "
                                                               f"was pruned: {PRUNED_TEXT}."), **ERRORS})
    def post(self, request: Request, world: str, domain: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        change = services.lore_version_rollback(world=found, domain=domain, actor=_actor(request),
                                                reason=serializer.validated_data["reason"])
        return Response(ChangeSerializer(change).data)


class CanaryApi(APIView):
    """A domain's canary: a share of its `latest` searches served by the staged version, to try it on real
    traffic before publishing it. Publishing or rolling back ends it; every start, change and end is in the
    changelog (`GET …/versions`, `changes`)."""

    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        share = StrictFloatField(min_value=0.0, max_value=1.0,
                                 help_text="The share of `latest` searches the staged version serves: 0.1 is one in "
                                           "ten; 0 none, 1 all.")
        force = StrictBooleanField(default=False, help_text="Start it despite a failed or missing smoke run.")
        reason = StrictCharField(max_length=2000, required=False, default="",
                                 help_text="Required with force; recorded in the changelog.")

    class StopSerializer(ClosedSerializerMixin, serializers.Serializer):
        reason = StrictCharField(max_length=2000, required=False, default="")

    class OutputSerializer(serializers.Serializer):
        domain = serializers.CharField()
        latest = serializers.CharField(allow_null=True, help_text="The live version; null before a first publish.")
        version = serializers.CharField(allow_null=True, help_text="The version the canary tries; null with none.")
        share = serializers.FloatField(help_text="The share of `latest` searches it serves (0 with none).")
        serving = serializers.BooleanField(help_text="Whether it serves now: false when `stage` no longer points at "
                                                     "its version (a newer build moved it), which `PUT` again "
                                                     "follows.")

    @staticmethod
    def _state(world: str, domain: str, request: Request) -> dict:
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        latest = (Alias.objects.filter(world=found, domain=domain, name=Alias.Name.LATEST)
                  .select_related("version", "canary_version").first())
        tried = latest.canary_version if latest is not None else None
        serving = tried is not None and Alias.objects.filter(world=found, domain=domain, name=Alias.Name.STAGE,
                                                             version=tried).exists()
        return {"domain": domain, "latest": latest.version.version if latest is not None else None,
                "version": tried.version if tried is not None else None,
                "share": latest.canary_share if tried is not None else 0.0, "serving": serving}

    @extend_schema(operation_id="world_canary_get", responses={200: OutputSerializer, **ERRORS})
    def get(self, request: Request, world: str, domain: str) -> Response:
        return Response(self.OutputSerializer(self._state(world, domain, request)).data)

    @extend_schema(operation_id="world_canary_put", request=InputSerializer,
                   responses={200: OutputSerializer,
                              409: OpenApiResponse(description="Nothing published yet (`error.code` no_live_version), "
                                                               "no staged version (no_stage), its smoke run failed or "
                                                               "is missing (smoke_failed, figures in `error.smoke`), "
                                                               f"or {PRUNED_TEXT}."),
                              **ERRORS},
                   examples=[OpenApiExample("One search in ten", request_only=True, value={"share": 0.1})])
    def put(self, request: Request, world: str, domain: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        services.lore_canary_set(world=found, domain=domain, share=data["share"], actor=_actor(request),
                                 force=data["force"], reason=data["reason"])
        return Response(self.OutputSerializer(self._state(world, domain, request)).data)

    @extend_schema(operation_id="world_canary_delete", request=StopSerializer,
                   responses={200: ChangeSerializer,
                              409: OpenApiResponse(description="No canary runs (`error.code` no_canary)."), **ERRORS})
    def delete(self, request: Request, world: str, domain: str) -> Response:
        serializer = self.StopSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        change = services.lore_canary_stop(world=found, domain=domain, actor=_actor(request),
                                           reason=serializer.validated_data["reason"])
        return Response(ChangeSerializer(change).data)
