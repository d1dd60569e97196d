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

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

// numpy.tile: the shorter of shape and reps is promoted by prepending 1s.
std::vector<int64_t> tile_out_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& reps) {
  const std::size_t nd = std::max(shape.size(), reps.size());
  std::vector<int64_t> out(nd, 1);
  for (std::size_t i = 0; i < nd; ++i) {
    const std::size_t si = i + shape.size(), ri = i + reps.size();
    const int64_t extent = si >= nd ? shape[si - nd] : 1;
    const int64_t rep = ri >= nd ? reps[ri - nd] : 1;
    out[i] = checked_mul(extent, rep);
  }
  return out;
}

// numpy.broadcast_to (bidirectional = false: the output is target) or ONNX Expand (true: the
// numpy broadcast of both shapes, the shorter promoted by prepending 1s).
std::vector<int64_t> broadcast_out_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& target,
                                         bool bidirectional) {
  if (!bidirectional && target.size() < shape.size())
    throw std::runtime_error("\"target\" has fewer axes than \"shape\"");
  const std::size_t nd = std::max(shape.size(), target.size());
  std::vector<int64_t> out(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    const std::size_t si = i + shape.size(), ti = i + target.size();
    const int64_t a = si >= nd ? shape[si - nd] : 1, b = ti >= nd ? target[ti - nd] : 1;
    if (a == b || a == 1)
      out[i] = b;
    else if (bidirectional && b == 1)
      out[i] = a;
    else
      throw std::runtime_error("input extent " + std::to_string(a) + " does not broadcast to " + std::to_string(b) +
                               " on output axis " + std::to_string(i));
  }
  return out;
}

