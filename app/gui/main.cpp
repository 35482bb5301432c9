// nearscape: the desktop explorer.
#include "UiMain.h"

int main(int argc, char** argv) { return nearscape::ui::runGui(argc, argv); }
