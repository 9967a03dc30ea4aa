# SPDX-License-Identifier: Apache-2.0
# The symbols file of libreplhost-sdk1, made from the built library and the committed template
# (libreplhost-sdk1.symbols) by dpkg-gensymbols, as dh_makeshlibs makes it, with every check on
# (-c4): the build fails when the library exports a symbol the template does not declare, when
# it lost one that an earlier version declared, or when the library itself is not the one named.
# dpkg-gensymbols lets a symbol declared at the version being built go again, since no release
# has had it.
#   cmake -DLIBRARY=<.so> -DTEMPLATE=<.symbols> -DVERSION=<package version> -DOUTPUT=<file>
#         -P gensymbols.cmake
# finish-debs.cmake runs it on the package's tree (OUTPUT its DEBIAN/symbols); tst_debpackage
# runs it on changed templates, to see it fail.
foreach(variable LIBRARY TEMPLATE VERSION OUTPUT)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "gensymbols.cmake: -D${variable}=… is missing")
  endif()
endforeach()
get_filename_component(library_dir "${LIBRARY}" DIRECTORY)
file(REMOVE "${OUTPUT}")  # an existing output would be dpkg-gensymbols' starting point
# Run where there is no debian/ directory, whose files dpkg-gensymbols would read.
execute_process(
  COMMAND dpkg-gensymbols -plibreplhost-sdk1 -v${VERSION} -P${library_dir} -e${LIBRARY} -I${TEMPLATE}
          -O${OUTPUT} -c4
  WORKING_DIRECTORY "${library_dir}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE diff
  ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  # dpkg-gensymbols' words and diff as it wrote them (a FATAL_ERROR message is reflowed).
  message(NOTICE "${errors}${diff}")
  message(FATAL_ERROR "The symbols libreplhost-sdk.so.1 exports differ from ${TEMPLATE}: "
          "see dpkg-gensymbols' diff above, docs/plugin-sdk.md (\"ABI rules\") for what may "
          "change, and packaging/README.md for how to update the file.")
endif()
