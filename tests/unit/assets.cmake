# src/assets/*.js are JavaScript files, embedded byte for byte in outputs and serve's pages
# (CMakeLists.txt): node parses each (--check: nothing runs), so an edit that breaks an
# embedded script's syntax fails here, not in a user's browser. node comes with
# scripts/setup.sh (the browser tests need it too).
find_program(TC_NODE node)
file(GLOB TC_JS_ASSETS ${PROJECT_SOURCE_DIR}/src/assets/*.js)
foreach(js ${TC_JS_ASSETS})
  get_filename_component(name ${js} NAME)
  if(TC_NODE)
    add_test(NAME asset_syntax_${name} COMMAND ${TC_NODE} --check ${js})
  else()
    message(WARNING "node not found: the asset_syntax tests fail (scripts/setup.sh installs it)")
    add_test(NAME asset_syntax_${name} COMMAND ${CMAKE_COMMAND} -E false)
  endif()
  set_tests_properties(asset_syntax_${name} PROPERTIES LABELS quick TIMEOUT 60)
endforeach()
