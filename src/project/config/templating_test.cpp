// `${…}` templating: types of whole and embedded tokens, variables referencing variables, the environment,
// deferral of missing environment variables inside vars, and every error with its code.
#include "project/config/templating.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace sluice {
namespace {

EnvironmentLookup Environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

ValueOrigin Origin(int line) { return {{"streambuild_project.toml", line, 7}, "the line"}; }

// Variables as a TOML file would give them: `vars` is name → JSON value, each on its own line.
TemplateScope Scope(const nlohmann::json& vars, std::map<std::string, std::string> environment = {}) {
  std::map<std::string, ConfigValue> raw;
  int line = 10;
  for (const auto& [name, value] : vars.items()) raw[name] = ConfigValue{value, Origin(line++)};
  return TemplateScope(raw, Environment(std::move(environment)));
}

Diagnostic ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    return e.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", ""};
}

TEST(Templating, WholeTokenKeepsTheValueType) {
  TemplateScope scope =
      Scope({{"port", 8123}, {"on", true}, {"ratio", 0.5}, {"hosts", {"a", "b"}}, {"opts", {{"k", 1}}}});
  EXPECT_EQ(scope.Expand("${port}", "connection.port", Origin(1)), nlohmann::json(8123));
  EXPECT_TRUE(scope.Expand("${port}", "f", Origin(1)).is_number_integer());
  EXPECT_EQ(scope.Expand("${on}", "f", Origin(1)), nlohmann::json(true));
  EXPECT_EQ(scope.Expand("${ratio}", "f", Origin(1)), nlohmann::json(0.5));
  EXPECT_EQ(scope.Expand("${hosts}", "f", Origin(1)), nlohmann::json({"a", "b"}));
  EXPECT_EQ(scope.Expand("${opts}", "f", Origin(1)), nlohmann::json({{"k", 1}}));
}

TEST(Templating, EmbeddedTokensAreStringified) {
  TemplateScope scope = Scope({{"port", 8123}, {"on", false}, {"none", nullptr}, {"ratio", 1.5}, {"name", "eu"}});
  EXPECT_EQ(scope.Expand("h:${port}/${on}/${none}/${ratio}/${name}", "f", Origin(1)),
            nlohmann::json("h:8123/false/null/1.5/eu"));
  EXPECT_EQ(scope.ExpandString(" ${port}", "f", Origin(1)), " 8123");
}

TEST(Templating, ListsAndMapsCannotBeEmbedded) {
  TemplateScope scope = Scope({{"hosts", {"a", "b"}}, {"opts", {{"k", 1}}}});
  Diagnostic list = ErrorOf([&] { scope.Expand("hosts=${hosts}", "defaults.kafka_broker_list", Origin(4)); });
  EXPECT_EQ(list.code, "SLU-TEMPLATE-005");
  EXPECT_EQ(list.location.line, 4);
  EXPECT_NE(list.message.find("'defaults.kafka_broker_list'"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { scope.Expand("${opts}!", "f", Origin(1)); }).code, "SLU-TEMPLATE-005");
}

TEST(Templating, ValuesThatAreNotTokensStayLiteral) {
  TemplateScope scope = Scope({{"a", "A"}});
  for (const char* text : {"${}", "$a", "${a", "a}", "{a}", "$", "${ a"}) {
    EXPECT_EQ(scope.Expand(text, "f", Origin(1)), nlohmann::json(text)) << text;
  }
  EXPECT_EQ(scope.Expand("$${a}", "f", Origin(1)), nlohmann::json("$A"));
  // In `${a${b}` only `${b}` is a token.
  EXPECT_EQ(ErrorOf([&] { scope.Expand("${a${b}", "f", Origin(1)); }).code, "SLU-TEMPLATE-001");
}

TEST(Templating, ListsAndMapsAreExpandedElementByElement) {
  TemplateScope scope = Scope({{"n", 3}, {"region", "eu"}});
  nlohmann::json value = {{"count", "${n}"}, {"names", {"x-${region}", 7}}};
  EXPECT_EQ(scope.Expand(value, "sources[0]", Origin(1)), nlohmann::json({{"count", 3}, {"names", {"x-eu", 7}}}));
}

