// MacroInterpreter::Start and ::Started: the Python plugin is loaded on first use (see macro_interpreter.hpp).
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "project/macros/macro_interpreter.hpp"

namespace sluice {

namespace {

constexpr const char* kPluginFile = "libsluice_macro_python.so";

struct Plugin {
  MacroInterpreterStartFunction start = nullptr;
  MacroInterpreterStartedFunction started = nullptr;
};

std::atomic<const Plugin*> g_plugin{nullptr};

[[noreturn]] void FailToLoad(const std::string& detail) {
  throw Error(
      MakeDiagnostic("SLU-MACRO-016", "the embedded Python interpreter could not start: " + detail, {},
                     "this is a failure of Sluice's installation, not of the project: the Python macro plugin " +
                         std::string(kPluginFile) + " must sit next to the sluice executable (or where it was built)"));
}

// Where the plugin may be: where the build put it, then next to the running executable.
std::vector<std::string> Candidates() {
  std::vector<std::string> candidates;
#ifdef SLUICE_MACRO_PLUGIN
  candidates.push_back(SLUICE_MACRO_PLUGIN);
#endif
  std::error_code error;
  std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) candidates.push_back((executable.parent_path() / kPluginFile).string());
  return candidates;
}

// Loads the plugin once per process (RTLD_GLOBAL: Python's own extension modules resolve libpython's symbols
// through it). Never unloaded.
const Plugin& LoadPlugin() {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (const Plugin* plugin = g_plugin.load()) return *plugin;
  std::string errors;
  for (const std::string& candidate : Candidates()) {
    if (!std::filesystem::exists(candidate)) continue;
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* error = ::dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(error != nullptr ? error : candidate.c_str());
      continue;
    }
    auto* plugin = new Plugin{
        reinterpret_cast<MacroInterpreterStartFunction>(::dlsym(handle, "sluice_macro_interpreter_start")),
        reinterpret_cast<MacroInterpreterStartedFunction>(::dlsym(handle, "sluice_macro_interpreter_started"))};
    if (plugin->start == nullptr || plugin->started == nullptr) {
      delete plugin;
      FailToLoad(candidate + " lacks the sluice_macro_interpreter_start/_started entry points");
    }
    g_plugin.store(plugin);
    return *plugin;
  }
  FailToLoad(errors.empty() ? "no " + std::string(kPluginFile) + " was found" : errors);
}

}  // namespace

std::unique_ptr<MacroInterpreter> MacroInterpreter::Start() {
  return std::unique_ptr<MacroInterpreter>(LoadPlugin().start());
}

bool MacroInterpreter::Started() {
  const Plugin* plugin = g_plugin.load();
  return plugin != nullptr && plugin->started();
}

}  // namespace sluice
