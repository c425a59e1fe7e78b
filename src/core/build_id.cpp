#include "core/build_id.hpp"

#include <elf.h>
#include <link.h>

#include <cstring>

namespace sluice {

namespace {

// ELF notes are 4-byte aligned: namesz and descsz round up to a multiple of 4.
size_t Aligned(size_t size) { return (size + 3) & ~size_t{3}; }

// The NT_GNU_BUILD_ID note of the first object dl_iterate_phdr reports: the executable itself.
int FindBuildId(dl_phdr_info* info, size_t, void* data) {
  auto* hex = static_cast<std::string*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_NOTE) continue;
    const auto* at = reinterpret_cast<const unsigned char*>(info->dlpi_addr + header.p_vaddr);
    const unsigned char* end = at + header.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, at, sizeof note);
      const unsigned char* name = at + sizeof note;
      const unsigned char* desc = name + Aligned(note.n_namesz);
      if (desc + note.n_descsz > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static constexpr char kDigits[] = "0123456789abcdef";
        for (size_t b = 0; b < note.n_descsz; ++b) {
          hex->push_back(kDigits[desc[b] >> 4]);
          hex->push_back(kDigits[desc[b] & 15]);
        }
        return 1;
      }
      at = desc + Aligned(note.n_descsz);
    }
  }
  return 1;  // only the executable is asked
}

}  // namespace

const std::string& ExecutableBuildId() {
  static const std::string id = [] {
    std::string hex;
    dl_iterate_phdr(FindBuildId, &hex);
    return hex;
  }();
  return id;
}

}  // namespace sluice
