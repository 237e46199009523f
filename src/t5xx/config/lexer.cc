#include "t5xx/config/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "t5xx/util/error.h"

namespace t5xx::gin {

std::string Token::Describe() const {
  if (kind == TokenKind::kNewline) return "end of line";
  if (kind == TokenKind::kEnd) return "end of input";
  return "'" + text + "'";
}

namespace {

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& source, bool flag)
      : s_(text), source_(source), flag_(flag) {}

  std::vector<Token> Run() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        if (brackets_.empty() && !out_.empty() && out_.back().kind != TokenKind::kNewline) {
          Token t;
          t.kind = TokenKind::kNewline;
          t.loc = Here();
          out_.push_back(t);
        }
        Advance();
        line_start_ = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        Advance();
        continue;
      }
      if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') Advance();
        continue;
      }
      if (c == '\\' && Peek(1) == '\n') {  // explicit line joining
        Advance();
        Advance();
        continue;
      }
      Token t;
      t.loc = Here();
      t.first_on_line = line_start_;
      line_start_ = false;
      size_t start = pos_;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) Advance();
        t.kind = TokenKind::kName;
        t.text = s_.substr(start, pos_ - start);
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && std::isdigit(static_cast<unsigned char>(Peek(1))))) {
        LexNumber(t);
      } else if (c == '\'' || c == '"') {
        LexString(t);
      } else if (std::string("()[]{}").find(c) != std::string::npos) {
        t.kind = TokenKind::kPunct;
        t.text = std::string(1, c);
        if (c == '(' || c == '[' || c == '{') {
          brackets_.push_back(t);
        } else {
          char open = c == ')' ? '(' : c == ']' ? '[' : '{';
          if (brackets_.empty()) Fail(t.loc, std::string("unmatched '") + c + "'");
          if (brackets_.back().text[0] != open) {
            Fail(t.loc, std::string("'") + c + "' does not match '" + brackets_.back().text +
                            "' opened at " + brackets_.back().loc.ToString());
          }
          brackets_.pop_back();
        }
        Advance();
      } else if (std::string("@%=:,/.-+").find(c) != std::string::npos) {
        t.kind = TokenKind::kPunct;
        t.text = std::string(1, c);
        Advance();
      } else {
        Fail(t.loc, std::string("unexpected character '") + c + "'");
      }
      out_.push_back(std::move(t));
    }
    if (!brackets_.empty()) {
      Fail(brackets_.back().loc, "'" + brackets_.back().text + "' is never closed");
    }
    if (!out_.empty() && out_.back().kind != TokenKind::kNewline) {
      Token t;
      t.kind = TokenKind::kNewline;
      t.loc = Here();
      out_.push_back(t);
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.loc = Here();
    out_.push_back(end);
    return std::move(out_);
  }

 private:
  char Peek(size_t k) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }
  void Advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  Location Here() const { return Location{source_, flag_ ? 0 : line_, col_}; }
  [[noreturn]] void Fail(const Location& loc, const std::string& msg) const {
    throw Error(loc.ToString() + ": " + msg);
  }

  void LexNumber(Token& t) {
    size_t start = pos_;
    bool is_float = false;
    auto digits = [&](bool hex) {
      while (pos_ < s_.size() &&
             (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' ||
              (hex && std::isxdigit(static_cast<unsigned char>(s_[pos_]))))) {
        Advance();
      }
    };
    bool hex = s_[pos_] == '0' && (Peek(1) == 'x' || Peek(1) == 'X');
    if (hex) {
      Advance();
      Advance();
      digits(true);
    } else {
      digits(false);
      if (pos_ < s_.size() && s_[pos_] == '.') {
        is_float = true;
        Advance();
        digits(false);
      }
      if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
        char n = Peek(1);
        if (std::isdigit(static_cast<unsigned char>(n)) ||
            ((n == '-' || n == '+') && std::isdigit(static_cast<unsigned char>(Peek(2))))) {
          is_float = true;
          Advance();
          if (s_[pos_] == '-' || s_[pos_] == '+') Advance();
          digits(false);
        }
      }
    }
    // A number running straight into a name ("12abc") is malformed.
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) Advance();
    t.text = s_.substr(start, pos_ - start);
    std::string clean;
    for (size_t i = 0; i < t.text.size(); ++i) {
      char ch = t.text[i];
      if (ch == '_') {
        bool ok = i > 0 && i + 1 < t.text.size() && std::isxdigit(static_cast<unsigned char>(t.text[i - 1])) &&
                  std::isxdigit(static_cast<unsigned char>(t.text[i + 1]));
        if (!ok) Fail(t.loc, "invalid number '" + t.text + "' (misplaced '_')");
        continue;
      }
      clean += ch;
    }
    errno = 0;
    char* end = nullptr;
    if (is_float) {
      t.kind = TokenKind::kFloat;
      t.float_value = std::strtod(clean.c_str(), &end);
    } else {
      t.kind = TokenKind::kInt;
      t.int_value = std::strtoll(clean.c_str(), &end, hex ? 16 : 10);
      if (!hex && clean.size() > 1 && clean[0] == '0' && clean.find_first_not_of('0') != std::string::npos) {
        Fail(t.loc, "invalid number '" + t.text + "' (leading zeros are not allowed)");
      }
    }
    if (end == nullptr || *end != '\0') Fail(t.loc, "invalid number '" + t.text + "'");
    if (errno == ERANGE) Fail(t.loc, "number '" + t.text + "' is out of range");
  }

  void LexString(Token& t) {
    size_t start = pos_;
    char q = s_[pos_];
    bool triple = Peek(1) == q && Peek(2) == q;
    Advance();
    if (triple) {
      Advance();
      Advance();
    }
    std::string value;
    while (true) {
      if (pos_ >= s_.size() || (!triple && s_[pos_] == '\n')) {
        std::string shown = s_.substr(start, std::min<size_t>(pos_ - start, 40));
        Fail(t.loc, "unterminated string " + shown);
      }
      char c = s_[pos_];
      if (c == q) {
        if (!triple) {
          Advance();
          break;
        }
        if (Peek(1) == q && Peek(2) == q) {
          Advance();
          Advance();
          Advance();
          break;
        }
      }
      if (c == '\\') {
        Location esc_loc = Here();
        Advance();
        if (pos_ >= s_.size()) continue;  // reported as unterminated
        char e = s_[pos_];
        Advance();
        switch (e) {
          case '\n': break;  // line continuation inside a string
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case '0': value += '\0'; break;
          case 'a': value += '\a'; break;
          case 'b': value += '\b'; break;
          case 'f': value += '\f'; break;
          case 'v': value += '\v'; break;
          case '\\': value += '\\'; break;
          case '\'': value += '\''; break;
          case '"': value += '"'; break;
          case 'x':
          case 'u':
          case 'U': {
            int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            std::string hexs;
            for (int i = 0; i < n; ++i) {
              if (pos_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_]))) {
                Fail(esc_loc, std::string("invalid escape '\\") + e + hexs + "' in string");
              }
              hexs += s_[pos_];
              Advance();
            }
            unsigned long cp = std::strtoul(hexs.c_str(), nullptr, 16);
            AppendUtf8(value, cp, e == 'x');
            break;
          }
          default:  // unknown escapes keep the backslash, as Python does
            value += '\\';
            value += e;
        }
        continue;
      }
      value += c;
      Advance();
    }
    t.kind = TokenKind::kString;
    t.text = s_.substr(start, pos_ - start);
    t.string_value = std::move(value);
  }

  static void AppendUtf8(std::string& out, unsigned long cp, bool byte) {
    if (byte || cp < 0x80) {
      if (cp < 0x80) {
        out += static_cast<char>(cp);
        return;
      }
    }
    if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  const std::string& s_;
  std::string source_;
  bool flag_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  bool line_start_ = true;
  std::vector<Token> brackets_;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> Tokenize(const std::string& text, const std::string& source_name,
                            bool flag_source) {
  return Lexer(text, source_name, flag_source).Run();
}

}  // namespace t5xx::gin
