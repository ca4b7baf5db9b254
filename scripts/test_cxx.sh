#!/usr/bin/env bash
# Prints the C++ compiler that tests hand to Inductor (AOTInductor packages and fixtures compile
# with $CXX): INDUCTOR_CXX when set, else the system g++ where there is one, else $CXX or c++.
# On our GPU machine the default CXX (/opt/gcc/bin/g++) builds code whose iostreams crash inside
# the torch process (README, "Notes for the GPU machine"). Used by the Makefile, gpu_check.sh
# and sanitize_cuda_graphs.sh, so the choice lives in one place.
if [[ -n ${INDUCTOR_CXX:-} ]]; then
  echo "$INDUCTOR_CXX"
elif [[ -x /usr/bin/g++ ]]; then
  echo /usr/bin/g++
else
  echo "${CXX:-c++}"
fi
