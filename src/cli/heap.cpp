// The heap of the `sluice` binary: jemalloc (linked into the executable, so every malloc in the process, the
// loaded DuckDB and Python included, is jemalloc's) with transparent huge pages for its memory.
//
// Why: a large project's analysis makes about a million small allocations and touches ~100 MiB of fresh heap.
// With glibc's allocator, malloc itself was a fifth of `sluice discover`'s profile and first-touch page faults
// another tenth; on a virtual machine each 4 KiB fault is expensive. jemalloc with huge pages takes the
// 10,000-model analysis from ~0.31 to ~0.24 s and the compile from ~0.62 to ~0.47 s (docs/performance.md).
//
// jemalloc reads this symbol at its first allocation, before main; MALLOC_CONF in the environment is read after
// it and wins (MALLOC_CONF=thp:never turns huge pages off). Child processes inherit the environment as given.
// The executable exports its symbols (CMAKE_ENABLE_EXPORTS), so this definition takes the place of the
// library's empty one.
extern "C" const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
