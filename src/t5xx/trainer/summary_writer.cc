// TensorBoard event files — the summaries t5x writes through
// clu.metric_writers (t5x/trainer.py MetricsManager, t5x/gin_utils.py
// summarize_gin_config), without TensorFlow, protobuf or libtorch -- the
// implementation of summary_writer.h.
#include "t5xx/trainer/summary_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <system_error>

#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/protobuf_wire.h"
#include "t5xx/util/system/host_name.h"
#include "t5xx/util/utf8.h"

namespace t5xx::trainer {
namespace {

// ---- protobuf wire format (proto3), just what the Event messages need ------
// Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.

void PutDouble(std::string* out, int field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  PutKey(out, field, 1);
  PutFixedLE(out, bits, 8);
}

void PutFloat(std::string* out, int field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  PutKey(out, field, 5);
  PutFixedLE(out, bits, 4);
}

// proto3 omits a plain (non-oneof) scalar equal to its default; a double is
// "default" only when its bits are all zero (-0.0 is written).
bool IsZeroBits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits == 0;
}

// Event { wall_time = 1; step = 2; oneof what { file_version = 3;
// summary = 5; } } around an already-encoded oneof member.
std::string EncodeEvent(double wall_time, int64_t step, int what_field,
                        std::string_view what) {
  std::string event;
  if (!IsZeroBits(wall_time)) PutDouble(&event, 1, wall_time);
  // int64 is encoded as its two's-complement uint64 (10 bytes when < 0).
  if (step != 0) {
    PutKey(&event, 2, 0);
    PutVarint(&event, static_cast<uint64_t>(step));
  }
  PutLengthDelimited(&event, what_field, what);
  return event;
}

// Summary { repeated Value value = 1; } holding one encoded Value.
std::string EncodeSummary(std::string_view value) {
  std::string summary;
  PutLengthDelimited(&summary, 1, value);
  return summary;
}

constexpr int kDtString = 7;  // tensorboard/compat/proto/types.proto

double WallTimeNow() {
  using std::chrono::duration;
  using std::chrono::system_clock;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Writers opened by this process (TF's file_id_counter).
std::atomic<int> writer_counter{0};

constexpr int kMaxQueue = 10;                         // TF's max_queue
constexpr std::chrono::seconds kFlushInterval{120};  // TF's flush_millis

}  // namespace

std::string FileVersionEvent(double wall_time) {
  return EncodeEvent(wall_time, 0, 3, "brain.Event:2");
}

std::string ScalarEvent(double wall_time, int64_t step, const std::string& tag,
                        float value) {
  std::string v;
  if (!tag.empty()) PutLengthDelimited(&v, 1, ToValidUtf8(tag));
  PutFloat(&v, 2, value);  // oneof member: written even when 0
  return EncodeEvent(wall_time, step, 5, EncodeSummary(v));
}

std::string TextEvent(double wall_time, int64_t step, const std::string& tag,
                      const std::string& text) {
  // TensorProto { dtype = 1; tensor_shape = 2 (scalar: empty); string_val = 8 }
  std::string tensor;
  PutKey(&tensor, 1, 0);
  PutVarint(&tensor, kDtString);
  PutLengthDelimited(&tensor, 2, "");
  PutLengthDelimited(&tensor, 8, ToValidUtf8(text));
  // SummaryMetadata { plugin_data = 1 { plugin_name = 1; content = 2 } };
  // the text plugin's content, TextPluginData{version: 0}, encodes empty.
  std::string plugin_data;
  PutLengthDelimited(&plugin_data, 1, "text");
  std::string metadata;
  PutLengthDelimited(&metadata, 1, plugin_data);
  // Value { tag = 1; tensor = 8; metadata = 9 }, in field-number order.
  std::string v;
  if (!tag.empty()) PutLengthDelimited(&v, 1, ToValidUtf8(tag));
  PutLengthDelimited(&v, 8, tensor);
  PutLengthDelimited(&v, 9, metadata);
  return EncodeEvent(wall_time, step, 5, EncodeSummary(v));
}

SummaryWriter::SummaryWriter(const std::string& log_dir) : log_dir_(log_dir) {
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) {
    throw Error("cannot create the summary directory " + log_dir + ": " +
                ec.message());
  }
  const double now = WallTimeNow();
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%010lld", static_cast<long long>(now));
  path_ = (std::filesystem::path(log_dir) /
           ("events.out.tfevents." + std::string(seconds) + "." + HostName() + "." +
            std::to_string(getpid()) + "." + std::to_string(writer_counter++) + ".v2"))
              .string();
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw Error("cannot create the TensorBoard event file " + path_ + ": " +
                std::strerror(errno));
  }
  std::lock_guard<std::mutex> lock(mu_);
  last_flush_ = std::chrono::steady_clock::now();
  try {
    Append(FileVersionEvent(now));
    FlushLocked();
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    throw;
  }
}

