# Two commands matter: `make run` (the embedded default, no services) and `make test`.
# Everything lives in ./.venv; the only prerequisite is Python 3.11+ with venv.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# make test runs the suite on this many pytest-xdist workers ("auto": one per core; 0 runs it serially).
TEST_WORKERS ?= auto

.PHONY: install run test sdk-envs ts-sdk letta-code mcp-everything lint typecheck format migrations-check check-deploy worker

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed; set PYTHON=python3.x")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { \
		echo "Could not create a virtualenv. On Debian/Ubuntu: sudo apt-get install python3-venv"; exit 1; }
	@echo "Installing dependencies into $(VENV) (once; pip's output in $(VENV)/install.log)"
	@{ $(PY) -m pip install --upgrade pip && $(PY) -m pip install -e '.[test]'; } > $(VENV)/install.log 2>&1 || { \
		tail -n 20 $(VENV)/install.log; echo "Installing failed; the whole log is in $(VENV)/install.log"; exit 1; }
	@touch $@

install: $(VENV)/.installed

# The embedded default: SQLite file, in-memory channel layer, runs executed in-process, the demo model.
# Logs are kept to warnings (LOG_LEVEL=INFO make run shows the rest); Daphne prints one line per request.
run: export DEBUG := 1
run: export LOG_LEVEL ?= WARNING
# prepare_run migrates and seeds the demo quietly, then prints the URL, login, API key and what is on.
run: install
	@$(PY) manage.py prepare_run --url http://$(HOST):$(PORT)
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C stops it)"
	@$(PY) -m daphne -b $(HOST) -p $(PORT) config.asgi:application

# Settings come from the environment: export DATABASE_URL / REDIS_URL to test against Postgres / Redis.
# Each test file runs on one worker (--dist loadfile), so a module's live server or Celery worker starts once.
# (Not loadgroup: pytest-xdist 3.8 cannot rename pytest 9.2's node ids, so xdist_group marks are ignored.)
test: install
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# letta-client 1.x for tests/sdk: one virtualenv per version of tests/sdk/versions.txt, made once
# (the marker is written last, so an interrupted install is redone). The test session installs
# nothing; without these virtualenvs the SDK tests are skipped.
SDK_ENVS := .sdk-venvs
SDK_VERSIONS := $(shell cat tests/sdk/versions.txt)

sdk-envs: $(SDK_VERSIONS:%=$(SDK_ENVS)/letta-%/.installed)
	@:

$(SDK_ENVS)/letta-%/.installed: | $(VENV)/.installed
	@echo "letta-client $* -> $(@D)"
	@$(PY) -m venv --clear $(@D)
	@$(@D)/bin/python -m pip install --quiet --disable-pip-version-check letta-client==$*
	@touch $@

# The MCP reference server from npm, for tests/mcp_servers (skipped without Node or this folder).
MCP_EVERYTHING := .mcp-everything
MCP_EVERYTHING_VERSION := 2026.8.31

mcp-everything: $(MCP_EVERYTHING)/.installed
	@:

$(MCP_EVERYTHING)/.installed:
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-audit --no-fund --prefix $(MCP_EVERYTHING) \
	    @modelcontextprotocol/server-everything@$(MCP_EVERYTHING_VERSION) && touch $@; \
	else echo "npm not found: the MCP reference server tests will be skipped"; fi

# The TypeScript SDK for tests/sdk/test_letta_client_ts.py, in .sdk-node/ (made once; the marker last).
# Without it those tests are skipped with one line.
TS_SDK_VERSION := 1.12.1
TS_SDK := .sdk-node

ts-sdk: $(TS_SDK)/.installed-$(TS_SDK_VERSION)
	@:

$(TS_SDK)/.installed-$(TS_SDK_VERSION):
	@echo "@letta-ai/letta-client $(TS_SDK_VERSION) -> $(TS_SDK)"
	@mkdir -p $(TS_SDK)
	@cd $(TS_SDK) && npm install --silent --no-audit --no-fund --no-save --prefix . @letta-ai/letta-client@$(TS_SDK_VERSION)
	@touch $@

