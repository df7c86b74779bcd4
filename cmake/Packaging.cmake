# The Debian package (scripts/package.sh; README.md, "Install"): `cpack -G DEB` in a
# build configured with -DRATCHET_PACKAGE=ON. It installs the binary, the man page
# ratchet(1) (help2man, from the binary's own --help texts and packaging/ratchet.h2m),
# the bash, zsh and fish completions (packaging/completions/: they ask `ratchet
# __complete`), and README, docs/ and examples/ under /usr/share/doc/ratchet with the
# copyright file and a changelog.gz, as Debian policy wants.
include(GNUInstallDirs)
find_program(RATCHET_HELP2MAN help2man REQUIRED)
find_program(RATCHET_GZIP gzip REQUIRED)

set(pkg ${CMAKE_SOURCE_DIR}/packaging)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY_TEXT "runbooks over SSH: check, act gently, verify, escalate, record")
set(gen ${CMAKE_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${gen})

# ratchet(1): help2man runs packaging/man-help.sh, which prints `ratchet --help` and each
# command's --help; the sections of ratchet.h2m (description, files, exit status,
# examples, see also) come from README.md and docs/.
# help2man names the page after the program it runs: the wrapper, copied as `ratchet`.
configure_file(${pkg}/man-help.sh ${gen}/help/ratchet COPYONLY)
add_custom_command(
  OUTPUT ${gen}/ratchet.1.gz
  COMMAND ${CMAKE_COMMAND} -E env RATCHET=$<TARGET_FILE:ratchet>
          ${RATCHET_HELP2MAN} --no-info --section=1 "--name=${CPACK_PACKAGE_DESCRIPTION_SUMMARY_TEXT}"
          --include=${pkg}/ratchet.h2m --version-string=${PROJECT_VERSION}
          --output=${gen}/ratchet.1 ${gen}/help/ratchet
  COMMAND ${RATCHET_GZIP} -9nf ${gen}/ratchet.1
  DEPENDS ratchet ${gen}/help/ratchet ${pkg}/ratchet.h2m
  VERBATIM)
add_custom_target(ratchet_man ALL DEPENDS ${gen}/ratchet.1.gz)
set_property(TARGET ratchet_man APPEND PROPERTY ADDITIONAL_CLEAN_FILES ${gen}/ratchet.1)

# changelog.gz: Debian's changelog format (a native package: no changelog.Debian.gz).
add_custom_command(
  OUTPUT ${gen}/changelog.gz
  COMMAND ${RATCHET_GZIP} -9nc ${pkg}/changelog > ${gen}/changelog.gz
  DEPENDS ${pkg}/changelog
  VERBATIM)
add_custom_target(ratchet_changelog ALL DEPENDS ${gen}/changelog.gz)

install(TARGETS ratchet RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${gen}/ratchet.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${pkg}/completions/ratchet.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME ratchet)
install(FILES ${pkg}/completions/_ratchet DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${pkg}/completions/ratchet.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
set(doc ${CMAKE_INSTALL_DATADIR}/doc/ratchet)
install(FILES README.md ARCHITECTURE.md ${pkg}/copyright ${gen}/changelog.gz DESTINATION ${doc})
install(DIRECTORY docs/ DESTINATION ${doc}/docs)
install(DIRECTORY examples/ playbooks DESTINATION ${doc}/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ratchet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ratchet maintainers <maintainers@users.noreply.a-seed-d8db572e.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CPACK_PACKAGE_DESCRIPTION_SUMMARY_TEXT}")
# The synopsis is the summary; CPack writes this text, wrapped and indented, below it.
set(CPACK_PACKAGE_DESCRIPTION "ratchet runs TOML playbooks of steps (run, service, kill, verify, write,
copy, fetch, reboot) on inventory hosts over SSH. Each step checks first and
acts only when needed, escalates gently (TERM before KILL), verifies the
result and records every command in a hash-chained transcript. Plans can be
saved, reviewed and applied exactly.")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The bash completion is a function that bash-completion's loader finds by the command's
# name: without that package, bash completes nothing (zsh and fish need nothing more).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS bash-completion)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
include(CPack)
