#include "core/data/npz.h"

#include <zip.h>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace st::data {
namespace {

constexpr char kSuffix[] = ".npy";
constexpr std::size_t kSuffixBytes = 4;
constexpr std::size_t kChunk = std::size_t{1} << 20;
// Reserved up front at most; a member that really is larger grows into it.
// (A zip's declared size is not to be trusted before the data arrives.)
constexpr uint64_t kMaxReserve = uint64_t{64} << 20;
// Enough for any header numpy writes (a few hundred bytes) and our cap.
constexpr uint64_t kHeaderReadBytes = (uint64_t{1} << 20) + 16;

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

bool ends_with_npy(const std::string& name) {
  return name.size() > kSuffixBytes && name.compare(name.size() - kSuffixBytes, kSuffixBytes, kSuffix) == 0;
}

}  // namespace

struct NpzArchive::Zip {
  zip_t* archive = nullptr;
  std::vector<uint8_t> bytes;  // the archive itself, when opened from memory
  ~Zip() {
    if (archive) zip_discard(archive);  // read-only: nothing to write back
  }
};

NpzArchive::NpzArchive(std::string file, std::unique_ptr<Zip> zip) : file_(std::move(file)), zip_(std::move(zip)) {
  const zip_int64_t count = zip_get_num_entries(zip_->archive, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(zip_->archive, static_cast<zip_uint64_t>(i), 0);
    if (!name) continue;
    std::string member(name);
    if (ends_with_npy(member)) names_.push_back(member.substr(0, member.size() - kSuffixBytes));
  }
}

NpzArchive::NpzArchive(NpzArchive&&) noexcept = default;
NpzArchive& NpzArchive::operator=(NpzArchive&&) noexcept = default;
NpzArchive::~NpzArchive() = default;

NpzArchive NpzArchive::open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw DatasetFileError(path, "", std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  int code = 0;
  auto zip = std::make_unique<Zip>();
  zip->archive = zip_open(path.c_str(), ZIP_RDONLY, &code);
  if (!zip->archive) throw DatasetFileError(path, "", "not a readable .npz (zip) archive: " + zip_error_text(code));
  return NpzArchive(path, std::move(zip));
}

NpzArchive NpzArchive::from_bytes(std::vector<uint8_t> bytes, const std::string& name) {
  auto zip = std::make_unique<Zip>();
  zip->bytes = std::move(bytes);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(zip->bytes.data(), zip->bytes.size(), 0, &error);
  if (source) {
    zip->archive = zip_open_from_source(source, ZIP_RDONLY, &error);
    if (!zip->archive) zip_source_free(source);
  }
  if (!zip->archive) {
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw DatasetFileError(name, "", "not a readable .npz (zip) archive: " + text);
  }
  zip_error_fini(&error);
  return NpzArchive(name, std::move(zip));
}

bool NpzArchive::has(const std::string& name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

std::vector<uint8_t> NpzArchive::read_member(const std::string& name, uint64_t limit) const {
  const std::string member = name + kSuffix;
  auto fail = [&](const std::string& problem) { throw DatasetFileError(file_, name, problem); };
  const zip_int64_t index = zip_name_locate(zip_->archive, member.c_str(), 0);
  if (index < 0) fail(fmt::format("no array '{}' in the archive (it holds: {})", name, fmt::join(names_, ", ")));
  zip_stat_t stat;
  zip_stat_init(&stat);
  uint64_t declared = kMaxReserve;
  if (zip_stat_index(zip_->archive, static_cast<zip_uint64_t>(index), 0, &stat) == 0 && (stat.valid & ZIP_STAT_SIZE))
    declared = stat.size;
  zip_file_t* file = zip_fopen_index(zip_->archive, static_cast<zip_uint64_t>(index), 0);
  if (!file) fail(fmt::format("cannot read the member {}: {}", member, zip_strerror(zip_->archive)));
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(std::min({declared, limit, kMaxReserve})));
  std::string problem;
  while (bytes.size() < limit) {
    const std::size_t before = bytes.size();
    const auto want = static_cast<std::size_t>(std::min<uint64_t>(kChunk, limit - before));
    bytes.resize(before + want);
    const zip_int64_t got = zip_fread(file, bytes.data() + before, want);
    if (got < 0) {
      problem = fmt::format("corrupt member {}: {}", member, zip_file_strerror(file));
      bytes.resize(before);
      break;
    }
    bytes.resize(before + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  zip_fclose(file);
  if (!problem.empty()) fail(problem);
  return bytes;
}

NpyHeader NpzArchive::header(const std::string& name) const {
  const std::vector<uint8_t> start = read_member(name, kHeaderReadBytes);
  return parse_npy_header(start.data(), start.size(), file_, name);
}

NpyArray NpzArchive::read(const std::string& name) const {
  // One byte past the largest array we take, so that a member that long
  // is reported as too long rather than read whole.
  const NpyHeader header = this->header(name);
  return parse_npy(read_member(name, header.data_offset + header.data_bytes() + 1), file_, name);
}

void write_npz(const std::string& path, const std::vector<NpzEntry>& entries) {
  const std::string temporary = fmt::format("{}.partial-{}", path, ::getpid());  // one per writer
  std::error_code ec;
  std::filesystem::remove(temporary, ec);
  int code = 0;
  zip_t* archive = zip_open(temporary.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!archive) throw DatasetFileError(path, "", "cannot create: " + zip_error_text(code));
  for (const auto& [name, bytes] : entries) {
    const std::string member = name + kSuffix;
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = source ? zip_file_add(archive, member.c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (source) zip_source_free(source);
      const std::string text = zip_strerror(archive);
      zip_discard(archive);
      throw DatasetFileError(path, name, "cannot add: " + text);
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  // The buffers above are read here, while `entries` is still alive.
  if (zip_close(archive) != 0) {
    const std::string text = zip_strerror(archive);
    zip_discard(archive);
    std::filesystem::remove(temporary, ec);
    throw DatasetFileError(path, "", "cannot write: " + text);
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(temporary, ec);
    throw DatasetFileError(path, "", "cannot move the written file into place: " + why);
  }
}

}  // namespace st::data
