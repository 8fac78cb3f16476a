# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Install paths that follow the prefix given when installing.
# Included by the top-level CMakeLists.txt after GNUInstallDirs.
#
# `cmake --install build --prefix X` (and DESTDIR) may install elsewhere than
# the CMAKE_INSTALL_PREFIX the build was configured with. Everything that
# names an install path in its content (profd.pc, profd.service) is therefore
# configured when the install runs, from the PROFD_INSTALL_FULL_<DIR>
# variables that install-paths.cmake computes then (PROFD_INSTALL_PATHS_CODE):
#
#   <DIR>: BINDIR LIBDIR INCLUDEDIR SYSCONFDIR DATADIR MANDIR, relative to
#   the prefix as GNUInstallDirs gives them (an absolute one is kept), except
#   SYSCONFDIR under the prefixes / and /usr, which is /etc (as
#   GNUInstallDirs does). Under any other prefix it stays in the prefix,
#   X/etc: GNUInstallDirs' /etc/opt/X for /opt/X is not followed, so that an
#   install into X writes nothing outside X.
#
# The same variables are set now, for the configured prefix (files of the
# build tree and the tests use them).

set(_code "")
foreach(d BINDIR LIBDIR INCLUDEDIR SYSCONFDIR DATADIR MANDIR)
  set(PROFD_INSTALL_${d} "${CMAKE_INSTALL_${d}}")
  string(APPEND _code "set(PROFD_INSTALL_${d} [==[${CMAKE_INSTALL_${d}}]==])\n")
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/install-paths.cmake)
# Code that sets them when the install runs: every install(CODE) that needs
# them starts with it, whatever component is installed.
set(PROFD_INSTALL_PATHS_CODE
    "${_code}include([==[${CMAKE_CURRENT_LIST_DIR}/install-paths.cmake]==])\n")

# profd_install_configured(TEMPLATE DESTINATION [VARS var...])
#
# When the install runs: configure TEMPLATE (@VAR@ only) with the
# PROFD_INSTALL_* variables of install-paths.cmake and the configure-time
# values of VARS, then install it into DESTINATION, which is evaluated then
# too (write it in a bracket argument: [[${PROFD_INSTALL_FULL_LIBDIR}/pkgconfig]]).
# The file keeps TEMPLATE's name without ".in".
function(profd_install_configured template destination)
  cmake_parse_arguments(A "" "" "VARS" ${ARGN})
  get_filename_component(name "${template}" NAME)
  string(REGEX REPLACE "\\.in$" "" name "${name}")
  get_filename_component(template "${template}" ABSOLUTE)
  set(code "${PROFD_INSTALL_PATHS_CODE}")
  foreach(v ${A_VARS})
    string(APPEND code "set(${v} [==[${${v}}]==])\n")
  endforeach()
  # one folder per destination: installs into two prefixes do not share it
  string(APPEND code
    "string(MD5 _h \"\$ENV{DESTDIR}|${destination}\")\n"
    "set(_out \"${CMAKE_CURRENT_BINARY_DIR}/install-time/\${_h}/${name}\")\n"
    "configure_file([==[${template}]==] \"\${_out}\" @ONLY)\n"
    "file(INSTALL DESTINATION \"${destination}\" TYPE FILE FILES \"\${_out}\")\n")
  install(CODE "${code}")
endfunction()
