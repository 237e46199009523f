// Parser for gin files -- the implementation of parser.h.
#include "t5xx/config/parser.h"

#include <algorithm>
#include <limits>

#include "t5xx/config/lexer.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::gin {

namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  std::vector<Statement> ParseFile() {
    std::vector<Statement> out;
    // Selector of the block being parsed (empty when not in a block).
    bool in_block = false;
    std::string block_scope, block_configurable;
    bool block_has_lines = false;
    Location block_loc;
    while (Peek().kind != TokenKind::kEnd) {
      if (Peek().kind == TokenKind::kNewline) {
        Next();
        continue;
      }
      const Token& first = Peek();
      bool indented = first.loc.column > 1;
      if (indented) {
        if (!in_block) Fail(first, "unexpected indentation before");
        Statement st = ParseBlockLine(block_scope, block_configurable);
        block_has_lines = true;
        out.push_back(std::move(st));
        continue;
      }
      if (in_block && !block_has_lines) {
        Fail(block_loc, "block '" + block_configurable + ":' has no indented 'param = value' lines");
      }
      in_block = false;
      if (IsName(first, "from") && t_[pos_ + 1].kind == TokenKind::kName) {
        ParseFromImport(out);
      } else if (IsName(first, "import") && t_[pos_ + 1].kind == TokenKind::kName) {
        ParseImport(out);
      } else if (IsName(first, "include") && t_[pos_ + 1].kind == TokenKind::kString) {
        Statement st;
        st.kind = Statement::Kind::kInclude;
        st.loc = Next().loc;
        st.path = Next().string_value;
        ExpectEndOfLine("after the include path");
        out.push_back(std::move(st));
      } else {
        Statement st = ParseKey();
        if (IsPunct(Peek(), ":")) {
          Next();
          ExpectEndOfLine("after the block header '" + KeyText(st) + ":'");
          in_block = true;
          block_has_lines = false;
          block_loc = st.loc;
          // In a block header the whole name is the configurable, dotted or
          // not ('Feature:' names a configurable as gin's selectors do).
          if (st.kind == Statement::Kind::kMacro) {
            const size_t slash = st.param.rfind('/');
            block_scope = slash == std::string::npos ? "" : st.param.substr(0, slash);
            block_configurable = st.param.substr(slash == std::string::npos ? 0 : slash + 1);
          } else {
            block_scope = st.scope;
            block_configurable = st.configurable + "." + st.param;
          }
          continue;
        }
        Expect("=", "after '" + KeyText(st) + "'");
        st.value = ParseValue();
        ExpectEndOfLine("after the value of '" + KeyText(st) + "'");
        out.push_back(std::move(st));
      }
    }
    if (in_block && !block_has_lines) {
      Fail(block_loc, "block '" + block_configurable + ":' has no indented 'param = value' lines");
    }
    return out;
  }

  Value ParseSingleValue() {
    return ParseWhole([this] { return ParseValue(); }, "the value");
  }

  Statement ParseSingleKey() {
    return ParseWhole([this] { return ParseKey(); }, "the binding name");
  }

 private:
  // parse() over the whole text (blank lines around it allowed); anything
  // after it is an error "unexpected text after <what>:".
  template <typename ParseFn>
  auto ParseWhole(ParseFn parse, const char* what) -> decltype(parse()) {
    SkipNewlines();
    auto result = parse();
    SkipNewlines();
    if (Peek().kind != TokenKind::kEnd) {
      Fail(Peek(), std::string("unexpected text after ") + what + ":");
    }
    return result;
  }

  const Token& Peek() const { return t_[pos_]; }
  const Token& Next() {
    const Token& t = t_[pos_];
    if (t.kind != TokenKind::kEnd) ++pos_;
    return t;
  }
  void SkipNewlines() {
    while (Peek().kind == TokenKind::kNewline) Next();
  }
  static bool IsPunct(const Token& t, const char* p) {
    return t.kind == TokenKind::kPunct && t.text == p;
  }
  static bool IsName(const Token& t, const char* n) {
    return t.kind == TokenKind::kName && t.text == n;
  }
  [[noreturn]] static void Fail(const Location& loc, const std::string& msg) {
    throw Error(loc.ToString() + ": " + msg);
  }
  // "<loc>: <msg> <token>" e.g. "x.gin:3:7: expected '=' after 'a.b', got ':'".
  [[noreturn]] static void Fail(const Token& tok, const std::string& msg) {
    throw Error(tok.loc.ToString() + ": " + msg + " " + tok.Describe());
  }
  void Expect(const char* p, const std::string& context) {
    if (!IsPunct(Peek(), p)) Fail(Peek(), std::string("expected '") + p + "' " + context + ", got");
    Next();
  }
  void ExpectEndOfLine(const std::string& context) {
    if (Peek().kind == TokenKind::kNewline || Peek().kind == TokenKind::kEnd) {
      Next();
      return;
    }
    Fail(Peek(), "expected end of line " + context + ", got");
  }
  std::string ExpectName(const std::string& context) {
    if (Peek().kind != TokenKind::kName) Fail(Peek(), "expected a name " + context + ", got");
    return Next().text;
  }
  // NAME ('.' NAME)*
  std::string ParseDotted(const std::string& context) {
    std::string s = ExpectName(context);
    while (IsPunct(Peek(), ".")) {
      Next();
      s += "." + ExpectName("after '" + s + ".'");
    }
    return s;
  }
  // [scope '/']* dotted -> (scope, dotted)
  std::pair<std::string, std::string> ParseScopedName(const std::string& context) {
    std::string scope;
    std::string name = ParseDotted(context);
    while (IsPunct(Peek(), "/")) {
      Next();
      if (name.find('.') != std::string::npos) {
        Fail(t_[pos_ - 1].loc, "scope names cannot contain '.', got '" + name + "/'");
      }
      scope = JoinName(scope, name);
      name = ParseDotted("after '" + scope + "/'");
    }
    return {scope, name};
  }

  static std::string KeyText(const Statement& st) {
    return JoinName(st.scope, JoinName(st.configurable, st.param, '.'));
  }

  Statement ParseKey() {
    Statement st;
    st.loc = Peek().loc;
    auto [scope, name] = ParseScopedName("at the start of a binding");
    size_t dot = name.rfind('.');
    st.scope = scope;
    if (dot == std::string::npos) {
      // A scoped macro ("train/STEPS = 3") is a macro named "train/STEPS",
      // read as %train/STEPS (gin binds it as train/STEPS/gin.macro.value).
      st.kind = Statement::Kind::kMacro;
      st.param = JoinName(scope, name);
      st.scope.clear();
    } else {
      st.kind = Statement::Kind::kBinding;
      st.configurable = name.substr(0, dot);
      st.param = name.substr(dot + 1);
    }
    return st;
  }

  Statement ParseBlockLine(const std::string& scope, const std::string& configurable) {
    Statement st;
    st.kind = Statement::Kind::kBinding;
    st.loc = Peek().loc;
    st.scope = scope;
    st.configurable = configurable;
    st.param = ExpectName("(a parameter name) in the block for '" + configurable + "'");
    if (IsPunct(Peek(), ".") || IsPunct(Peek(), "/")) {
      Fail(Peek(), "inside the block for '" + configurable +
                       "' lines must be 'param = value' with a plain parameter name; got");
    }
    Expect("=", "after '" + st.param + "' in the block for '" + configurable + "'");
    st.value = ParseValue();
    ExpectEndOfLine("after the value of '" + configurable + "." + st.param + "'");
    return st;
  }

  void ParseFromImport(std::vector<Statement>& out) {
    Location loc = Next().loc;  // 'from'
    std::string module = ParseDotted("after 'from'");
    if (!IsName(Peek(), "import")) Fail(Peek(), "expected 'import' after 'from " + module + "', got");
    Next();
    while (true) {
      Location name_loc = Peek().loc;
      std::string name = ExpectName("after 'import'");
      std::string alias = name;
      if (IsName(Peek(), "as")) {
        Next();
        alias = ExpectName("after 'as'");
      }
      Statement st;
      st.loc = loc;
      if (module == "__gin__") {
        if (name != "dynamic_registration") {
          Fail(name_loc, "unsupported 'from __gin__ import " + name +
                             "' (only 'dynamic_registration' is supported)");
        }
        st.kind = Statement::Kind::kDynamicRegistration;
      } else {
        st.kind = Statement::Kind::kImport;
        st.module = module + "." + name;
        st.alias = alias;
      }
      out.push_back(std::move(st));
      if (!IsPunct(Peek(), ",")) break;
      Next();
    }
    ExpectEndOfLine("after the import");
  }

  void ParseImport(std::vector<Statement>& out) {
    Location loc = Next().loc;  // 'import'
    Statement st;
    st.kind = Statement::Kind::kImport;
    st.loc = loc;
    st.module = ParseDotted("after 'import'");
    st.alias = st.module;
    if (IsName(Peek(), "as")) {
      Next();
      st.alias = ExpectName("after 'as'");
    }
    ExpectEndOfLine("after 'import " + st.module + "'");
    out.push_back(std::move(st));
  }

  Value ParseValue() {
    const Token& tok = Peek();
    Location loc = tok.loc;
    // Values nest by recursion: bound the depth so that no input overflows
    // the stack (issue 17).
    if (depth_ >= kMaxGinValueDepth) {
      Fail(tok, "value nested more than " + std::to_string(kMaxGinValueDepth) +
                    " levels deep (the limit), at");
    }
    struct DepthGuard {
      int& depth;
      explicit DepthGuard(int& d) : depth(d) { ++depth; }
      ~DepthGuard() { --depth; }
    } guard(depth_);
    switch (tok.kind) {
      case TokenKind::kInt: Next(); return Value::Int(tok.int_value, loc);
      case TokenKind::kFloat: Next(); return Value::Float(tok.float_value, loc);
      case TokenKind::kString: {
        std::string s;
        while (Peek().kind == TokenKind::kString) s += Next().string_value;  // "a" "b"
        return Value::String(std::move(s), loc);
      }
      case TokenKind::kName: {
        if (tok.text == "None") { Next(); return Value::None(loc); }
        if (tok.text == "True") { Next(); return Value::Bool(true, loc); }
        if (tok.text == "False") { Next(); return Value::Bool(false, loc); }
        Fail(tok, "expected a value (strings need quotes, references start with '@', macros with '%'), got");
      }
      case TokenKind::kNewline:
      case TokenKind::kEnd:
        Fail(tok, "expected a value, got");
      case TokenKind::kPunct: break;
    }
    const std::string p = tok.text;
    if (p == "-" || p == "+") return ParseSignedNumber(loc);
    if (p == "(") return ParseParenthesized(loc);
    if (p == "[") return ParseList(loc);
    if (p == "{") return ParseDict(loc);
    if (p == "@") return ParseReference(loc);
    if (p == "%") return ParseMacro(loc);
    Fail(tok, "expected a value, got");
  }

  // '-' or '+' and a number.
  Value ParseSignedNumber(const Location& loc) {
    const std::string p = Next().text;
    const Token& num = Peek();
    if (num.kind == TokenKind::kInt) {
      Next();
      if (p == "-") {
        if (num.int_value == std::numeric_limits<int64_t>::min()) Fail(num, "number out of range:");
        return Value::Int(-num.int_value, loc);
      }
      return Value::Int(num.int_value, loc);
    }
    if (num.kind == TokenKind::kFloat) {
      Next();
      return Value::Float(p == "-" ? -num.float_value : num.float_value, loc);
    }
    Fail(num, "expected a number after '" + p + "', got");
  }

  // '(' ... ')': a tuple, or a parenthesized value.
  Value ParseParenthesized(const Location& loc) {
    Next();
    if (IsPunct(Peek(), ")")) {
      Next();
      return Value::Tuple({}, loc);
    }
    Value first = ParseValue();
    if (IsPunct(Peek(), ")")) {  // parenthesized value, not a tuple
      Next();
      return first;
    }
    std::vector<Value> items;
    items.push_back(std::move(first));
    ParseSequenceRest(items, ")", "tuple");
    return Value::Tuple(std::move(items), loc);
  }

  Value ParseList(const Location& loc) {
    Next();
    std::vector<Value> items;
    if (IsPunct(Peek(), "]")) {
      Next();
      return Value::List({}, loc);
    }
    items.push_back(ParseValue());
    ParseSequenceRest(items, "]", "list");
    return Value::List(std::move(items), loc);
  }

  Value ParseDict(const Location& loc) {
    Next();
    std::vector<std::pair<Value, Value>> items;
    while (!IsPunct(Peek(), "}")) {
      Value key = ParseValue();
      Expect(":", "after a dict key");
      Value val = ParseValue();
      items.emplace_back(std::move(key), std::move(val));
      if (IsPunct(Peek(), ",")) {
        Next();
        continue;
      }
      if (!IsPunct(Peek(), "}")) Fail(Peek(), "expected ',' or '}' in dict, got");
    }
    Next();
    return Value::Dict(std::move(items), loc);
  }

  // '@' [scope/]name ['()'].
  Value ParseReference(const Location& loc) {
    Next();
    auto [scope, name] = ParseScopedName("after '@'");
    bool evaluated = false;
    if (IsPunct(Peek(), "(")) {
      Next();
      if (!IsPunct(Peek(), ")")) {
        Fail(Peek(), "references take no arguments: expected ')' after '@" + name + "(', got");
      }
      Next();
      evaluated = true;
    }
    return Value::Reference(name, scope, evaluated, loc);
  }

  // '%' [scope/]name, or %gin.REQUIRED.
  Value ParseMacro(const Location& loc) {
    Next();
    auto [scope, dotted] = ParseScopedName("after '%'");
    const std::string name = JoinName(scope, dotted);
    if (name == "gin.REQUIRED") return Value::Required(loc);
    if (name.rfind("gin.", 0) == 0) {
      Fail(loc, "unsupported '%" + name + "' (only %gin.REQUIRED is supported)");
    }
    return Value::Macro(name, loc);
  }

  // After the first item: (',' value)* [','] close
  void ParseSequenceRest(std::vector<Value>& items, const char* close, const char* what) {
    while (true) {
      if (IsPunct(Peek(), close)) {
        Next();
        return;
      }
      if (!IsPunct(Peek(), ",")) {
        Fail(Peek(), std::string("expected ',' or '") + close + "' in " + what + ", got");
      }
      Next();
      if (IsPunct(Peek(), close)) {
        Next();
        return;
      }
      items.push_back(ParseValue());
    }
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  int depth_ = 0;  // ParseValue calls in progress
};

}  // namespace

std::vector<Statement> ParseGinText(const std::string& text, const std::string& source_name,
                                    bool flag_source) {
  return Parser(Tokenize(text, source_name, flag_source)).ParseFile();
}

Value ParseGinValue(const std::string& text, const std::string& source_name, bool flag_source) {
  return Parser(Tokenize(text, source_name, flag_source)).ParseSingleValue();
}

Statement ParseGinKey(const std::string& text, const std::string& source_name, bool flag_source) {
  return Parser(Tokenize(text, source_name, flag_source)).ParseSingleKey();
}

}  // namespace t5xx::gin