// repeat's arguments ("repeats", "axis") of an input of `shape` into c (axis, repeats,
// repeats_text, repeat_ends); returns numpy.repeat's output shape.
std::vector<int64_t> parse_repeat(const Json& obj, const std::vector<int64_t>& shape, Case& c) {
  const int nd = static_cast<int>(shape.size());
  const Json* axis = obj.find("axis");
  if (axis && axis->kind != Json::Kind::null) {
    const int64_t a = to_int(*axis, "\"axis\"");
    if (a < -nd || a >= nd)
      throw std::runtime_error("\"axis\" " + std::to_string(a) + " is out of range for " + std::to_string(nd) +
                               " axes");
    c.axis = static_cast<int>(a < 0 ? a + nd : a);
  }
  const int64_t extent = c.axis ? shape[*c.axis] : product(shape);
  const Json* r = obj.find("repeats");
  if (!r) throw std::runtime_error("missing \"repeats\"");
  if (r->kind == Json::Kind::number) {
    c.repeats = {to_int(*r, "\"repeats\"")};
    if (c.repeats[0] < 0) throw std::runtime_error("\"repeats\" is negative");
    c.repeats_text = std::to_string(c.repeats[0]);
  } else if (r->kind == Json::Kind::array) {
    c.repeats = to_ints(r, "\"repeats\"");
    if (c.repeats.size() != 1 && static_cast<int64_t>(c.repeats.size()) != extent)
      throw std::runtime_error("\"repeats\" holds " + std::to_string(c.repeats.size()) +
                               " counts for an extent of " + std::to_string(extent));
    c.repeats_text =
        c.repeats.size() == 1 ? std::to_string(c.repeats[0]) : std::to_string(c.repeats.size()) + " counts";
  } else if (r->kind == Json::Kind::object) {
    const std::vector<int64_t> range = to_ints(r->find("random"), "\"repeats\".\"random\"");
    if (range.size() != 2 || range[0] > range[1])
      throw std::runtime_error("\"repeats\".\"random\" must be [LO, HI] with LO <= HI");
    const Json* seed = r->find("seed");
    const int64_t s = seed ? to_int(*seed, "\"repeats\".\"seed\"") : 0;
    c.repeats = random_counts(extent, range[0], range[1], static_cast<uint64_t>(s));
    c.repeats_text =
        "random " + std::to_string(range[0]) + "-" + std::to_string(range[1]) + " (seed " + std::to_string(s) + ")";
  } else {
    throw std::runtime_error("\"repeats\" must be an integer, a list or {\"random\": [LO, HI], \"seed\": S}");
  }
  int64_t total = 0;
  if (c.repeats.size() == 1) {
    total = checked_mul(extent, c.repeats[0]);
  } else {
    c.repeat_ends.resize(c.repeats.size());
    for (std::size_t i = 0; i < c.repeats.size(); ++i) c.repeat_ends[i] = total += c.repeats[i];
  }
  if (!c.axis) return {total};
  std::vector<int64_t> out = shape;
  out[*c.axis] = total;
  return out;
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
    const std::string op = to_string(obj.find("op"), "\"op\"", false);
    if (op.empty() || op == "tile")
      c.op = Op::tile;
    else if (op == "broadcast_to")
      c.op = Op::broadcast_to;
    else if (op == "expand")
      c.op = Op::expand;
    else if (op == "repeat")
      c.op = Op::repeat;
    else if (op == "tile_backward")
      c.op = Op::tile_backward;
    else if (op == "sum_to_shape")
      c.op = Op::sum_to_shape;
    else if (op == "repeat_backward")
      c.op = Op::repeat_backward;
    else
      throw std::runtime_error("unknown \"op\" \"" + op +
                               "\" (tile, broadcast_to, expand, repeat, tile_backward, sum_to_shape, "
                               "repeat_backward)");
    c.itemsize = itemsize_of(c.dtype);
    c.shape = to_ints(obj.find("shape"), "\"shape\"");
    const auto isz = static_cast<int64_t>(c.itemsize);

    // The input buffer is C-contiguous; with "transpose_of" the input is its reversed-axes view.
    c.base = c.shape;
    if (const Json* t = obj.find("transpose_of")) {
      c.base = to_ints(t, "\"transpose_of\"");
      c.transposed = true;
      if (std::vector<int64_t>(c.base.rbegin(), c.base.rend()) != c.shape)
        throw std::runtime_error("\"shape\" must be \"transpose_of\" reversed");
    }
    std::vector<int64_t> base_strides(c.base.size());
    int64_t stride = isz;
    for (std::size_t i = c.base.size(); i-- > 0;) {
      base_strides[i] = stride;
      stride = checked_mul(stride, c.base[i]);
    }
    c.strides = c.transposed ? std::vector<int64_t>(base_strides.rbegin(), base_strides.rend()) : base_strides;
    c.input_bytes = static_cast<std::size_t>(checked_mul(product(c.base), isz));

    // Each op's own arguments, and no other op's.
    static const std::string_view own[7][3] = {
        {"reps", "", ""},     {"target", "", ""},          {"target", "", ""},
        {"repeats", "axis", ""}, {"in_shape", "reps", ""}, {"target", "", ""},
        {"in_shape", "repeats", "axis"}};
    for (const char* key : {"reps", "target", "repeats", "axis", "in_shape"}) {
      const auto& mine = own[static_cast<int>(c.op)];
      if (obj.find(key) && key != mine[0] && key != mine[1] && key != mine[2])
        throw std::runtime_error(std::string("\"") + key + "\" does not apply to \"op\" " + op_name(c.op));
    }
    // A reduction's "shape" is its forward op's output: checked against the forward op's rule.
    const auto check_gradient = [&](const std::vector<int64_t>& forward_out) {
      if (forward_out != c.shape)
        throw std::runtime_error("\"shape\" " + join(c.shape) + " is not the output shape of the forward " +
                                 "op, " + join(forward_out));
    };
    switch (c.op) {
      case Op::tile:
        c.reps = to_ints(obj.find("reps"), "\"reps\"");
        c.out_shape = tile_out_shape(c.shape, c.reps);
        break;
      case Op::broadcast_to:
      case Op::expand:
        c.target = to_ints(obj.find("target"), "\"target\"");
        c.out_shape = broadcast_out_shape(c.shape, c.target, c.op == Op::expand);
        break;
      case Op::repeat:
        c.out_shape = parse_repeat(obj, c.shape, c);
        break;
      case Op::tile_backward:
        c.in_shape = to_ints(obj.find("in_shape"), "\"in_shape\"");
        c.reps = to_ints(obj.find("reps"), "\"reps\"");
        check_gradient(tile_out_shape(c.in_shape, c.reps));
        c.out_shape = c.in_shape;
        break;
      case Op::sum_to_shape:
        c.target = to_ints(obj.find("target"), "\"target\"");
        check_gradient(broadcast_out_shape(c.target, c.shape, false));
        c.out_shape = c.target;
        break;
      case Op::repeat_backward:
        c.in_shape = to_ints(obj.find("in_shape"), "\"in_shape\"");
        check_gradient(parse_repeat(obj, c.in_shape, c));
        c.out_shape = c.in_shape;
        break;
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

const char* op_name(Op op) {
  switch (op) {
    case Op::tile: return "tile";
    case Op::broadcast_to: return "broadcast_to";
    case Op::expand: return "expand";
    case Op::repeat: return "repeat";
    case Op::tile_backward: return "tile_backward";
    case Op::sum_to_shape: return "sum_to_shape";
    case Op::repeat_backward: return "repeat_backward";
  }
  return "?";
}

bool is_reduction(Op op) { return op == Op::tile_backward || op == Op::sum_to_shape || op == Op::repeat_backward; }

std::string Case::arguments() const {
  switch (op) {
    case Op::tile: return "reps " + join(reps);
    case Op::broadcast_to:
    case Op::expand: return "target " + join(target);
    case Op::repeat:
      return "repeats " + repeats_text + ", axis " + (axis ? std::to_string(*axis) : std::string("None"));
    case Op::tile_backward: return "in_shape " + join(in_shape) + ", reps " + join(reps);
    case Op::sum_to_shape: return "target " + join(target);
    case Op::repeat_backward:
      return "in_shape " + join(in_shape) + ", repeats " + repeats_text + ", axis " +
             (axis ? std::to_string(*axis) : std::string("None"));
  }
  return "";
}

std::vector<int64_t> random_counts(int64_t count, int64_t lo, int64_t hi, uint64_t seed) {
  std::vector<int64_t> out(static_cast<std::size_t>(std::max<int64_t>(count, 0)));
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  uint64_t state = seed;
  for (int64_t& v : out) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    v = lo + static_cast<int64_t>(z % span);
  }
  return out;
}

std::vector<int64_t> source_index(const Case& c, const std::vector<int64_t>& out_index) {
  const std::size_t n = c.shape.size(), nd = out_index.size();
  std::vector<int64_t> in(n);
  switch (c.op) {
    case Op::tile:
      for (std::size_t i = 0; i < n; ++i) in[i] = out_index[nd - n + i] % c.shape[i];
      break;
    case Op::broadcast_to:
    case Op::expand:
      for (std::size_t i = 0; i < n; ++i) in[i] = c.shape[i] == 1 ? 0 : out_index[nd - n + i];
      break;
    case Op::repeat: {
      // The output position along the repeated axis (or in the flattened output) -> the element.
      const int64_t pos = c.axis ? out_index[*c.axis] : out_index[0];
      const int64_t element =
          c.repeat_ends.empty()
              ? pos / c.repeats[0]
              : std::upper_bound(c.repeat_ends.begin(), c.repeat_ends.end(), pos) - c.repeat_ends.begin();
      if (c.axis) {
        in = out_index;
        in[*c.axis] = element;
      } else {
        int64_t rest = element;
        for (std::size_t i = n; i-- > 0;) {
          in[i] = rest % c.shape[i];
          rest /= c.shape[i];
        }
      }
      break;
    }
    case Op::tile_backward:
    case Op::sum_to_shape:
    case Op::repeat_backward: throw std::logic_error("source_index: " + c.name + " is a reduction");
  }
  return in;
}

std::vector<std::vector<int64_t>> summands(const Case& c, const std::vector<int64_t>& out_index) {
  const std::size_t nd = c.shape.size(), n = c.out_shape.size();  // gradient axes, result axes
  std::vector<std::vector<int64_t>> axes(nd);
  const auto all = [&](std::size_t j) {
    for (int64_t k = 0; k < c.shape[j]; ++k) axes[j].push_back(k);
  };
  switch (c.op) {
    case Op::tile_backward:
    case Op::sum_to_shape:
      // Gradient axis j (aligned with the result's trailing axes) of extent r * s: the result's
      // index i along it, plus every multiple of s (tile); every index where the result has 1
      // (sum_to_shape); every index of a leading axis the result does not have.
      for (std::size_t j = 0; j < nd; ++j) {
        if (j < nd - n) {
          all(j);
          continue;
        }
        const int64_t s = c.out_shape[j - (nd - n)], i = out_index[j - (nd - n)];
        if (c.op == Op::sum_to_shape) {
          if (s == 1) all(j);
          else axes[j] = {i};
        } else {
          for (int64_t k = i; k < c.shape[j]; k += s) axes[j].push_back(k);
        }
      }
      break;
    case Op::repeat_backward: {
      // The element's run along the repeated axis (or in the flattened gradient).
      int64_t element = 0;
      if (c.axis) {
        element = out_index[*c.axis];
      } else {
        for (std::size_t i = 0; i < n; ++i) element = element * c.out_shape[i] + out_index[i];
      }
      const int64_t begin = c.repeat_ends.empty() ? element * c.repeats[0] : element ? c.repeat_ends[element - 1] : 0;
      const int64_t end = c.repeat_ends.empty() ? begin + c.repeats[0] : c.repeat_ends[element];
      const std::size_t along = c.axis ? static_cast<std::size_t>(*c.axis) : 0;
      for (std::size_t j = 0; j < nd; ++j) {
        if (j == along) {
          for (int64_t k = begin; k < end; ++k) axes[j].push_back(k);
        } else {
          axes[j] = {out_index[j]};
        }
      }
      break;
    }
    case Op::tile:
    case Op::broadcast_to:
    case Op::expand:
    case Op::repeat: throw std::logic_error("summands: " + c.name + " is not a reduction");
  }
  return axes;
}

}  // namespace tessera::bench