SummaryWriter::~SummaryWriter() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ == nullptr) return;
  if (std::fflush(file_) != 0) {
    std::cerr << "t5xx: warning: cannot write the TensorBoard event file " << path_
              << ": " << std::strerror(errno) << "\n";
  }
  if (std::fclose(file_) != 0) {
    std::cerr << "t5xx: warning: cannot close the TensorBoard event file " << path_
              << ": " << std::strerror(errno) << "\n";
  }
  file_ = nullptr;
}

void SummaryWriter::Scalar(const std::string& tag, float value, int64_t step) {
  std::string event = ScalarEvent(WallTimeNow(), step, tag, value);
  std::lock_guard<std::mutex> lock(mu_);
  Append(event);
}

void SummaryWriter::Text(const std::string& tag, const std::string& text,
                         int64_t step) {
  std::string event = TextEvent(WallTimeNow(), step, tag, text);
  std::lock_guard<std::mutex> lock(mu_);
  Append(event);
}

void SummaryWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  FlushLocked();
}

void SummaryWriter::Append(const std::string& event) {
  const std::string frame = TFRecordFrame(event);
  if (std::fwrite(frame.data(), 1, frame.size(), file_) != frame.size()) {
    throw Error("cannot write the TensorBoard event file " + path_ + ": " +
                std::strerror(errno));
  }
  if (++pending_ >= kMaxQueue ||
      std::chrono::steady_clock::now() - last_flush_ >= kFlushInterval) {
    FlushLocked();
  }
}

void SummaryWriter::FlushLocked() {
  if (std::fflush(file_) != 0) {
    throw Error("cannot write the TensorBoard event file " + path_ + ": " +
                std::strerror(errno));
  }
  pending_ = 0;
  last_flush_ = std::chrono::steady_clock::now();
}

