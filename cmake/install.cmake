# cmake --install: header, library, CLI, pkg-config file and a CMake package config.
include(CMakePackageConfigHelpers)

install(TARGETS devtensor EXPORT devtensorTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT devtensorTargets NAMESPACE devtensor::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/devtensor)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/devtensorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/devtensorConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/devtensor)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/devtensorConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/devtensorConfig.cmake ${PROJECT_BINARY_DIR}/devtensorConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/devtensor)

# The .pc file is relocatable: prefix is found from the file's own directory
# (${pcfiledir}), so `cmake --install --prefix <anywhere>` gives a working pkg-config.
file(RELATIVE_PATH DT_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" DT_PC_TO_PREFIX "${DT_PC_TO_PREFIX}")
set(DT_PC_PREFIX "\${pcfiledir}/${DT_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/devtensor.pc.in ${PROJECT_BINARY_DIR}/devtensor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/devtensor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
