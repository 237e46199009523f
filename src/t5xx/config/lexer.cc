// Tokenizer for gin text -- the implementation of lexer.h.
#include "t5xx/config/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "t5xx/util/error.h"
#include "t5xx/util/utf8.h"

namespace t5xx::gin {

std::string Token::Describe() const {
  if (kind == TokenKind::kNewline) return "end of line";
  if (kind == TokenKind::kEnd) return "end of input";
  return "'" + text + "'";
}

namespace {

// Quotation marks that word processors put in place of ' and ": U+2018..U+201F
// (‘ ’ ‚ ‛ “ ” „ ‟), the primes ′ ″, the guillemets « » ‹ › and the
// fullwidth ＂ ＇.
bool IsTypographicQuote(char32_t cp) {
  return (cp >= 0x2018 && cp <= 0x201F) || cp == 0x2032 || cp == 0x2033 || cp == 0x00AB ||
         cp == 0x00BB || cp == 0x2039 || cp == 0x203A || cp == 0xFF02 || cp == 0xFF07;
}

// The message for a character no token starts with, at s[pos]: the whole
// character (with its code point when it is not ASCII), or \xNN for a control
// character or for a byte that starts no well-formed UTF-8 character.
std::string UnexpectedCharacter(const std::string& s, size_t pos) {
  const Utf8Char ch = DecodeUtf8Char(s, pos);
  char hex[8];
  std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(s[pos]));
  if (ch.length == 0) {
    return std::string("unexpected byte '") + hex +
           "', which does not start a UTF-8 character (is the file UTF-8?)";
  }
  if (ch.code_point < 0x20 || ch.code_point == 0x7F) {
    return std::string("unexpected character '") + hex + "'";
  }
  std::string msg = "unexpected character '" + s.substr(pos, ch.length) + "'";
  if (ch.code_point >= 0x80) msg += " (" + CodePointName(ch.code_point) + ")";
  if (IsTypographicQuote(ch.code_point)) msg += "; gin strings use ' or \"";
  return msg;
}

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
      if ((c == 'r' || c == 'R') && (Peek(1) == '\'' || Peek(1) == '"')) {
        // A raw string, r'...' (Python's syntax, as gin reads it): t5x's
        // configs write regexes this way, e.g. assignment_map.
        Advance();
        LexString(t, /*raw=*/true);
        t.text = s_.substr(start, pos_ - start);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
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
        Fail(t.loc, UnexpectedCharacter(s_, pos_));
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

  // A quoted string at pos_; raw: backslashes are kept as written (a
  // backslash still keeps the next character, even a quote, in the string).
  void LexString(Token& t, bool raw = false) {
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
        const std::string shown =
            EscapeInvalidUtf8(TruncateUtf8(std::string_view(s_).substr(start, pos_ - start), 40));
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
      if (c == '\\' && raw) {
        value += c;
        Advance();
        if (pos_ < s_.size() && (s_[pos_] != '\n' || triple)) {
          value += s_[pos_];
          Advance();
        }
        continue;
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
            const unsigned long cp = std::strtoul(hexs.c_str(), nullptr, 16);
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
              Fail(esc_loc, std::string("invalid escape '\\") + e + hexs + "' in string: " +
                                (cp > 0x10FFFF ? "above U+10FFFF, the last code point"
                                               : "a surrogate, which UTF-8 cannot encode"));
            }
            AppendUtf8(value, static_cast<char32_t>(cp));  // "\xff" is U+00FF, as in Python
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
