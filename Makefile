# ReplyOnce developer commands. `make` alone lists them; each one does the set-up it needs.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
# Three set-up steps, each only when a target needs it:
#   LOCAL_STAMP    the local stack (demo, serve, mail, invoke, chaos): the layer's pins, moto, rich
#   STAMP          plus the tools (pytest, ruff, sam, cfn-lint, hypothesis): tests, lint, build, deploy
#   CHECKOV        checkov in its own venv (268 MB; conflicting pins): only the tests use it
LOCAL_STAMP := $(VENV)/.installed-local
STAMP := $(VENV)/.installed
CHECKOV := $(VENV)/checkov/bin/checkov
# The layer's package is importable as in Lambda (/opt/python); devstack and functions from the root;
# then the shell's own PYTHONPATH, kept (a team's agent in a folder of its own: make replay --agent).
export PYTHONPATH := $(CURDIR):$(CURDIR)/layers/replyonce$(if $(PYTHONPATH),:$(PYTHONPATH))
export SAM_CLI_TELEMETRY ?= 0
FN ?= WebhookFunction
EVENT ?= events/webhook-message-created.json
# The --env-vars file of `make invoke` (SAM's format); events/env.json holds the one override the
# sample events need (they are dated 2025, older than the webhook's replay bound). ENV_VARS= for none.
ENV_VARS ?= events/env.json

.DEFAULT_GOAL := help

.PHONY: help test test-unit test-static test-contract test-integration test-e2e test-harness interleavings lint validate pytest build venv constraints clean events demo serve listen invoke mail thread trigger

help: ## list the targets (what `make` alone does)
	@echo "ReplyOnce: make TARGET [ARGS=\"...\"]   (docs/design.md explains the design; README.md the commands)"
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-17s %s\n", $$1, $$2}'

test: lint validate pytest ## ruff, sam validate --lint and pytest, after setting up the venv

$(BIN)/python:
	@python="$$(scripts/find-python.sh)" && echo "[setup] creating $(VENV) with $$python" >&2 && "$$python" -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

$(LOCAL_STAMP): requirements-local.txt constraints.txt layers/replyonce/requirements.txt | $(BIN)/python
	@$(BIN)/python scripts/install.py "local stack" -r requirements-local.txt -c constraints.txt
	@touch $(LOCAL_STAMP)

$(STAMP): $(LOCAL_STAMP) requirements-dev.txt
	@$(BIN)/python scripts/install.py "test and build tools" -r requirements-dev.txt -c constraints.txt
	@touch $(STAMP)

$(CHECKOV): requirements-checkov.txt | $(BIN)/python
	@echo "[setup] checkov in its own venv, $(VENV)/checkov (only the tests use it)" >&2
	@python="$$(scripts/find-python.sh)" && "$$python" -m venv --clear $(VENV)/checkov
	@$(VENV)/checkov/bin/python scripts/install.py "checkov" -r requirements-checkov.txt
	@touch $(CHECKOV)

venv: $(STAMP) $(CHECKOV) ## create .venv with Python 3.13 and every pinned dependency (tests included)

lint: $(STAMP) ## ruff check and ruff format --check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

validate: $(STAMP) ## sam validate --lint, then cfn-lint with the serverless rule set (cfn-lint-serverless)
	$(BIN)/sam validate --lint --template template.yaml
	$(BIN)/cfn-lint template.yaml --append-rules cfn_lint_serverless.rules

# checkov only when the run includes tests/static/test_template_security.py: the whole suite (ARGS names no
# path under tests), the tests directory or the static tier itself, or that module; a module of pure logic
# needs none.
PYTEST_PATHS = $(filter tests%,$(ARGS))
PYTEST_NEEDS_CHECKOV = $(if $(PYTEST_PATHS),$(or $(findstring test_template_security,$(PYTEST_PATHS)),$(filter tests tests/ tests/static tests/static/,$(PYTEST_PATHS))),all)

# The whole suite runs on 4 pytest-xdist workers: it waits on servers, subprocesses and queues more
# than it computes, so 4 beat 2 on a 2-core machine (docs/development.md, "Tests"). A run naming paths is one process.
PYTEST_WORKERS ?= $(if $(PYTEST_PATHS),0,4)

pytest: $(STAMP) $(if $(PYTEST_NEEDS_CHECKOV),$(CHECKOV)) ## the test suite, every tier (ARGS="tests/unit/test_x.py -q" for one module)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(ARGS)

# One target per tier (docs/development.md, "Tests"); together they run every test module once, as `make test` does.
# The tiers that wait on servers and processes run on the xdist workers (TIER_WORKERS=0: one process).
# Two modules stay at the top of tests/ while the layer's comments still name them there (docs/development.md, "Tests").
TIER_WORKERS ?= 4

