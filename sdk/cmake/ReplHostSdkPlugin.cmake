# SPDX-License-Identifier: Apache-2.0
#
# replhost_add_plugin(<name>
#     SOURCES <files...>             handler sources (the class with Q_PLUGIN_METADATA)
#     [RESOURCES <files...>]         driver files, embedded under :/replhost/<name>/
#     [INSTALL_DESTINATION <dir>])   default: see below
#
# Builds a language plugin as a Qt plugin module linked only against ReplHost::Sdk. The same
# function builds the first-party plugins, so a third-party plugin is built exactly like them.
#
# `cmake --install` puts the plugin where the host finds it: into the host's own plugin directory
# (ReplHostSdk_PLUGIN_DIR, from the SDK's package) when the install prefix holds it, as a
# distribution package built with prefix /usr does; otherwise into <prefix>/<libdir>/replhost/
# plugins, which the host searches for the prefixes ~/.local and /usr/local (CMake's default).
include_guard(GLOBAL)
include(GNUInstallDirs)

function(replhost_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "INSTALL_DESTINATION" "SOURCES;RESOURCES")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "replhost_add_plugin(${name}): SOURCES is required")
  endif()
  find_package(Qt6 REQUIRED COMPONENTS Core)
  add_library(${name} MODULE ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES AUTOMOC ON PREFIX "" OUTPUT_NAME "replhost-${name}")
  target_compile_features(${name} PRIVATE cxx_std_20)
  target_link_libraries(${name} PRIVATE ReplHost::Sdk Qt6::Core)
  if(arg_RESOURCES)
    qt_add_resources(${name} "${name}_driver" PREFIX "/replhost/${name}" FILES ${arg_RESOURCES})
  endif()
  if(DEFINED REPLHOST_PLUGIN_OUTPUT_DIR)
    # A first-party plugin, built in replhost's tree: installed in <libdir>/replhost/plugins, it
    # finds the SDK library two levels up (relocatable installs; /usr ones have no RUNPATH).
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${REPLHOST_PLUGIN_OUTPUT_DIR})
    if(NOT CMAKE_SKIP_INSTALL_RPATH)
      set_target_properties(${name} PROPERTIES INSTALL_RPATH "$ORIGIN/../..")
    endif()
  else()
    # A plugin built against an installed SDK: it finds the library where the SDK has it, unless
    # that is a directory the linker searches anyway.
    get_target_property(sdk_library ReplHost::Sdk LOCATION)
    get_filename_component(sdk_library_dir "${sdk_library}" DIRECTORY)
    if(NOT sdk_library_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES
       AND NOT sdk_library_dir IN_LIST CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES)
      set_target_properties(${name} PROPERTIES INSTALL_RPATH "${sdk_library_dir}")
    endif()
  endif()
  if(NOT arg_INSTALL_DESTINATION)
    set(arg_INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/replhost/plugins)
    if(ReplHostSdk_PLUGIN_DIR)
      cmake_path(IS_PREFIX CMAKE_INSTALL_PREFIX "${ReplHostSdk_PLUGIN_DIR}" NORMALIZE inside_prefix)
      if(inside_prefix)
        # Relative, so that DESTDIR and `cmake --install --prefix` still apply.
        file(RELATIVE_PATH arg_INSTALL_DESTINATION "${CMAKE_INSTALL_PREFIX}" "${ReplHostSdk_PLUGIN_DIR}")
      endif()
    endif()
  endif()
  install(TARGETS ${name} LIBRARY DESTINATION ${arg_INSTALL_DESTINATION})
endfunction()