# Letta Code (the npm CLI) for tests/lettacode, made once in .letta-code/ (the marker is written last).
# The registry lacks two of its optional dependencies, and its letta.js bundle needs only ws and
# node-pty: the packed package's dependency list is trimmed to those two, installed without scripts,
# and node-pty is built for this machine (it ships no Linux prebuild). Without it the tests are skipped.
LETTA_CODE_VERSION := 0.32.18
LETTA_CODE := .letta-code
export LETTA_CODE_TRIM := const fs = require("fs"); const p = JSON.parse(fs.readFileSync("package.json")); \
	p.dependencies = {ws: p.dependencies.ws, "node-pty": p.dependencies["node-pty"]}; \
	for (const key of ["optionalDependencies", "devDependencies", "scripts"]) delete p[key]; \
	fs.writeFileSync("package.json", JSON.stringify(p, null, 2));

letta-code: $(LETTA_CODE)/.installed-$(LETTA_CODE_VERSION)
	@:

$(LETTA_CODE)/.installed-$(LETTA_CODE_VERSION):
	@command -v npm >/dev/null || { echo "npm (Node.js 20+) is needed for make letta-code"; exit 1; }
	@echo "@letta-ai/letta-code $(LETTA_CODE_VERSION) -> $(LETTA_CODE)/"
	@rm -rf $(LETTA_CODE) && mkdir -p $(LETTA_CODE)
	@cd $(LETTA_CODE) && npm pack --silent @letta-ai/letta-code@$(LETTA_CODE_VERSION) >/dev/null \
		&& tar xzf letta-ai-letta-code-$(LETTA_CODE_VERSION).tgz && rm letta-ai-letta-code-$(LETTA_CODE_VERSION).tgz
	@cd $(LETTA_CODE)/package && node -e "$$LETTA_CODE_TRIM"
	@cd $(LETTA_CODE)/package && npm install --silent --ignore-scripts --no-audit --no-fund --engine-strict=false
	@cd $(LETTA_CODE)/package && { npm rebuild --silent node-pty || echo "node-pty did not build: Letta Code runs, its own pty features do not"; }
	@node $(LETTA_CODE)/package/letta.js --version
	@touch $@

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@$(MAKE) --no-print-directory typecheck

# mypy (settings in pyproject.toml, which also excludes migrations) on every application package.
TYPECHECK_PATHS ?= core accounts tools providers agents mcp_servers folders onboarding agentfiles config

typecheck: install
	$(VENV)/bin/mypy $(TYPECHECK_PATHS)

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

migrations-check: export DEBUG := 1
migrations-check: install
	$(PY) manage.py makemigrations --check --dry-run

# What production runs with DEBUG off: the variables the README's "Security" section lists for HTTPS
# behind a proxy. Secure cookies and HSTS follow from SECURE_PROXY_SSL_HEADER (config/settings.py).
check-deploy: export DEBUG := 0
check-deploy: export SECRET_KEY ?= check-deploy-only-$(shell $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(48))')
check-deploy: export FIELD_ENCRYPTION_KEY ?= check-deploy-only-$(shell $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(48))')
check-deploy: export SECURE_PROXY_SSL_HEADER := 1
check-deploy: export SECURE_SSL_REDIRECT := 1
check-deploy: export SECURE_HSTS_INCLUDE_SUBDOMAINS := 1
check-deploy: export SECURE_HSTS_PRELOAD := 1
check-deploy: install
	$(PY) manage.py check --deploy --fail-level WARNING

# A Celery worker; it needs REDIS_URL (the broker), like the web process it serves.
worker: install
	@test -n "$$REDIS_URL" || { echo "Set REDIS_URL=redis://… (the Celery broker)"; exit 1; }
	$(VENV)/bin/celery -A config worker --loglevel INFO
