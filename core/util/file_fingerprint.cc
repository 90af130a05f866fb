#include "core/util/file_fingerprint.h"

#include <zlib.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace st::util {

FileFingerprint fingerprint_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  FileFingerprint out;
  out.path = path;
  uLong crc = crc32(0L, Z_NULL, 0);
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<uInt>(in.gcount());
    crc = crc32(crc, reinterpret_cast<const Bytef*>(chunk.data()), got);
    out.bytes += got;
  }
  if (in.bad()) throw std::runtime_error(fmt::format("{}: read error", path));
  out.crc32 = fmt::format("{:08x}", static_cast<uint32_t>(crc));
  return out;
}

}  // namespace st::util
