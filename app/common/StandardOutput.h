#pragma once
// Whether what a program printed reached its standard output: a full disk or /dev/full fails the
// writes silently unless someone looks at the stream before exiting.

namespace nearscape::app {

/// Routes C's stdout and std::cout through one stream whose writes to descriptor 1 remember the
/// first failure's reason (glibc's own stdout forgets it once errno moves on). Call first in main.
void installCheckedStandardOutput();

/// Flushes std::cout and C's stdout and says whether every write to them succeeded; when one did
/// not, prints "PROGRAM: cannot write standard output: REASON" on standard error.
bool standardOutputWritten(const char* program);

/// The exit status for `code` once standard output is checked: 1 when the writes failed and
/// `code` was 0 (success), else `code`.
int exitCheckingStandardOutput(int code, const char* program);

} // namespace nearscape::app
