#pragma once
// Start-up of the GUI, shared by the `nearscape` binary and the GUI tests.

namespace nearscape::ui {

/// The OpenGL format VTK needs (3.2 core, no multisampling). Call before QApplication exists.
void setDefaultSurfaceFormat();

/// The whole GUI program: `nearscape [PATH] [--meta FILE] [--backend B] [--screenshot PNG]`.
/// Without PATH it opens the default data set (Fashion-MNIST) when installed.
int runGui(int argc, char** argv);

} // namespace nearscape::ui
