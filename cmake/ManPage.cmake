# Writes a man page from a program's own --help, so that the page cannot drift from the program:
#   cmake -DPROGRAM=exe -DNAME=nearscape-cli -DSUMMARY=... -DVERSION=0.1.0 -DROFF_DIR=dir
#         -DOUT=nearscape-cli.1 -P ManPage.cmake
# Every subcommand listed under "Subcommands:" (CLI11's help) gets its own --help as a
# subsection. Then ROFF_DIR/NAME.roff (when there is one) and ROFF_DIR/common.roff: exit status,
# environment, files.
function(help_of out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen ${PROGRAM} ${ARGN} --help
    OUTPUT_VARIABLE text ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGN} --help failed (${rc})")
  endif()
  # The program's path as Qt prints it → its name; troff: backslashes and leading dots escaped.
  string(REPLACE "${PROGRAM}" "${NAME}" text "${text}")
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  string(REGEX REPLACE "\n+$" "" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

help_of(main)
string(TIMESTAMP month "%B %Y" UTC)
set(page ".TH ${NAME} 1 \"${month}\" \"Nearscape ${VERSION}\" \"User Commands\"\n")
string(APPEND page ".SH NAME\n${NAME} \\- ${SUMMARY}\n")
string(APPEND page ".SH DESCRIPTION\nThe text below is the program's own \\fB\\-\\-help\\fR.\n")
string(APPEND page ".PP\n.nf\n${main}\n.fi\n")

string(FIND "${main}" "Subcommands:" at)
if(at GREATER -1)
  string(SUBSTRING "${main}" ${at} -1 list)
  string(REGEX MATCHALL "\n  [a-z][a-z-]*" subcommands "${list}")
  string(APPEND page ".SH SUBCOMMANDS\n")
  foreach(sub IN LISTS subcommands)
    string(STRIP "${sub}" sub)
    help_of(text ${sub})
    string(APPEND page ".SS ${sub}\n.nf\n${text}\n.fi\n")
  endforeach()
endif()
foreach(part ${ROFF_DIR}/${NAME}.roff ${ROFF_DIR}/common.roff)
  if(EXISTS ${part})
    file(READ ${part} extra)
    string(APPEND page "${extra}")
  endif()
endforeach()
file(WRITE "${OUT}" "${page}")
