# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Run by `cmake --install` before anything is installed (see ProfdInstall.cmake):
# the absolute install paths under the prefix of this install.
#
# In:  CMAKE_INSTALL_PREFIX (the --prefix of this install, else the
#      configured one) and PROFD_INSTALL_<DIR> (relative or absolute).
# Out: PROFD_INSTALL_PREFIX (without a trailing slash; "" for /),
#      PROFD_INSTALL_PC_PREFIX (the same, "/" for /),
#      PROFD_INSTALL_FULL_<DIR>, and PROFD_INSTALL_PC_<DIR>: the same for a
#      pkg-config file, "${prefix}/..." when under the prefix.

string(REGEX REPLACE "/+$" "" PROFD_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(PROFD_INSTALL_PC_PREFIX "${PROFD_INSTALL_PREFIX}")
if(PROFD_INSTALL_PC_PREFIX STREQUAL "")
  set(PROFD_INSTALL_PC_PREFIX "/")
endif()
foreach(_pd_d BINDIR LIBDIR INCLUDEDIR SYSCONFDIR DATADIR MANDIR)
  set(_pd_rel "${PROFD_INSTALL_${_pd_d}}")
  if(IS_ABSOLUTE "${_pd_rel}")
    set(_pd_full "${_pd_rel}")
  elseif(_pd_d STREQUAL "SYSCONFDIR" AND PROFD_INSTALL_PREFIX MATCHES "^(/usr)?$")
    set(_pd_full "/${_pd_rel}")
  else()
    set(_pd_full "${PROFD_INSTALL_PREFIX}/${_pd_rel}")
  endif()
  set(PROFD_INSTALL_FULL_${_pd_d} "${_pd_full}")
  string(LENGTH "${PROFD_INSTALL_PREFIX}/" _pd_n)
  string(SUBSTRING "${_pd_full}" 0 ${_pd_n} _pd_head)
  if(_pd_head STREQUAL "${PROFD_INSTALL_PREFIX}/")
    string(SUBSTRING "${_pd_full}" ${_pd_n} -1 _pd_tail)
    set(PROFD_INSTALL_PC_${_pd_d} "\${prefix}/${_pd_tail}")
  else()
    set(PROFD_INSTALL_PC_${_pd_d} "${_pd_full}")
  endif()
endforeach()
