// t5xx's side of the gin oracle test (gin_oracle_test.py): evaluates gin
// cases with t5xx's engine and writes what each call receives
// (gin::DumpCalls), one JSON line per case, for the test to compare with
// gin-config calling stand-ins of the same configurables.
//
//   gin_calls_tool --registry=FILE.json|t5xx < cases.jsonl > results.jsonl
//   gin_calls_tool --registry=t5xx --dump_registry > registry.json
//   gin_calls_tool --registry=t5xx --search_path=DIR --parse FILE...
//     parses each gin file (and what it includes) and prints "ok FILE" or
//     "error FILE: message" (syntax and includes only; names are checked
//     by Finalize): tests/cli/t5x_run_files_test.sh audits t5x's files.
//
// A case: {"id", "files": {name: text}, "parse": [names in order],
//          "bindings": [text], "roots": [full names], "operative": bool}.
// Its files are written to a fresh folder that is the current directory
// while the case runs (includes are found from there, as gin finds them).
// A result: {"id", "ok": true, "calls": [...], "operative": text}
//        or {"id", "ok": false, "error": message}.
// --registry=FILE.json: {"configurables": [{"name", "params": [{"name",
// "required"}]}]}, every parameter of any type, default None.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "t5xx/config/call_dump.h"
#include "t5xx/config/config.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/util/error.h"

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

void LoadRegistry(const std::string& where, t5xx::gin::Registry& r) {
  if (where == "t5xx") {
    t5xx::run::RegisterConfigurables(r);
    return;
  }
  std::ifstream in(where);
  if (!in) throw std::runtime_error("cannot read " + where);
  const Json j = Json::parse(in);
  for (const Json& c : j.at("configurables")) {
    t5xx::gin::ConfigurableSpec spec;
    spec.name = c.at("name").get<std::string>();
    for (const Json& p : c.at("params")) {
      t5xx::gin::ParamSpec ps;
      ps.name = p.at("name").get<std::string>();
      ps.required = p.value("required", false);
      spec.params.push_back(std::move(ps));
    }
    r.Register(std::move(spec));
  }
}

Json RunCase(const Json& c, const t5xx::gin::Registry& registry, const fs::path& dir) {
  Json out{{"id", c.at("id")}};
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Json files = c.value("files", Json::object());
  for (const auto& [name, text] : files.items()) {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << text.get<std::string>();
  }
  const fs::path home = fs::current_path();
  fs::current_path(dir);
  try {
    t5xx::gin::Config config(&registry);
    const Json parse = c.value("parse", Json::array());
    const Json bindings = c.value("bindings", Json::array());
    for (const Json& f : parse) config.ParseFile(f.get<std::string>());
    for (const Json& b : bindings) {
      config.AddBinding(b.get<std::string>(), "--gin_bindings flag");
    }
    const std::vector<std::string> roots = c.at("roots").get<std::vector<std::string>>();
    config.Finalize(roots);
    out["calls"] = Json::parse(t5xx::gin::DumpCalls(config, registry, roots)).at("calls");
    if (c.value("operative", false)) out["operative"] = config.OperativeConfigString();
    out["ok"] = true;
  } catch (const t5xx::Error& e) {
    out = Json{{"id", c.at("id")}, {"ok", false}, {"error", e.what()}};
  }
  fs::current_path(home);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string registry_arg;
  bool dump_registry = false;
  std::vector<std::string> search_paths, parse;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--registry=", 0) == 0)
      registry_arg = a.substr(11);
    else if (a == "--dump_registry")
      dump_registry = true;
    else if (a.rfind("--search_path=", 0) == 0)
      search_paths.push_back(a.substr(14));
    else if (a == "--parse")
      parse.assign(argv + i + 1, argv + argc), i = argc;
    else {
      std::cerr << "gin_calls_tool: unknown argument " << a << "\n";
      return 2;
    }
  }
  if (registry_arg.empty()) {
    std::cerr << "gin_calls_tool: give --registry=FILE.json or --registry=t5xx\n";
    return 2;
  }
  t5xx::gin::Registry registry;
  LoadRegistry(registry_arg, registry);
  if (!parse.empty()) {
    for (const std::string& f : parse) {
      t5xx::gin::Config config(&registry);
      for (const std::string& d : search_paths) config.AddSearchPath(d);
      try {
        config.ParseFile(f);
        std::cout << "ok " << f << "\n";
      } catch (const t5xx::Error& e) {
        std::cout << "error " << f << ": " << e.what() << "\n";
      }
    }
    return 0;
  }
  if (dump_registry) {
    std::cout << t5xx::gin::DumpRegistry(registry) << "\n";
    return 0;
  }
  const fs::path dir = fs::temp_directory_path() / ("t5xx_gin_calls." + std::to_string(getpid()));
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << RunCase(Json::parse(line), registry, dir)
                     .dump(-1, ' ', false, Json::error_handler_t::replace)
              << "\n";
  }
  fs::remove_all(dir);
  return 0;
}