namespace {

// The IEEE float (width 4) or double (width 8) stored little-endian at p.
double LoadLEFloat(const char* p, int width) {
  const uint64_t bits = LoadLE(p, width);
  if (width == 4) {
    float f;
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    return f;
  }
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// The scalar in a TensorProto: dtype 1, tensor_content 4, float_val 5,
// double_val 6 (packed or not).
std::optional<double> TensorScalar(const char* data, size_t size) {
  WireReader r(data, size);
  uint64_t dtype = 0;
  std::vector<double> values;
  std::string content;
  while (!r.done()) {
    int wire = 0;
    const uint32_t field = r.Tag(&wire);
    if (field == 1 && wire == 0) {
      dtype = r.Varint();
    } else if (field == 4 && wire == 2) {
      const auto [p, n] = r.Bytes();
      content.assign(p, n);
    } else if ((field == 5 && (wire == 2 || wire == 5)) || (field == 6 && wire == 2)) {
      // float_val (packed, or one unpacked fixed32) / double_val (packed).
      const int width = field == 5 ? 4 : 8;
      const auto [p, n] = wire == 2 ? r.Bytes() : r.Fixed32Bytes();
      for (size_t o = 0; o + width <= n; o += width) values.push_back(LoadLEFloat(p + o, width));
    } else {
      r.SkipField(wire);
    }
  }
  const int width = dtype == 1 ? 4 : dtype == 2 ? 8 : 0;  // DT_FLOAT, DT_DOUBLE
  if (width == 0) return std::nullopt;
  if (values.size() == 1) return values[0];
  if (values.empty() && content.size() == static_cast<size_t>(width)) {
    return LoadLEFloat(content.data(), width);
  }
  return std::nullopt;
}

// Event {step 2, summary 5 {value 1 {tag 1, simple_value 2, tensor 8}}}:
// the first value when it is a scalar.
std::optional<FirstScalar> ParseFirstScalar(const std::string& event) {
  WireReader r(event.data(), event.size());
  FirstScalar out;
  std::optional<std::pair<const char*, size_t>> first;
  while (!r.done()) {
    int wire = 0;
    const uint32_t field = r.Tag(&wire);
    if (field == 2 && wire == 0) {
      out.step = static_cast<int64_t>(r.Varint());
    } else if (field == 5 && wire == 2) {
      const auto [p, n] = r.Bytes();
      WireReader summary(p, n);
      while (!summary.done() && !first) {
        int w = 0;
        if (summary.Tag(&w) == 1 && w == 2) {
          first = summary.Bytes();
        } else {
          summary.SkipField(w);
        }
      }
    } else {
      r.SkipField(wire);
    }
  }
  if (!first) return std::nullopt;
  WireReader v(first->first, first->second);
  std::optional<double> value;
  while (!v.done()) {
    int wire = 0;
    const uint32_t field = v.Tag(&wire);
    if (field == 1 && wire == 2) {
      const auto [p, n] = v.Bytes();
      out.tag.assign(p, n);
    } else if (field == 2 && wire == 5) {
      value = LoadLEFloat(v.Fixed32Bytes().first, 4);
    } else if (field == 8 && wire == 2) {
      const auto [p, n] = v.Bytes();
      if (!value) value = TensorScalar(p, n);
    } else {
      v.SkipField(wire);
    }
  }
  if (!value) return std::nullopt;
  out.value = *value;
  return out;
}

}  // namespace

std::vector<FirstScalar> ReadFirstScalars(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  T5XX_CHECK(in.good(), "cannot open the event file " + path);
  std::vector<FirstScalar> out;
  char header[kTFRecordHeaderSize];
  while (in.read(header, sizeof header)) {
    const uint64_t length = LoadLE(header, 8);
    if (MaskedCrc32c(header, 8) != static_cast<uint32_t>(LoadLE(header + 8, 4)) ||
        length > (uint64_t{1} << 31)) {
      break;
    }
    std::string data(length, '\0');
    char footer[kTFRecordFooterSize];
    if (!in.read(data.data(), static_cast<std::streamsize>(length)) || !in.read(footer, sizeof footer) ||
        MaskedCrc32c(data.data(), data.size()) != static_cast<uint32_t>(LoadLE(footer, 4))) {
      break;
    }
    try {
      if (std::optional<FirstScalar> e = ParseFirstScalar(data)) out.push_back(std::move(*e));
    } catch (const WireFormatError&) {
      break;  // not an Event: as corrupt
    }
  }
  return out;
}

std::map<int64_t, double> MetricsForSteps(const std::string& model_dir,
                                          const std::string& metric_name,
                                          const std::set<int64_t>& steps) {
  namespace fs = std::filesystem;
  std::map<int64_t, double> out;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return out;
  // Directories top-down in name order (t5x: io_wrapper.GetLogdirSubdirectories).
  std::vector<fs::path> queue = {fs::path(model_dir)};
  for (size_t i = 0; i < queue.size(); ++i) {
    std::vector<fs::path> subdirs, events;
    for (fs::directory_iterator it(queue[i], ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec)) {
        subdirs.push_back(it->path());
      } else if (it->path().filename().string().find("tfevents") != std::string::npos) {
        events.push_back(it->path());
      }
    }
    std::sort(subdirs.begin(), subdirs.end());
    queue.insert(queue.begin() + static_cast<std::ptrdiff_t>(i) + 1, subdirs.begin(), subdirs.end());
    if (events.empty() || i == 0) continue;
    const std::string run = fs::relative(queue[i], model_dir, ec).generic_string();
    if (metric_name.size() <= run.size() + 1 || metric_name.compare(0, run.size(), run) != 0 ||
        metric_name[run.size()] != '/') {
      continue;
    }
    const std::string tag = metric_name.substr(run.size() + 1);
    std::sort(events.begin(), events.end());
    for (const fs::path& f : events) {
      for (const FirstScalar& e : ReadFirstScalars(f.string())) {
        if (steps.count(e.step) != 0 && e.tag == tag) out[e.step] = e.value;
      }
    }
    return out;
  }
  return out;
}

}  // namespace t5xx::trainer
