#pragma once
// What `nearscape --version` and `nearscape-cli --version` print: the version, the commit it was
// built from, and the backends this machine offers (with why the GPU is not one, when it is not).

#include <string>

namespace nearscape::app {

/// The commit (`git describe` at configure time) or "unknown".
const char* buildCommit();

/// "nearscape-cli 0.1.0 (commit …)\nbackends: cpu (16 threads), cuda (NVIDIA H100 …)", no final
/// newline.
/// Loads the GPU plugin to say whether it works.
std::string versionText(const std::string& program);

} // namespace nearscape::app