test-unit: $(STAMP) ## tests/unit: the rules, the agents, the text, on in-memory values: seconds, no servers, no sockets
	$(BIN)/python -m pytest tests/unit -q $(ARGS)

test-static: $(STAMP) $(CHECKOV) ## tests/static: template.yaml, the README, the docs and the Makefile read and linted (cfn-lint, checkov); no servers
	$(BIN)/python -m pytest -n $(TIER_WORKERS) tests/static -q $(ARGS)

test-contract: $(STAMP) ## tests/contract: each port's contract on its in-memory fake and its adapter (DynamoDB on moto, the Nylas emulator)
	$(BIN)/python -m pytest tests/contract -q $(ARGS)

test-integration: $(STAMP) ## tests/integration: the real handlers, adapters and operator commands against the embedded AWS and the Nylas emulator
	$(BIN)/python -m pytest -n $(TIER_WORKERS) tests/integration -q $(ARGS)

test-e2e: $(STAMP) ## tests/e2e: real processes as users run them (make serve, pseudo-terminals, a browser), the drills, a deployed target
	$(BIN)/python -m pytest -n $(TIER_WORKERS) tests/e2e -q $(ARGS)

test-harness: $(STAMP) ## tests/harness and bench/tests: the test harness itself (the Nylas emulator, the embedded AWS, the local stack's parts, the checker, the bench's pure parts)
	$(BIN)/python -m pytest -n $(TIER_WORKERS) tests/harness bench/tests -q $(ARGS)

interleavings: $(STAMP) ## every interleaving of the scenarios and every mutant's schedule: the table of docs/reliability.md
	$(BIN)/python -m tests.interleavings_report $(ARGS)

build: $(STAMP) ## sam build without Docker: the venv's python3.13 is first on PATH
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/sam build --template template.yaml

constraints: $(STAMP) ## re-pin every transitive dependency after changing requirements-dev.txt
	( echo "# Generated by 'make constraints' from a working venv: every transitive pin, so a fresh machine installs what CI tested."; \
	  $(BIN)/python -m pip freeze --exclude-editable ) > constraints.txt

clean: ## remove .venv, .aws-sam and caches
	rm -rf $(VENV) .aws-sam .pytest_cache .ruff_cache

events: $(LOCAL_STAMP) ## regenerate events/ from devstack/events.py
	@$(BIN)/python -m devstack.events

# The commands a person reads or pipes run without make's echo (`@`): `make demo ARGS=--json > report.json`
# is the report alone (the set-up steps write their progress to stderr).
demo: $(LOCAL_STAMP) ## the whole pipeline on this machine: webhooks, duplicates, one reply each, invariants checked
	@$(BIN)/python -m devstack.demo $(ARGS)

serve: $(LOCAL_STAMP) ## the local stack left running, showing every event and reply (ARGS="--json-logs")
	@$(BIN)/python -m devstack.serve $(ARGS)

listen: $(LOCAL_STAMP) ## the stack behind your tunnel, with a Nylas webhook while it runs: make listen ARGS="--url https://..."
	@$(BIN)/python -m devstack.listen $(ARGS)

mail: $(LOCAL_STAMP) ## your message into `make serve`: make mail ARGS="--from you@example.com --subject Hi --body '...'"
	@$(BIN)/python -m devstack.trigger mail $(ARGS)

thread: $(LOCAL_STAMP) ## a thread as `make serve`'s mailbox holds it: make thread ARGS="--thread T"
	@$(BIN)/python -m devstack.trigger thread $(ARGS)

trigger: $(LOCAL_STAMP) ## other deliveries: make trigger ARGS="updated|truncated|created --message M", "forged", "unknown"
	@$(BIN)/python -m devstack.trigger $(ARGS)

invoke: $(LOCAL_STAMP) ## sam local invoke without Docker: make invoke FN=ReplierFunction EVENT=events/... ENV_VARS=env.json
	@$(BIN)/python -m devstack.invoke $(FN) $(EVENT) $(if $(ENV_VARS),--env-vars $(ENV_VARS)) $(ARGS)

bench: $(STAMP) ## measure and write docs/performance.md: make bench ARGS="--help" for the options
	$(BIN)/python -m bench $(ARGS)

.PHONY: bench

# Issue 42: one grant flooding beside many quiet ones (docs/performance.md, "Fair to every mailbox").
bench-flood: $(STAMP) ## one grant's flood beside 1,000 quiet grants, against the same run without it: make bench-flood ARGS="--help"
	$(BIN)/python -m bench.flood $(ARGS)

.PHONY: bench-flood

# ---- deploy and operate (python -m ops; runbook: docs/operations.md) ----------------------------

