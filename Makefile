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

.PHONY: install run test sdk-envs lint typecheck format migrations-check check-deploy worker

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed; set PYTHON=python3.x")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { \
		echo "Could not create a virtualenv. On Debian/Ubuntu: sudo apt-get install python3-venv"; exit 1; }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

install: $(VENV)/.installed

# The embedded default: SQLite file, in-memory channel layer, runs executed in-process, the demo model.
run: export DEBUG := 1
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo --url http://$(HOST):$(PORT)
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C stops it)"
	$(PY) -m daphne -b $(HOST) -p $(PORT) config.asgi:application

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

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@$(MAKE) --no-print-directory typecheck

# mypy (settings in pyproject.toml, which also excludes migrations) on every application package.
TYPECHECK_PATHS ?= core accounts tools providers agents folders onboarding config

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
