// The public readers of two keyword lists (declared in select_parser.hpp).
#include <string_view>

#include "sql/keyword_table.hpp"
#include "sql/select_parser.hpp"
#include "sql/token_class.hpp"

namespace sluice::sql {

bool IsCastFunctionName(std::string_view word) { return (WordClasses(word) & token_class::kCast) != 0; }

bool IsTypeContinuationWord(std::string_view word) { return (WordClasses(word) & token_class::kTypeContinuation) != 0; }

}  // namespace sluice::sql
