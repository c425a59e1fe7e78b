// Private to project_config.cpp and pipeline_config.cpp: the allowed shape of a TOML file's keys and the
// located, typed reads of a TOML document. toml++ types are only declared here (toml++/toml.h is heavy, so
// only the .cpp files that read TOML include it).
// Every failure is a sluice::Error located in the document (see project_config.hpp for the codes).
// Thread-safety: pure functions over the values passed in.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "project/config/project_config.hpp"

// toml++ 3 declares its types in the inline namespace toml::v3; a mismatch with the installed toml++ is a
// compile error where toml++/toml.h is included too.
namespace toml {
inline namespace v3 {
class node;
class table;
struct source_region;
}  // namespace v3
}  // namespace toml

namespace sluice {

// A TOML table's known keys: each a leaf, a nested table with its own shape, or a free map (any keys).
// `any_key_shape` describes tables whose keys are names (e.g. [targets.<name>]).
struct KeyShape {
  enum class Kind { kLeaf, kTable, kFreeMap };
  Kind kind = Kind::kLeaf;
  std::map<std::string, KeyShape> children;
  std::shared_ptr<KeyShape> any_key_shape;
};

// The keys pipeline.toml may hold.
KeyShape PipelineShape();

// A TOML file's path and text, so every diagnostic can point into it.
struct TomlDocument {
  std::string file;  // relative path, for messages
  std::string text;
};

// Reads `relative` under `root`.
TomlDocument ReadToml(const std::filesystem::path& root, const std::string& relative);

// The parsed document; SLU-CONFIG-001 when it is not TOML.
toml::table ParseToml(const TomlDocument& doc);

[[noreturn]] void Fail(const TomlDocument& doc, const toml::source_region& region, std::string code,
                       std::string message, std::string hint);

// Checks every key of `table` (at dotted `path`, "" at the top) against `shape`: SLU-CONFIG-002 for an unknown
// key, SLU-CONFIG-003 for a value that must be a table, SLU-TEMPLATE-006 for a key containing `${`.
void CheckShape(const TomlDocument& doc, const toml::table& table, const KeyShape& shape, const std::string& path);

// A TOML value as JSON (dates and times as their TOML text).
nlohmann::json ToJson(const toml::node& node);

// SLU-CONFIG-003: `field` must be `expected`.
[[noreturn]] void FailType(const TomlDocument& doc, const toml::node& node, const std::string& field,
                           const std::string& expected, const std::string& hint);

// In each reader `prefix` is the dotted path of the table holding `key` ("" at the top, else ending in ".");
// an absent key is nullopt.
std::optional<std::string> OptionalString(const TomlDocument& doc, const toml::table& table, const std::string& key,
                                          const std::string& prefix);
std::optional<Located<PipelineMode>> OptionalPipelineMode(const TomlDocument& doc, const toml::table& table,
                                                          const std::string& key, const std::string& prefix);

// `text` without leading and trailing whitespace.
std::string Trim(const std::string& text);

// The sections that the project file and pipeline.toml share.
std::optional<Located<ReplayOnChange>> ParseReplayOnChange(const TomlDocument& doc, const toml::table& parent,
                                                           const std::string& prefix);
std::optional<Located<BoundedReplayFallback>> ParseFallback(const TomlDocument& doc, const toml::table& table,
                                                            const std::string& prefix);
AuditDefaults ParseAuditDefaults(const TomlDocument& doc, const toml::table* table, const std::string& prefix);

}  // namespace sluice