TEST(Templating, EnvironmentTokensUseTheInjectedLookup) {
  TemplateScope scope = Scope({{"host", "${ENV:CH_HOST}"}}, {{"CH_HOST", "ch.internal"}, {"CH_PORT", "8123"}});
  EXPECT_EQ(scope.variables().at("host"), "ch.internal");
  // Environment values are text, even whole tokens.
  EXPECT_EQ(scope.Expand("${ENV:CH_PORT}", "f", Origin(1)), nlohmann::json("8123"));
  Diagnostic missing = ErrorOf([&] { scope.Expand("${ENV:CH_USER}", "connection.username", Origin(3)); });
  EXPECT_EQ(missing.code, "SLU-TEMPLATE-003");
  EXPECT_NE(missing.message.find("'CH_USER'"), std::string::npos);
  EXPECT_NE(missing.message.find("'connection.username'"), std::string::npos);
  EXPECT_EQ(missing.location.line, 3);
  EXPECT_EQ(missing.source_line, "the line");
}

TEST(Templating, VariablesReferenceVariables) {
  TemplateScope scope = Scope({{"a", "${b}-x"}, {"b", "${c}"}, {"c", 1}, {"d", {"${c}", "${b}"}}});
  EXPECT_EQ(scope.variables().at("a"), "1-x");
  EXPECT_EQ(scope.variables().at("b"), 1);
  EXPECT_EQ(scope.variables().at("d"), nlohmann::json({1, 1}));
  EXPECT_EQ(scope.Expand("${a}", "f", Origin(1)), nlohmann::json("1-x"));
}

TEST(Templating, MissingEnvironmentInsideVarsIsDeferredUntilAFieldUsesIt) {
  TemplateScope scope = Scope({{"password", "${ENV:CH_PASSWORD}"}, {"dsn", "user:${password}"}, {"region", "eu"}});
  EXPECT_EQ(scope.variables(), nlohmann::json({{"region", "eu"}}));
  EXPECT_EQ(scope.deferred().at("password"), "CH_PASSWORD");
  EXPECT_EQ(scope.deferred().at("dsn"), "CH_PASSWORD");
  EXPECT_EQ(scope.Expand("${region}", "f", Origin(1)), nlohmann::json("eu"));
  Diagnostic used = ErrorOf([&] { scope.Expand("${dsn}", "connection.password", Origin(8)); });
  EXPECT_EQ(used.code, "SLU-TEMPLATE-003");
  EXPECT_EQ(used.location.line, 8);
  EXPECT_NE(used.message.find("'dsn'"), std::string::npos);
  EXPECT_NE(used.message.find("'CH_PASSWORD'"), std::string::npos);
  EXPECT_NE(used.hint.find("--vars"), std::string::npos);
}

TEST(Templating, ValuesTakenFromTheEnvironmentAreMarkedThroughEveryDerivation) {
  nlohmann::json vars = {{"key", "${ENV:API_KEY}"},
                         {"dsn", "token=${key}"},
                         {"wrapped", {{"auth", {"${dsn}"}}, {"region", "eu"}}},
                         {"late", "${ENV:REGION}-${ENV:UNSET_ONE}"},
                         {"port", "${ENV:PORT}"},
                         {"region", "eu"},
                         {"label", "${region}-${port_number}"},
                         {"port_number", 8123}};
  std::map<std::string, std::string> environment = {{"API_KEY", "sk-1"}, {"REGION", "us"}, {"PORT", "9000"}};
  TemplateScope scope = Scope(vars, environment);
  EXPECT_EQ(scope.environment_sources(),
            (std::map<std::string, std::string>{
                {"key", "API_KEY"}, {"dsn", "API_KEY"}, {"wrapped", "API_KEY"}, {"late", "REGION"}, {"port", "PORT"}}));
  EXPECT_EQ(scope.variables().at("dsn"), "token=sk-1");
  EXPECT_EQ(scope.deferred().at("late"), "UNSET_ONE");

  // Decided by the definitions, not by the environment: unset, every such variable is still marked.
  TemplateScope unset = Scope(vars);
  EXPECT_EQ(unset.environment_sources(), scope.environment_sources());
  EXPECT_EQ(unset.variables(), nlohmann::json({{"region", "eu"}, {"label", "eu-8123"}, {"port_number", 8123}}));
}

