# Fresh-machine entry points: `make test` and `make bench` do all set-up themselves.
#
# Python: the current python3 when it already has torch (the GPU machine), otherwise a pinned
# .venv (requirements-dev.txt). The extension builds in place with CUDA when nvcc is found.

SHELL := /bin/bash

ifneq ($(TORCH_VERSION),)
# make test TORCH_VERSION=2.15.0: the target against another torch, in a venv and a copy of the
# tree of its own (scripts/other_torch.sh says why).
setup build test test-python test-cpp bench bench-models check-package:
	bash scripts/other_torch.sh $(TORCH_VERSION) $@
else
SYSTEM_PYTHON := $(shell command -v python3)
HAVE_TORCH := $(shell $(SYSTEM_PYTHON) -c "import torch" >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_TORCH),yes)
  PYTHON := $(SYSTEM_PYTHON)
  VENV_STAMP :=
else
  PYTHON := $(CURDIR)/.venv/bin/python
  VENV_STAMP := .venv/.installed
endif
export TORCH_CUDA_ARCH_LIST ?= 9.0
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))
JOBS ?= $(shell nproc)
CMAKE_BUILD := build/cmake
# Slow tests (huge tensors, several GB) run only when asked: make test PYTEST_ARGS="-m slow".
PYTEST_ARGS ?= -m "not slow"
CMAKE_ARGS ?=
# Inductor (the AOTInductor tests and fixtures) compiles C++ with $$CXX: scripts/test_cxx.sh
# picks it (the system g++ where there is one; it says why). TEST_CXX overrides.
TEST_CXX ?= $(shell bash scripts/test_cxx.sh)

.PHONY: setup build test test-python test-cpp bench bench-models check-package gpu-check sanitize clean

setup: build

.venv/.installed: requirements-dev.txt
	$(SYSTEM_PYTHON) -m venv .venv
	.venv/bin/pip install -q --upgrade pip
	.venv/bin/pip install -q -r requirements-dev.txt
	touch $@

# Builds torch_transpose/_C*.so in place (ninja rebuilds only what changed).
build: $(VENV_STAMP)
	MAX_JOBS=$(JOBS) $(PYTHON) setup.py -q build_ext --inplace

test: build test-python test-cpp

test-python: build
	CXX=$(TEST_CXX) $(PYTHON) -m pytest tests -q -ra $(PYTEST_ARGS)

# C++ side: the LibTorch build of the same sources, gtest suites, fixtures saved from Python,
# and an install + find_package test of examples/cpp.
test-cpp: build
	CXX=$(TEST_CXX) $(PYTHON) tests/cpp/make_fixtures.py $(CMAKE_BUILD)/fixtures
	cmake -S . -B $(CMAKE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_PREFIX_PATH="$$($(PYTHON) -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
	  -DPython3_EXECUTABLE=$(PYTHON) -DTT_TEST_FIXTURES=$(CURDIR)/$(CMAKE_BUILD)/fixtures $(CMAKE_ARGS)
	cmake --build $(CMAKE_BUILD) -j $(JOBS)
	cd $(CMAKE_BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(PYTHON) -m bench $(BENCH_ARGS)

# The model layouts (bench/cases.py model_suite): results go to a run folder under bench/runs/.
bench-models: build
	$(PYTHON) -m bench --suite models $(BENCH_ARGS)

# Everything the GPU machine must prove, in one call: build, full test suite (CUDA included),
# compute-sanitizer on a CUDA subset, and the benchmark. Logs go to $$OUT when set.
gpu-check:
	bash scripts/gpu_check.sh

# The package as a user gets it: sdist, wheel built from it, installed in a fresh venv, self-check.
check-package: $(VENV_STAMP)
	bash scripts/check_package.sh $(PYTHON)

# AddressSanitizer + UndefinedBehaviorSanitizer over the C++ tests and the CPU op path.
sanitize: $(VENV_STAMP)
	bash scripts/sanitize.sh

clean:
	rm -rf build torch_transpose/_C*.so *.egg-info

endif
