#include "cli/color_choice.hpp"

#include <unistd.h>

#include <cstdlib>

namespace sluice::cli {

bool ColorWanted(bool is_terminal, const char* no_color) {
  return is_terminal && (no_color == nullptr || no_color[0] == '\0');
}

TextStyle StyleFor(int fd) {
  return ColorWanted(::isatty(fd) == 1, std::getenv("NO_COLOR")) ? TextStyle::kColor : TextStyle::kPlain;
}

}  // namespace sluice::cli
