# Fails when a field kernel object (compiled with AVX2 or AVX-512 flags) defines a weak or
# unique symbol: such a definition (an inline function, a template instance) may be the one
# the linker keeps for the whole program, and then non-kernel code would run AVX-512
# instructions on a CPU without them. Only the kernel tables may be global.
# cmake -DNM=nm -DOBJECTS="a.o;b.o" -P check_kernel_objects.cmake
foreach(object ${OBJECTS})
  execute_process(COMMAND ${NM} --defined-only ${object} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${object} failed")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
  set(globals "")
  foreach(line ${lines})
    if(line MATCHES " [WVuiBDRT] ([^ ]+)$")
      set(name "${CMAKE_MATCH_1}")
      if(line MATCHES " [WVui] ")
        message(FATAL_ERROR "${object}: shared (weak/unique) symbol ${name}")
      endif()
      if(NOT name MATCHES "^_ZN3xlp[0-9]+k[A-Za-z0-9]+KernelsE$")
        message(FATAL_ERROR "${object}: global symbol ${name} besides the kernel table")
      endif()
      list(APPEND globals ${name})
    endif()
  endforeach()
  if(NOT globals)
    message(FATAL_ERROR "${object}: no kernel table found (nm output not understood?)")
  endif()
  message(STATUS "${object}: ${globals}")
endforeach()
