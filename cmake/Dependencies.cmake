# Third-party dependencies: Debian packages first (libcli11-dev, nlohmann-json3-dev,
# libgtest-dev); on machines without them (the device machine), header folders passed with
# -DLOWBIT_DEPS_DIR=<dir> (include/CLI, include/nlohmann) and GoogleTest's sources in
# /usr/src/googletest.
find_package(Threads REQUIRED)

function(lowbit_header_only_dep target header pkg)
  find_path(_inc ${header} HINTS ${LOWBIT_DEPS_DIR}/include NO_CACHE)
  if(NOT _inc)
    message(FATAL_ERROR "lowbit: ${header} not found. Install ${pkg} (tools/setup.sh does), "
                        "or pass -DLOWBIT_DEPS_DIR=<folder with include/${header}>.")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} INTERFACE ${_inc})
endfunction()

find_package(nlohmann_json 3.2 QUIET)
if(NOT TARGET nlohmann_json::nlohmann_json)
  lowbit_header_only_dep(nlohmann_json::nlohmann_json nlohmann/json.hpp nlohmann-json3-dev)
endif()
find_package(CLI11 QUIET)
if(NOT TARGET CLI11::CLI11)
  lowbit_header_only_dep(CLI11::CLI11 CLI/CLI.hpp libcli11-dev)
endif()

if(LOWBIT_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT TARGET GTest::gtest_main)
    if(EXISTS /usr/src/googletest/CMakeLists.txt)
      set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
      set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
      add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/_googletest EXCLUDE_FROM_ALL)
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
    else()
      message(FATAL_ERROR "lowbit: GoogleTest not found (apt-get install libgtest-dev, or "
                          "configure with -DLOWBIT_BUILD_TESTS=OFF)")
    endif()
  endif()
  include(GoogleTest)
endif()