TEST(Templating, VariableCycleIsAnErrorNamingTheCycle) {
  Diagnostic cycle = ErrorOf([] { Scope({{"a", "${b}"}, {"b", "x${c}"}, {"c", "${a}"}}); });
  EXPECT_EQ(cycle.code, "SLU-TEMPLATE-004");
  EXPECT_NE(cycle.message.find("a -> b -> c -> a"), std::string::npos) << cycle.message;
  EXPECT_EQ(cycle.location.line, 12);  // c, where the cycle closes
  EXPECT_EQ(ErrorOf([] { Scope({{"self", "${self}"}}); }).code, "SLU-TEMPLATE-004");
}

TEST(Templating, UnknownVariableIsAnErrorEvenInsideAnUnusedVariable) {
  Diagnostic unused = ErrorOf([] { Scope({{"a", "${nope}"}}); });
  EXPECT_EQ(unused.code, "SLU-TEMPLATE-001");
  EXPECT_NE(unused.message.find("'vars.a'"), std::string::npos);
  TemplateScope scope = Scope({{"a", 1}});
  Diagnostic field = ErrorOf([&] { scope.Expand("${b}", "targets.dev.database", Origin(2)); });
  EXPECT_EQ(field.code, "SLU-TEMPLATE-001");
  EXPECT_NE(field.message.find("'b'"), std::string::npos);
  EXPECT_NE(field.hint.find("a"), std::string::npos);
}

TEST(Templating, OnlyTheEnvNamespaceExists) {
  TemplateScope scope = Scope({});
  Diagnostic other = ErrorOf([&] { scope.Expand("${SECRET:token}", "adapter", Origin(1)); });
  EXPECT_EQ(other.code, "SLU-TEMPLATE-002");
  EXPECT_NE(other.message.find("'SECRET'"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { scope.Expand("${env:HOME}", "f", Origin(1)); }).code, "SLU-TEMPLATE-002");
  EXPECT_EQ(ErrorOf([] { Scope({{"a", "${vault:x}"}}); }).code, "SLU-TEMPLATE-002");
  EXPECT_EQ(ErrorOf([&] { scope.Expand("${ENV:}", "f", Origin(1)); }).code, "SLU-TEMPLATE-003");
}

TEST(Templating, MappingKeysMayNotBeTemplates) {
  TemplateScope scope = Scope({{"k", "x"}});
  nlohmann::json value = {{"fine", {{"${k}", 1}}}};
  Diagnostic key = ErrorOf([&] { scope.Expand(value, "sources[0].settings", Origin(5)); });
  EXPECT_EQ(key.code, "SLU-TEMPLATE-006");
  EXPECT_EQ(key.location.line, 5);
  EXPECT_EQ(ErrorOf([] { Scope({{"m", {{"${k}", 1}}}}); }).code, "SLU-TEMPLATE-006");
}

TEST(Templating, ExpandStringRequiresAStringWithoutShowingTheValue) {
  TemplateScope scope = Scope({{"secret_number", 918273645}});
  Diagnostic typed = ErrorOf([&] { scope.ExpandString("${secret_number}", "connection.password", Origin(1)); });
  EXPECT_EQ(typed.code, "SLU-TEMPLATE-007");
  EXPECT_EQ(typed.message.find("918273645"), std::string::npos);
  EXPECT_EQ(scope.ExpandString("pw-${secret_number}", "f", Origin(1)), "pw-918273645");
}

TEST(Templating, StringExpanderCallbackReportsTheLocation) {
  TemplateScope scope = Scope({{"topic", "orders"}});
  auto expand = scope.StringExpander();
  EXPECT_EQ(expand("source.${topic}", {"sources/a.yml", 3, 12}), "source.orders");
  Diagnostic error = ErrorOf([&] { expand("${missing}", {"sources/a.yml", 4, 9}); });
  EXPECT_EQ(error.code, "SLU-TEMPLATE-001");
  EXPECT_EQ(error.location.file, "sources/a.yml");
  EXPECT_EQ(error.location.line, 4);
  EXPECT_EQ(error.message.rfind("this value", 0), 0u);
}

TEST(Templating, DefaultScopeHasNoVariables) {
  TemplateScope scope;
  EXPECT_EQ(scope.variables(), nlohmann::json::object());
  EXPECT_EQ(scope.Expand("plain", "f", Origin(1)), nlohmann::json("plain"));
}

}  // namespace
}  // namespace sluice
