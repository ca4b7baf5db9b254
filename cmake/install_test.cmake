# ctest's install_and_build_example: install the package into a fresh prefix, configure and
# build examples/cpp against it with find_package(torch_transpose), run the example.
set(prefix "${BINARY_DIR}/install-test/prefix")
set(example_build "${BINARY_DIR}/install-test/example")
file(REMOVE_RECURSE "${BINARY_DIR}/install-test")

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install "${BINARY_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/cpp" -B "${example_build}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DTorch_DIR=${TORCH_DIR}")
run(${CMAKE_COMMAND} --build "${example_build}")
run("${example_build}/transpose_example")
