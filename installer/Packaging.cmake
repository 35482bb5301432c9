# CPack: a Debian package first. `cmake --build build/package --target package`.
install(FILES ${PROJECT_SOURCE_DIR}/resources/nearscape.desktop DESTINATION share/applications)
install(FILES ${PROJECT_SOURCE_DIR}/resources/io.nearscape.Nearscape.metainfo.xml
        DESTINATION share/metainfo)
install(FILES ${PROJECT_SOURCE_DIR}/resources/nearscape.svg
        DESTINATION share/icons/hicolor/scalable/apps)

set(CPACK_PACKAGE_NAME nearscape)
set(CPACK_PACKAGE_VENDOR "Nearscape")
set(CPACK_PACKAGE_CONTACT "Nearscape developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist, fasttext")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