.PHONY: deploy register-webhook rotate-secret redrive grants thread-state restore-state backfill shadow-report replay report-console failover gate export review-report
.PHONY: promote

deploy: $(STAMP) ## sam build + sam deploy with samconfig.toml, guided the first time (ARGS=--guided to ask again)
	@$(BIN)/python -m ops deploy $(ARGS)

register-webhook: $(STAMP) ## register the stack's webhook URL with Nylas and store the secret Nylas returns
	@$(BIN)/python -m ops register-webhook $(ARGS)

rotate-secret: $(STAMP) ## new webhook secret from Nylas, the old one kept as previous (ARGS=--clear-previous drops it)
	@$(BIN)/python -m ops rotate-secret $(ARGS)

redrive: $(LOCAL_STAMP) ## move the dead-letter queue back to the notification queue (ARGS="--peek 20" only shows; --grant G: only G's; ARGS=--local: make serve's)
	@$(BIN)/python -m ops redrive $(ARGS)

grants: $(STAMP) ## each grant's own mode, agent and limits, without a deploy: make grants ARGS="list" (show, set, pause, resume, remove; --dry-run)
	@$(BIN)/python -m ops grants $(ARGS)

promote: $(STAMP) ## a grant one step up shadow -> review -> send, its shadow or review report first: make promote ARGS="--grant G [--dry-run]"
	@$(BIN)/python -m ops promote $(ARGS)

thread-state: $(STAMP) ## one thread's lease, replies and ledger: make thread-state ARGS="--grant G --thread T --nylas"
	@$(BIN)/python -m ops thread-state $(ARGS)

backfill: $(STAMP) ## queue a window's unanswered messages (dry run): make backfill ARGS="--since 2026-11-30T08:00Z [--grant G] [--apply]"
	@$(BIN)/python -m ops backfill $(ARGS)

shadow-report: $(STAMP) ## what REPLY_MODE=shadow would have done, beside the people's answers: make shadow-report ARGS="--since 2026-11-30 [--grant G]"
	@$(BIN)/python -m ops shadow-report $(ARGS)

replay: $(LOCAL_STAMP) ## an agent over a grant's recent threads, read-only: make replay ARGS="--agent mod:fn --since 2026-11-23 --limit 200 [--grant G]"
	@$(BIN)/python -m ops replay $(ARGS)

export: $(LOCAL_STAMP) ## a grant's threads to a file, addresses pseudonymised (REPLYONCE_EXPORT_KEY): make export ARGS="--since 2026-11-23 --out week.json"
	@$(BIN)/python -m ops export $(ARGS)

review-report: $(LOCAL_STAMP) ## what people did with the review drafts: sent unchanged, edited, deleted, open: make review-report ARGS="--open-hours 24 [--grant G]"
	@$(BIN)/python -m ops review-report $(ARGS)

gate: $(LOCAL_STAMP) ## exit 1 when a saved report is worse than a baseline: make gate ARGS="--baseline before.json after.json --max-drop 0.05"
	@$(BIN)/python -m ops gate $(ARGS)

report-console: $(LOCAL_STAMP) ## replays and shadow reports side by side on 127.0.0.1: make report-console ARGS="v1.json v2.json"
	@$(BIN)/python -m devstack.report_console $(ARGS)

restore-state: $(STAMP) ## put a restored state table back while mail flows: make restore-state ARGS="--from <restored table>" (or --mark-only)
	@$(BIN)/python -m ops restore-state $(ARGS)

failover: $(STAMP) ## make REGION the active Region (across Regions): make failover ARGS="--to us-west-2 --region us-west-2"
	@$(BIN)/python -m ops failover $(ARGS)

set-api-key: $(STAMP) ## store the Nylas API key in the stack's secret (NYLAS_API_KEY or a hidden prompt)
	@$(BIN)/python -m ops set-api-key $(ARGS)

# ---- prove it (docs/reliability.md) ---------------------------------------------------------------

.PHONY: e2e

e2e: $(STAMP) ## end to end from outside: the stack AWS_SAM_STACK_NAME names (with credentials), else the local stack
	$(BIN)/python -m pytest tests/e2e/test_end_to_end.py -v -rs $(ARGS)

.PHONY: failover-drill

failover-drill: $(LOCAL_STAMP) ## two Regions, a failover mid-run, the old Region still running: make failover-drill ARGS="--notifications 200 [--slow-queued-send 85] [--mutant fence_off]"
	@$(BIN)/python -m chaos.failover $(ARGS)

.PHONY: chaos set-api-key

chaos: $(LOCAL_STAMP) ## fault injection run: make chaos ARGS="--notifications 10000 --seed 1 --write"
	@$(BIN)/python -m chaos $(ARGS)
