# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Run by `cmake --install` (component python): install the package `profd`
# where the interpreter of the install prefix finds it, and write
# profd/_install.py, which tells the package where this install put libprofd.
#
# In: CMAKE_INSTALL_PREFIX, PROFD_INSTALL_PREFIX and PROFD_INSTALL_FULL_LIBDIR
# (cmake/install-paths.cmake), PROFD_PYTHON_EXECUTABLE, PROFD_PYTHON_DIR,
# PROFD_PY_SOURCE_DIR, PROFD_PY_MODULES, PROFD_PY_GENERATED (files of the
# package the build writes: _version.py), PROFD_PY_EXTENSIONS (its C modules:
# profd._speedups when built, else empty), PROFD_PY_GEN_DIR, PROFD_PY_SITE_FILES
# and PROFD_PY_SITE_DIRS (installed next to the package: profd-auto.pth, the
# package metadata).

set(_py_site "")
set(_py_why "")
if(NOT PROFD_PYTHON_DIR STREQUAL "")
  if(IS_ABSOLUTE "${PROFD_PYTHON_DIR}")
    set(_py_site "${PROFD_PYTHON_DIR}")
  else()
    set(_py_site "${PROFD_INSTALL_PREFIX}/${PROFD_PYTHON_DIR}")
  endif()
  set(_py_why "PROFD_PYTHON_DIR")
else()
  # The interpreter of the prefix (a virtual environment, a conda or
  # /usr/local Python), else the configured one; which of its site folders
  # lies under PREFIX/lib (Debian's /usr/bin/python3 reads
  # /usr/lib/python3/dist-packages for /usr and
  # /usr/local/lib/python3.X/dist-packages for /usr/local).
  set(_py "${PROFD_INSTALL_PREFIX}/bin/python3")
  if(NOT EXISTS "${_py}")
    set(_py "${PROFD_PYTHON_EXECUTABLE}")
  endif()
  set(_py_ver "3")
  if(_py)
    execute_process(
      COMMAND "${_py}" -c
        "import site, sys; print('%d.%d' % sys.version_info[:2]); print('\\n'.join(site.getsitepackages()))"
      OUTPUT_VARIABLE _py_out RESULT_VARIABLE _py_rc ERROR_QUIET)
    if(_py_rc EQUAL 0)
      # no empty element (the output's last newline): list() would warn
      # (CMP0007, unset where the install runs this)
      string(STRIP "${_py_out}" _py_out)
      string(REPLACE "\n" ";" _py_out "${_py_out}")
      list(POP_FRONT _py_out _py_ver)
      foreach(_py_dir ${_py_out})
        string(FIND "${_py_dir}/" "${PROFD_INSTALL_PREFIX}/lib/" _py_at)
        if(_py_at EQUAL 0)
          set(_py_site "${_py_dir}")
          set(_py_why "read by ${_py}")
          break()
        endif()
      endforeach()
    endif()
  endif()
  if(_py_site STREQUAL "")
    set(_py_site "${PROFD_INSTALL_PREFIX}/lib/python${_py_ver}/site-packages")
    set(_py_why "no python3 of this prefix reads it: set PYTHONPATH=${_py_site}")
  endif()
endif()
message(STATUS "Python package profd: ${_py_site}/profd (${_py_why})")
if(_py_why MATCHES "set PYTHONPATH")
  # Python reads .pth files in site folders only: from PYTHONPATH the
  # drop-in (PROFD_AUTO=1) would be silently off
  message(STATUS "profd drop-in (PROFD_AUTO=1): not active through PYTHONPATH (Python reads no "
                 ".pth file there); activate it with: cp ${_py_site}/profd-auto.pth "
                 "\"$(python3 -c 'import site; print(site.getsitepackages()[0])')\"/ ; "
                 "check with: PYTHONPATH=${_py_site} python3 -m profd doctor")
endif()

set(_py_files "")
foreach(_py_m ${PROFD_PY_MODULES})
  get_filename_component(_py_sub "${_py_m}" DIRECTORY) # integrations/...: the same folder
  if(_py_sub STREQUAL "")
    list(APPEND _py_files "${PROFD_PY_SOURCE_DIR}/${_py_m}")
  else()
    file(INSTALL DESTINATION "${_py_site}/profd/${_py_sub}" TYPE FILE
         FILES "${PROFD_PY_SOURCE_DIR}/${_py_m}")
  endif()
endforeach()
list(APPEND _py_files ${PROFD_PY_GENERATED})
file(INSTALL DESTINATION "${_py_site}/profd" TYPE FILE FILES ${_py_files})
if(PROFD_PY_EXTENSIONS)
  file(INSTALL DESTINATION "${_py_site}/profd" TYPE MODULE FILES ${PROFD_PY_EXTENSIONS})
endif()
# next to the package: the drop-in .pth and the package metadata (verl's
# plugin entry point)
file(INSTALL DESTINATION "${_py_site}" TYPE FILE FILES ${PROFD_PY_SITE_FILES})
file(INSTALL DESTINATION "${_py_site}" TYPE DIRECTORY FILES ${PROFD_PY_SITE_DIRS})

# The library of this install, relative to the package (both move together
# under a prefix; DESTDIR is not part of either).
file(RELATIVE_PATH _py_rel "${_py_site}/profd" "${PROFD_INSTALL_FULL_LIBDIR}")
string(MD5 _py_h "$ENV{DESTDIR}|${_py_site}")
set(_py_gen "${PROFD_PY_GEN_DIR}/${_py_h}/_install.py")
file(WRITE "${_py_gen}"
  "\"\"\"Written by cmake --install: where that install put libprofd.\"\"\"\n\n"
  "# relative to this folder\n"
  "LIBDIR = \"${_py_rel}\"\n")
file(INSTALL DESTINATION "${_py_site}/profd" TYPE FILE FILES "${_py_gen}")
