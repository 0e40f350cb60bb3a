"""Settings for the agent server, driven by environment variables.

The embedded defaults need no services: a SQLite file in the project folder,
the in-memory channel layer and runs executed in-process. ``DATABASE_URL``
switches to Postgres and ``REDIS_URL`` to channels-redis, a Redis cache and a
Celery broker. Every variable is listed in the README.
"""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONCE
from django.core.exceptions import ImproperlyConfigured

from config.storage import LOCAL_BACKEND, folders_storage

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()


def env_secret(name: str, default: str = "") -> str:
    """Read ``NAME`` or the file named by ``NAME_FILE`` (Docker/Kubernetes secrets)."""
    file_path = env.str(f"{name}_FILE", default="")
    if file_path:
        return Path(file_path).read_text().strip()
    value: str = env.str(name, default=default)
    return value


DEBUG = env.bool("DEBUG", default=False)


def install_secret(path: Path) -> str:
    """A random secret made on first use and kept in ``path`` (mode 0600): one per install, never public."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    secret = secrets.token_urlsafe(50)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_text().strip()
    with os.fdopen(fd, "w") as file:
        file.write(secret)
    return secret


SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("Set SECRET_KEY (or SECRET_KEY_FILE); DEBUG is off.")
    # DEBUG without a key (`make run`): a random key of this install, so the demo API key derived
    # from it (accounts/demo.py) is not guessable from the source.
    SECRET_KEY = install_secret(Path(env.str("DEBUG_SECRET_KEY_FILE", default=str(BASE_DIR / ".secret_key"))))

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "csp",
    "axes",
    "accounts",
    "tools",
    "providers",
    "agents",
    "mcp_servers",
    "folders",
    "onboarding",
    "agentfiles",
]

# ``config.middleware``: Django's own, with the hooks that do no I/O run on the event loop under ASGI.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.static.StaticFilesMiddleware",  # WhiteNoise, async-capable
    "django.contrib.sessions.middleware.SessionMiddleware",
    "config.middleware.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "config.middleware.AuthenticationMiddleware",
    "accounts.middleware.CurrentOrganizationMiddleware",
    "config.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    # Last, as django-axes asks: answers a locked-out login with 429 (see "Security" below).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None

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
                "accounts.context_processors.organizations",
                "agents.approvals.context_processors.approvals",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take the write lock up front, so two turns on one
    # agent serialize instead of failing on lock upgrade; WAL lets readers run.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # ASGI serves each request on a thread of its own, so persistent per-thread connections
    # would leak; a process-wide pool makes taking a connection cheap instead.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env.int("DATABASE_POOL_MIN_SIZE", default=2),
        "max_size": env.int("DATABASE_POOL_MAX_SIZE", default=20),
        "timeout": 10,
    }
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "agents:list"
LOGOUT_REDIRECT_URL = "accounts:login"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
    # Uploaded files' originals (folders/): never served by URL. Local by default; any Django
    # storage backend (e.g. django-storages' S3 one) by FOLDERS_STORAGE_BACKEND and the JSON
    # FOLDERS_STORAGE_OPTIONS (config/storage.py).
    "folders": folders_storage(
        backend=env.str("FOLDERS_STORAGE_BACKEND", default=LOCAL_BACKEND),
        root=env.str("FOLDERS_STORAGE_ROOT", default=str(BASE_DIR / "var" / "folders")),
        options=env.str("FOLDERS_STORAGE_OPTIONS", default=""),
    ),
}

REDIS_URL = env.str("REDIS_URL", default="")

# Options of the channel layer's Redis pool (channels_redis passes them to redis-py).
CHANNEL_LAYER_HOST_OPTIONS = {
    # redis-py 8 reads with a 5 s socket timeout by default, shorter than channels_redis's
    # blocking wait for a consumer's next message: a quiet tab would be dropped with 1011.
    "socket_timeout": 15,
    # Every tab that connects takes a connection for a moment (its group_add): redis-py's default
    # pool of 100 refused the 101st of a burst (tabs reconnecting to a restarted web process) with
    # "Too many connections", a 500 to the tab (benchmarks/bench_chat_streams.py, 200 tabs).
    "max_connections": env.int("CHANNEL_LAYER_MAX_CONNECTIONS", default=1000),
}
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL, **CHANNEL_LAYER_HOST_OPTIONS}], "capacity": 1500, "expiry": 30},
        }
    }
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # Several deployments (or test workers) can share one Redis database with prefixes of their own.
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default=""),
            "OPTIONS": {"pool_class": "config.cache.SharedConnectionPool"},  # not one per request thread
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# How runs are executed: "celery" hands them to a worker, "inprocess" runs them
# in this process with the same code the Celery task calls.
RUN_EXECUTOR = env.str("RUN_EXECUTOR", default="celery" if REDIS_URL else "inprocess")

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}

# Each process keeps the context windows of this many agents between turns (agents/context_cache.py).
CONTEXT_CACHE_AGENTS = env.int("CONTEXT_CACHE_AGENTS", default=128)
# One turn at a time per agent: a lease this long, renewed every third of it while the run is alive.
# With the defaults a run whose worker died is ended within stale (2 x 20 s) + sweep (15 s) = 55 s.
AGENT_TURN_LOCK_SECONDS = env.int("AGENT_TURN_LOCK_SECONDS", default=20)
# A running run whose heartbeat is older than this is ended by the sweeper (default: twice the lease).
RUN_STALE_SECONDS = env.int("RUN_STALE_SECONDS", default=None)
# How often every web process sweeps runs whose executor died, beat or not (0: never).
RUN_SWEEP_INTERVAL_SECONDS = env.float("RUN_SWEEP_INTERVAL_SECONDS", default=15)
# How often Celery beat (deployments with workers) sweeps dead runs and denies expired approvals.
UPKEEP_BEAT_SECONDS = env.float("UPKEEP_BEAT_SECONDS", default=15)
# How often Celery beat lists every provider's models again (providers/tasks.py).
PROVIDER_REFRESH_BEAT_SECONDS = env.float("PROVIDER_REFRESH_BEAT_SECONDS", default=3600)
# Built-in tool sets beside the ones ``tools.builtins`` ships (dotted paths to lists of BuiltinTool):
# the memory tools live with the memory they edit.
TOOL_BUILTIN_SETS = [
    "agents.memory.tools.conversation_search.CONVERSATION_TOOLS",
    "agents.memory.tools.core.MEMORY_TOOLS",
    "agents.memory.tools.archival.ARCHIVAL_TOOLS",
    "folders.tools.FILE_TOOLS",
]
# MCP servers (mcp_servers/): how an ``mcp`` tool reaches its server (the runner's hook, as
# TOOL_BUILTIN_SETS is for built-ins), the timeouts of every connection, the private hosts an
# organization's server may be on (hosts, addresses, CIDR networks: a Docker network, 127.0.0.1),
# and whether stdio servers may be added (off: tenants are mutually untrusted).
TOOL_MCP_CALLER = "mcp_servers.runner.call_mcp_tool"
MCP_CONNECT_TIMEOUT = env.float("MCP_CONNECT_TIMEOUT", default=10)
MCP_LIST_TOOLS_TIMEOUT = env.float("MCP_LIST_TOOLS_TIMEOUT", default=20)
MCP_CALL_TIMEOUT = env.float("MCP_CALL_TIMEOUT", default=60)
MCP_ALLOWED_PRIVATE_HOSTS = env.list("MCP_ALLOWED_PRIVATE_HOSTS", default=[])
MCP_ENABLE_STDIO = env.bool("MCP_ENABLE_STDIO", default=False)
MCP_MAX_RESULT_CHARS = env.int("MCP_MAX_RESULT_CHARS", default=100_000)
# Images in MCP results reach models that take images: each up to this size (decoded; Anthropic refuses
# an image over 5 MB of base64), and this many per result. Others stay a text description saying why.
MCP_MAX_IMAGE_BYTES = env.int("MCP_MAX_IMAGE_BYTES", default=3_000_000)
MCP_MAX_IMAGES = env.int("MCP_MAX_IMAGES", default=4)
MCP_REUSE_SESSIONS = env.bool("MCP_REUSE_SESSIONS", default=True)  # keep a session open per server
MCP_SESSION_IDLE_SECONDS = env.float("MCP_SESSION_IDLE_SECONDS", default=300)
MCP_SESSION_POOL_SIZE = env.int("MCP_SESSION_POOL_SIZE", default=100)
MCP_OAUTH_REFRESH_MARGIN = env.float("MCP_OAUTH_REFRESH_MARGIN", default=60)  # refresh tokens this early (s)
MCP_OAUTH_WAIT_SECONDS = env.float("MCP_OAUTH_WAIT_SECONDS", default=300)  # the connect stream waits this long

# Sections of the memory a room above agents.memory owns, compiled after the blocks (agents/memory/prompt.py).
MEMORY_SECTIONS = ["folders.context.directories_section"]
# Folders and files (folders/): who processes uploads ("celery": a worker; "thread": this process;
# "inline": before the upload answers), the size limits, and the converter's limits (folders/parsing.py).
FOLDERS_PROCESSING = env.str("FOLDERS_PROCESSING", default="celery" if RUN_EXECUTOR == "celery" else "thread")
FOLDERS_MAX_FILE_BYTES = env.int("FOLDERS_MAX_FILE_BYTES", default=50 * 1024 * 1024)
FOLDERS_MAX_ORGANIZATION_BYTES = env.int("FOLDERS_MAX_ORGANIZATION_BYTES", default=2 * 1024 * 1024 * 1024)
FOLDERS_PARSE_SECONDS = env.float("FOLDERS_PARSE_SECONDS", default=300)
FOLDERS_PARSE_MEMORY_BYTES = env.int("FOLDERS_PARSE_MEMORY_BYTES", default=2 * 1024 * 1024 * 1024)
# A file's chunks are embedded this many to a provider request (OpenAI takes up to 2,048 inputs).
FOLDERS_EMBEDDING_BATCH_SIZE = env.int("FOLDERS_EMBEDDING_BATCH_SIZE", default=64)
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-runs": {"task": "agents.sweeper.sweep_stale_runs_task", "schedule": UPKEEP_BEAT_SECONDS},
    "expire-pending-approvals": {
        "task": "agents.approval_expiry.expire_pending_approvals_task",
        "schedule": UPKEEP_BEAT_SECONDS,
    },
    "refresh-provider-models": {
        "task": "providers.tasks.refresh_providers_task",
        "schedule": PROVIDER_REFRESH_BEAT_SECONDS,
    },
}
# An agent's context is compacted before a request would pass this share of its window (as Letta);
# the compaction summarizes about this share of the conversation (the oldest part).
CONTEXT_COMPACTION_THRESHOLD = env.float("CONTEXT_COMPACTION_THRESHOLD", default=0.9)
CONTEXT_COMPACTION_EVICT_SHARE = env.float("CONTEXT_COMPACTION_EVICT_SHARE", default=0.3)
# A run still going after this long is ended as failed ("exceeded its time limit") and frees its agent.
RUN_TIME_LIMIT_SECONDS = env.int("RUN_TIME_LIMIT_SECONDS", default=900)
# Every model call (chat and embeddings): seconds to connect, to wait for the next bytes (the first
# byte included), and for the whole answer; a call past any of them ends its turn with llm_api_error.
LLM_CONNECT_TIMEOUT = env.float("LLM_CONNECT_TIMEOUT", default=10)
LLM_FIRST_BYTE_TIMEOUT = env.float("LLM_FIRST_BYTE_TIMEOUT", default=120)
LLM_TOTAL_TIMEOUT = env.float("LLM_TOTAL_TIMEOUT", default=300)

# Sandboxed execution of source tools (see tools/sandbox/): "auto" uses bubblewrap when it works.
TOOL_SANDBOX_BACKEND = env.str("TOOL_SANDBOX_BACKEND", default="auto")
TOOL_SANDBOX_WALL_SECONDS = env.float("TOOL_SANDBOX_WALL_SECONDS", default=10)
TOOL_SANDBOX_CPU_SECONDS = env.int("TOOL_SANDBOX_CPU_SECONDS", default=5)
TOOL_SANDBOX_MEMORY_BYTES = env.int("TOOL_SANDBOX_MEMORY_BYTES", default=256 * 1024 * 1024)
TOOL_SANDBOX_MAX_PROCESSES = env.int("TOOL_SANDBOX_MAX_PROCESSES", default=32)
TOOL_SANDBOX_MAX_OUTPUT_BYTES = env.int("TOOL_SANDBOX_MAX_OUTPUT_BYTES", default=64 * 1024)
TOOL_SANDBOX_NETWORK = env.bool("TOOL_SANDBOX_NETWORK", default=False)
# A delegated cgroup v2 directory: each call then gets a cgroup of its own there, with memory, pids and
# CPU limits for the whole call. Without one, per-process limits are lowered (tools/sandbox/cgroups.py).
TOOL_SANDBOX_CGROUP_PARENT = env.str("TOOL_SANDBOX_CGROUP_PARENT", default="")
# Sandboxed calls running at once on this host, and for one organization; more answer "busy".
TOOL_SANDBOX_MAX_CALLS = env.int("TOOL_SANDBOX_MAX_CALLS", default=8)
TOOL_SANDBOX_MAX_CALLS_PER_ORGANIZATION = env.int("TOOL_SANDBOX_MAX_CALLS_PER_ORGANIZATION", default=4)

# Secrets stored in the database (provider keys) are encrypted with this key, apart from
# SECRET_KEY. Several, comma-separated: the first encrypts, all decrypt (rotation, see accounts/crypto.py).
FIELD_ENCRYPTION_KEY = env_secret("FIELD_ENCRYPTION_KEY", default="")
if not FIELD_ENCRYPTION_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("Set FIELD_ENCRYPTION_KEY (or FIELD_ENCRYPTION_KEY_FILE); DEBUG is off.")
    FIELD_ENCRYPTION_KEY = SECRET_KEY

ANTHROPIC_API_KEY = env_secret("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="")
OPENAI_API_KEY = env_secret("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")
# The server's other own providers (the "base" category, listed for every organization; providers/endpoints.py).
GEMINI_API_KEY = env_secret("GEMINI_API_KEY", default="")
GEMINI_BASE_URL = env.str("GEMINI_BASE_URL", default="")
AZURE_API_KEY = env_secret("AZURE_API_KEY", default="")
AZURE_BASE_URL = env.str("AZURE_BASE_URL", default="")
AZURE_API_VERSION = env.str("AZURE_API_VERSION", default="")
GROQ_API_KEY = env_secret("GROQ_API_KEY", default="")
TOGETHER_API_KEY = env_secret("TOGETHER_API_KEY", default="")
DEEPSEEK_API_KEY = env_secret("DEEPSEEK_API_KEY", default="")
XAI_API_KEY = env_secret("XAI_API_KEY", default="")
OPENROUTER_API_KEY = env_secret("OPENROUTER_API_KEY", default="")
OLLAMA_BASE_URL = env.str("OLLAMA_BASE_URL", default="")
VLLM_API_BASE = env.str("VLLM_API_BASE", default="")
LMSTUDIO_BASE_URL = env.str("LMSTUDIO_BASE_URL", default="")
# Hosts, addresses or networks (CIDR) an organization's own provider base URL may reach although
# they are private, loopback or link-local (core/egress.py). The two URLs above are trusted.
PROVIDER_ALLOWED_PRIVATE_HOSTS = env.list("PROVIDER_ALLOWED_PRIVATE_HOSTS", default=[])
# The built-in web tools (tools/builtins/web/). fetch_webpage needs no configuration: it connects only
# to public addresses, or to the hosts, addresses or networks (CIDR) listed here (an intranet, tests).
WEB_FETCH_ALLOWED_PRIVATE_HOSTS = env.list("WEB_FETCH_ALLOWED_PRIVATE_HOSTS", default=[])
WEB_FETCH_MAX_BYTES = env.int("WEB_FETCH_MAX_BYTES", default=5 * 1024 * 1024)
WEB_FETCH_CONNECT_TIMEOUT_SECONDS = env.float("WEB_FETCH_CONNECT_TIMEOUT_SECONDS", default=10)
WEB_FETCH_READ_TIMEOUT_SECONDS = env.float("WEB_FETCH_READ_TIMEOUT_SECONDS", default=20)
WEB_FETCH_TOTAL_TIMEOUT_SECONDS = env.float("WEB_FETCH_TOTAL_TIMEOUT_SECONDS", default=30)
WEB_FETCH_MAX_REDIRECTS = env.int("WEB_FETCH_MAX_REDIRECTS", default=5)
WEB_FETCH_USER_AGENT = env.str("WEB_FETCH_USER_AGENT", default="Mozilla/5.0 (compatible; AgentServer/1.0)")
# web_search: "auto" takes the first configured of exa, tavily and searxng; an agent's tool variable
# EXA_API_KEY or TAVILY_API_KEY overrides the server's. The base URLs are the operator's (tests, proxies).
WEB_SEARCH_PROVIDER = env.str("WEB_SEARCH_PROVIDER", default="auto")
if WEB_SEARCH_PROVIDER not in {"auto", "exa", "tavily", "searxng"}:
    raise ImproperlyConfigured("WEB_SEARCH_PROVIDER must be auto, exa, tavily or searxng.")
WEB_SEARCH_TIMEOUT_SECONDS = env.float("WEB_SEARCH_TIMEOUT_SECONDS", default=20)
EXA_API_KEY = env_secret("EXA_API_KEY", default="")
EXA_BASE_URL = env.str("EXA_BASE_URL", default="https://api.exa.ai")
TAVILY_API_KEY = env_secret("TAVILY_API_KEY", default="")
TAVILY_BASE_URL = env.str("TAVILY_BASE_URL", default="https://api.tavily.com")
SEARXNG_URL = env.str("SEARXNG_URL", default="")
# they are private, loopback or link-local (core/egress.py). The server's own URLs above are trusted.
PROVIDER_ALLOWED_PRIVATE_HOSTS = env.list("PROVIDER_ALLOWED_PRIVATE_HOSTS", default=[])
# Listing a provider's models (providers/discovery.py): connect and read timeouts, in seconds.
PROVIDER_DISCOVERY_CONNECT_TIMEOUT = env.float("PROVIDER_DISCOVERY_CONNECT_TIMEOUT", default=5)
PROVIDER_DISCOVERY_READ_TIMEOUT = env.float("PROVIDER_DISCOVERY_READ_TIMEOUT", default=10)
# A provider's models are listed again when a model list is asked for after this long (and by Celery beat).
PROVIDER_MODELS_MAX_AGE_SECONDS = env.float("PROVIDER_MODELS_MAX_AGE_SECONDS", default=3600)
DEFAULT_MODEL_HANDLE = env.str("DEFAULT_MODEL_HANDLE", default="demo/echo-1")
# Seconds between the demo model's streamed tokens (0 in tests).
DEMO_TOKEN_DELAY = env.float("DEMO_TOKEN_DELAY", default=0.01)
# Seconds of silence after which an SSE stream sends a keep-alive (a comment, or a ping event).
SSE_KEEPALIVE_SECONDS = env.float("SSE_KEEPALIVE_SECONDS", default=50)
# Open SSE streams a caller may hold (more answer 429), and how often a stream re-checks that its
# access still holds (removals, revocations and logouts also close streams at once; agents/api/stream_guard.py).
STREAMS_PER_API_KEY = env.int("STREAMS_PER_API_KEY", default=10)
STREAMS_PER_USER = env.int("STREAMS_PER_USER", default=20)
STREAM_ACCESS_RECHECK_SECONDS = env.float("STREAM_ACCESS_RECHECK_SECONDS", default=30)
# How long a process keeps an authenticated API key (accounts/api_key_cache.py); any change of
# access forgets it at once in every process. 0 looks every key up on every request.
API_KEY_CACHE_SECONDS = env.float("API_KEY_CACHE_SECONDS", default=30)
# Frames one chat WebSocket may send: this many at once, then this many a second; a flood closes it (4429).
CHAT_FRAME_BURST = env.int("CHAT_FRAME_BURST", default=20)
CHAT_FRAMES_PER_SECOND = env.float("CHAT_FRAMES_PER_SECOND", default=2)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.authentication.HasOrganization"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "agents.api.openapi.ApiAutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "accounts.authentication.ApiKeyRateThrottle",
        "accounts.authentication.SessionUserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "api_key": env.str("API_RATE_LIMIT", default="6000/minute"),
        "session_user": env.str("API_SESSION_RATE_LIMIT", default="600/minute"),
    },
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "agents.api.errors.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Agent server API",
    "DESCRIPTION": "A Letta v1 wire-compatible API for stateful LLM agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get components of their own, where required text fields are non-blank (minLength 1).
    "COMPONENT_SPLIT_REQUEST": True,
    # An approval answer and each of its items are both tagged "approval": one enum for both.
    "ENUM_NAME_OVERRIDES": {
        "ApprovalTypeEnum": ["approval"],
        "ToolReturnTypeEnum": ["tool_return"],
        "ToolTypeEnum": ["tool"],
        "ToolReturnStatusEnum": ["success", "error"],
        # A provider's type (``/v1/providers``) and the types ``model_settings`` takes are two sets.
        "ProviderTypeEnum": "providers.types.ProviderType",
        "ModelSettingsProviderTypeEnum": "agents.llm.agent_settings.MODEL_SETTINGS_PROVIDER_TYPES",
        "LettaProviderTypeEnum": "agents.api.models.LETTA_PROVIDER_TYPES",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Security limits (README, "Security"). A larger request body answers 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=1024 * 1024)
# Logins (site and admin): after LOGIN_FAILURE_LIMIT failures for one account from one address,
# that pair answers 429 for LOGIN_LOCKOUT_MINUTES; an address alone only after
# LOGIN_ADDRESS_FAILURE_LIMIT failures over every account (django-axes, accounts/throttling.py).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_ENABLED = env.bool("LOGIN_LOCKOUT_ENABLED", default=True)
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = "accounts.throttling.lockout_parameters"
AXES_LOCKOUT_CALLABLE = "accounts.throttling.lockout_response"
LOGIN_ADDRESS_FAILURE_LIMIT = env.int("LOGIN_ADDRESS_FAILURE_LIMIT", default=100)
AXES_VERBOSE = False
AXES_USERNAME_FORM_FIELD = "username"  # the login forms' field (our users log in by email)
AXES_RESET_ON_SUCCESS = True

# Sign-up confirms the address by email (accounts/signup.py). EMAIL_URL: smtp://user:password@host:587
# (+tls), or consolemail:// (DEBUG's default: messages go to the server's output).
_email = env.email_url("EMAIL_URL", default="consolemail://" if DEBUG else "smtp://localhost:25")
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST = _email.get("EMAIL_HOST") or "localhost"
EMAIL_PORT = _email.get("EMAIL_PORT") or 25
EMAIL_HOST_USER = _email.get("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = _email.get("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = bool(_email.get("EMAIL_USE_TLS"))
EMAIL_USE_SSL = bool(_email.get("EMAIL_USE_SSL"))
EMAIL_FILE_PATH = _email.get("EMAIL_FILE_PATH") or ""
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="webmaster@localhost")
SIGNUP_LINK_MAX_AGE_SECONDS = env.int("SIGNUP_LINK_MAX_AGE_SECONDS", default=48 * 3600)
# Who may sign up: "open" (anyone), "invite" (only with a pending invite), "closed" (nobody;
# for a deployment without mail, where accounts are made with manage.py).
SIGNUP_MODE = env.str("SIGNUP_MODE", default="open")
if SIGNUP_MODE not in ("open", "invite", "closed"):
    raise ImproperlyConfigured(f"SIGNUP_MODE must be open, invite or closed, not {SIGNUP_MODE!r}")

# HTTPS is configured when the server redirects to it or trusts a proxy's X-Forwarded-Proto:
# then cookies are Secure and HSTS is on (a year) unless set otherwise explicitly.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
HTTPS_CONFIGURED = SECURE_SSL_REDIRECT or env.bool("SECURE_PROXY_SSL_HEADER", default=False)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=HTTPS_CONFIGURED)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=HTTPS_CONFIGURED)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if HTTPS_CONFIGURED else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"

# Every page: our own scripts and styles only, nothing inline (config/csp.py adds the WebSocket origin).
# The API docs page's one inline script and style carry a nonce (templates/drf_spectacular/).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", NONCE],
        "style-src": ["'self'", NONCE],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # The SDKs' HTTP clients log every request at INFO; keep them to warnings.
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
    },
}

# Agent files (.af): the largest upload ``POST /v1/agents/import`` and the import page accept.
AGENTFILE_MAX_BYTES = env.int("AGENTFILE_MAX_BYTES", default=10 * 1024 * 1024)
