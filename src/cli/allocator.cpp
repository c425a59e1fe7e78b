// The sluice executable's allocator settings: jemalloc, backing its heap with transparent huge pages. A project's
// analysis allocates many small pieces, and on virtual machines the first touch of each page can trap to the
// hypervisor; huge pages make those traps rare (docs/performance.md). jemalloc reads this string once, when it
// initializes; MALLOC_CONF in the environment is applied after it.
extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): the name jemalloc looks up.
const char* malloc_conf = "thp:always,metadata_thp:always";
}
