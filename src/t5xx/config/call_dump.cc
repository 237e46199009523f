// See call_dump.h.
#include "t5xx/config/call_dump.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "t5xx/util/error.h"

namespace t5xx::gin {
namespace {

using Json = nlohmann::json;
using Node = std::pair<std::string, std::string>;  // (full name, scope)

class Dumper {
 public:
  Dumper(Config& config, const Registry& registry) : config_(config), registry_(registry) {}

  // The call of `node`; `calling` holds the calls in progress whose
  // arguments are being made (gin's Python stack), `expanding` the
  // callables being called.
  Json Call(const Node& node, std::vector<Node>& calling, std::vector<Node>& expanding) {
    if (std::find(calling.begin(), calling.end(), node) != calling.end()) {
      throw Error("reference cycle: " + Name(node) + " is called while its own arguments are made");
    }
    const ConfigurableSpec* spec = registry_.Find(node.first);
    if (spec == nullptr) throw Error("unregistered configurable '" + node.first + "'");
    calling.push_back(node);
    std::vector<const ParamSpec*> params;
    for (const ParamSpec& p : spec->params) params.push_back(&p);
    std::sort(params.begin(), params.end(),
              [](const ParamSpec* a, const ParamSpec* b) { return a->name < b->name; });
    Json args = Json::object();
    for (const ParamSpec* p : params) {
      if (!p->required && !config_.IsBound(node.first, p->name, node.second)) {
        args[p->name] = Json{{"default", true}};
        continue;
      }
      args[p->name] = ValueJson(config_.Query(node.first, p->name, node.second), node.second,
                                calling, expanding);
    }
    calling.pop_back();
    return Json{{"fn", node.first}, {"scope", node.second}, {"args", std::move(args)}};
  }

 private:
  static std::string Name(const Node& n) {
    return n.second.empty() ? n.first : n.second + "/" + n.first;
  }

  Json ValueJson(const Value& v, const std::string& scope, std::vector<Node>& calling,
                 std::vector<Node>& expanding) {
    using K = Value::Kind;
    switch (v.kind()) {
      case K::kNone:
        return nullptr;
      case K::kBool:
        return v.AsBool();
      case K::kInt:
        return v.AsInt();
      case K::kFloat:
        return v.AsFloat();
      case K::kString:
        return v.AsString();
      case K::kList:
      case K::kTuple: {
        Json items = Json::array();
        for (const Value& item : v.AsList())
          items.push_back(ValueJson(item, scope, calling, expanding));
        return Json{{v.kind() == K::kList ? "list" : "tuple", std::move(items)}};
      }
      case K::kDict: {
        Json items = Json::array();
        for (const auto& [k, val] : v.AsDict()) {
          items.push_back(Json::array({ValueJson(k, scope, calling, expanding),
                                       ValueJson(val, scope, calling, expanding)}));
        }
        return Json{{"dict", std::move(items)}};
      }
      case K::kReference: {
        const Node node{v.reference_name(), CallScope(scope, v)};
        if (v.reference_evaluated()) return Json{{"call", Call(node, calling, expanding)}};
        if (std::find(expanding.begin(), expanding.end(), node) != expanding.end()) {
          return Json{
              {"callable", {{"fn", node.first}, {"scope", node.second}, {"recursive", true}}}};
        }
        expanding.push_back(node);
        std::vector<Node> fresh;  // called later, at top level
        Json call = Call(node, fresh, expanding);
        expanding.pop_back();
        return Json{{"callable", std::move(call)}};
      }
      case K::kRequired:
        throw Error(v.location().ToString() + ": %gin.REQUIRED reaches a call of " +
                    v.description());
      case K::kMacro:
        throw Error("internal error: unresolved macro %" + v.macro_name());
    }
    return nullptr;
  }

  Config& config_;
  const Registry& registry_;
};

}  // namespace

std::string DumpCalls(Config& config, const Registry& registry,
                      const std::vector<std::string>& roots) {
  Dumper dumper(config, registry);
  Json calls = Json::array();
  for (const std::string& root : roots) {
    std::vector<Node> calling, expanding;
    calls.push_back(dumper.Call(Node{root, ""}, calling, expanding));
  }
  return Json{{"calls", std::move(calls)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string DumpRegistry(const Registry& registry) {
  Json list = Json::array();
  for (const std::string& name : registry.Names()) {
    Json params = Json::array();
    for (const ParamSpec& p : registry.Find(name)->params) {
      params.push_back({{"name", p.name}, {"required", p.required}});
    }
    list.push_back({{"name", name}, {"params", std::move(params)}});
  }
  return Json{{"configurables", std::move(list)}}.dump();
}

}  // namespace t5xx::gin
