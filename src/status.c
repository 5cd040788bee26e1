#include "common.h"

#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)

const char* gemmi8_version(void)
{
  return STRINGIFY(GEMMI8_VERSION_MAJOR) "." STRINGIFY(GEMMI8_VERSION_MINOR) "." STRINGIFY(
      GEMMI8_VERSION_PATCH);
}

const char* gemmi8_status_string(gemmi8_status status)
{
  switch (status) {
    case gemmi8_status_success: return "success";
    case gemmi8_status_invalid_parameter: return "invalid parameter";
    case gemmi8_status_unsupported_parameter: return "unsupported parameter";
    case gemmi8_status_out_of_memory: return "out of memory";
    case gemmi8_status_unsupported_hardware: return "unsupported hardware";
  }
  return "unknown status";
}
