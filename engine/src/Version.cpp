#include "nearscape/Nearscape.h"

namespace nearscape {
const char* engineVersion() {
  return NEARSCAPE_VERSION;
}
} // namespace nearscape
