// The sluice executable's allocator settings: jemalloc, backing its heap with transparent huge pages. A project's
// analysis allocates tens of megabytes in small pieces, and on virtual machines every first touch of a 4 KiB page
// traps to the hypervisor; 2 MiB pages make those traps rare (docs/performance.md). jemalloc reads this string
// once, when it initializes; MALLOC_CONF in the environment is applied after it.
extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): the name jemalloc looks up.
const char* malloc_conf = "thp:always,metadata_thp:always";
}
