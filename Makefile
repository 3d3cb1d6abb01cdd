# MemoryHub: `make run` starts the service with its embedded defaults; `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.txt | cksum | cut -d' ' -f1)

.PHONY: install run test lint worker beat bench eval clean-db

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py demo_bootstrap
	$(PY) manage.py runserver 127.0.0.1:8000

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .

# With REDIS_URL set: a real worker and the beat scheduler (in-process mode needs neither).
worker: install
	$(VENV)/bin/celery -A memoryhub worker -l INFO

beat: install
	$(VENV)/bin/celery -A memoryhub beat -l INFO --schedule var/celerybeat-schedule

# Retrieval quality on an eval file (FORMAT.md) in all three modes, and search latency and
# ingest at 100k chunks (own database, memoryhub_bench). Figures are printed, not asserted.
EVAL ?= ../shared/eval/locomo_dev.json
eval: install
	$(PY) manage.py migrate --noinput --verbosity 0
	for mode in hybrid bm25 vector; do $(PY) manage.py eval_retrieval $(EVAL) --mode $$mode || exit 1; done

bench: install
	$(PY) bench/search_latency.py --chunks 100000 --eval $(EVAL)

clean-db:
	rm -rf var/pgdata
