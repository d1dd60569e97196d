// Loads bench/cases.json: a minimal JSON reader (objects, arrays, strings, integers, true/false/null)
// and the conversion of its objects into validated Cases.
#include "cases.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace tessera::bench {
namespace {

struct Json {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  std::string text;  // a string's value, or a number's literal text
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> fields;

  const Json* find(const std::string& key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return &v;
    return nullptr;
  }
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Json document() {
    Json v = value();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the document");
    return v;
  }

 private:
  Json value() {
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end of file");
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      v.kind = Json::Kind::object;
      ++pos_;
      if (!consume('}')) {
        do {
          skip_space();
          std::string key = string_literal();
          skip_space();
          if (!consume(':')) fail("expected ':'");
          v.fields.emplace_back(std::move(key), value());
        } while (consume(','));
        if (!consume('}')) fail("expected ',' or '}'");
      }
    } else if (c == '[') {
      v.kind = Json::Kind::array;
      ++pos_;
      if (!consume(']')) {
        do v.items.push_back(value());
        while (consume(','));
        if (!consume(']')) fail("expected ',' or ']'");
      }
    } else if (c == '"') {
      v.kind = Json::Kind::string;
      v.text = string_literal();
    } else if (keyword("true") || keyword("false")) {
      v.kind = Json::Kind::boolean;
    } else if (keyword("null")) {
      v.kind = Json::Kind::null;
    } else {
      v.kind = Json::Kind::number;
      const std::size_t start = pos_;
      while (pos_ < s_.size() && std::string_view("+-.eE0123456789").find(s_[pos_]) != std::string_view::npos) ++pos_;
      if (pos_ == start) fail(std::string("unexpected character '") + c + "'");
      v.text = s_.substr(start, pos_ - start);
    }
    return v;
  }

  std::string string_literal() {
    if (!consume('"')) fail("expected a string");
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size()) break;
        c = s_[pos_++];
        switch (c) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case '"':
          case '\\':
          case '/': break;
          default: fail("unsupported escape in a string");
        }
      }
      out += c;
    }
    if (!consume('"')) fail("unterminated string");
    return out;
  }

  bool keyword(std::string_view word) {
    if (s_.compare(pos_, word.size(), word) != 0) return false;
    pos_ += word.size();
    return true;
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void skip_space() {
    while (pos_ < s_.size() && std::string_view(" \t\r\n").find(s_[pos_]) != std::string_view::npos) ++pos_;
  }

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1;
    for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) line += s_[i] == '\n';
    throw std::runtime_error("line " + std::to_string(line) + ": " + what);
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

int64_t to_int(const Json& v, const std::string& what) {
  int64_t x = 0;
  const char* end = v.text.data() + v.text.size();
  if (v.kind != Json::Kind::number || std::from_chars(v.text.data(), end, x).ptr != end)
    throw std::runtime_error(what + " must be an integer");
  return x;
}

std::vector<int64_t> to_ints(const Json* v, const std::string& what) {
  if (!v || v->kind != Json::Kind::array) throw std::runtime_error(what + " must be a list of integers");
  std::vector<int64_t> out;
  for (const Json& item : v->items) {
    out.push_back(to_int(item, what));
    if (out.back() < 0) throw std::runtime_error(what + " holds a negative value");
  }
  return out;
}

std::string to_string(const Json* v, const std::string& what, bool required) {
  if (!v) {
    if (required) throw std::runtime_error("missing " + what);
    return {};
  }
  if (v->kind != Json::Kind::string) throw std::runtime_error(what + " must be a string");
  return v->text;
}

std::size_t itemsize_of(const std::string& dtype) {
  static const std::map<std::string, std::size_t> sizes = {
      {"uint8", 1},   {"int8", 1},   {"uint16", 2}, {"int16", 2},   {"float16", 2},   {"uint32", 4},     {"int32", 4},
      {"float32", 4}, {"uint64", 8}, {"int64", 8},  {"float64", 8}, {"complex64", 8}, {"complex128", 16}};
  const auto it = sizes.find(dtype);
  if (it == sizes.end()) throw std::runtime_error("unknown dtype \"" + dtype + "\"");
  return it->second;
}

// a * b, or an error if it exceeds 2^62 (no case comes near that).
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > (int64_t{1} << 62)) throw std::runtime_error("sizes overflow");
  return r;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p = checked_mul(p, x);
  return p;
}

Case to_case(const Json& obj) {
  if (obj.kind != Json::Kind::object) throw std::runtime_error("each case must be an object");
  Case c;
  c.name = to_string(obj.find("name"), "\"name\"", true);
  if (c.name.empty() || c.name.find_first_of("/ \t") != std::string::npos)
    throw std::runtime_error("case name \"" + c.name + "\" must be non-empty, without '/' or spaces");
  try {
    c.dtype = to_string(obj.find("dtype"), "\"dtype\"", true);
    c.note = to_string(obj.find("note"), "\"note\"", false);
    c.itemsize = itemsize_of(c.dtype);
    c.shape = to_ints(obj.find("shape"), "\"shape\"");
    c.reps = to_ints(obj.find("reps"), "\"reps\"");
    const auto isz = static_cast<int64_t>(c.itemsize);

    // The input buffer is C-contiguous; with "transpose_of" the input is its reversed-axes view.
    std::vector<int64_t> base = c.shape;
    if (const Json* t = obj.find("transpose_of")) {
      base = to_ints(t, "\"transpose_of\"");
      if (std::vector<int64_t>(base.rbegin(), base.rend()) != c.shape)
        throw std::runtime_error("\"shape\" must be \"transpose_of\" reversed");
    }
    std::vector<int64_t> base_strides(base.size());
    int64_t stride = isz;
    for (std::size_t i = base.size(); i-- > 0;) {
      base_strides[i] = stride;
      stride = checked_mul(stride, base[i]);
    }
    c.strides =
        obj.find("transpose_of") ? std::vector<int64_t>(base_strides.rbegin(), base_strides.rend()) : base_strides;
    c.input_bytes = static_cast<std::size_t>(checked_mul(product(base), isz));

    // numpy.tile: the shorter of shape and reps is promoted by prepending 1s.
    const std::size_t nd = std::max(c.shape.size(), c.reps.size());
    c.out_shape.assign(nd, 1);
    for (std::size_t i = 0; i < nd; ++i) {
      const std::size_t si = i + c.shape.size(), ri = i + c.reps.size();
      const int64_t extent = si >= nd ? c.shape[si - nd] : 1;
      const int64_t rep = ri >= nd ? c.reps[ri - nd] : 1;
      c.out_shape[i] = checked_mul(extent, rep);
    }
    c.out_bytes = static_cast<std::size_t>(checked_mul(product(c.out_shape), isz));
  } catch (const std::exception& e) {
    throw std::runtime_error("case \"" + c.name + "\": " + e.what());
  }
  return c;
}

}  // namespace

std::vector<Case> load_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  try {
    const Json doc = Parser(s).document();
    if (doc.kind != Json::Kind::array) throw std::runtime_error("the document must be a list of cases");
    std::vector<Case> cases;
    for (const Json& obj : doc.items) {
      cases.push_back(to_case(obj));
      for (std::size_t i = 0; i + 1 < cases.size(); ++i)
        if (cases[i].name == cases.back().name) throw std::runtime_error("duplicate case \"" + cases[i].name + "\"");
    }
    return cases;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace tessera::bench
