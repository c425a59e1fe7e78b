// Transparent huge pages for the heap: a large project's analysis touches ~150 MiB of fresh heap, and on a
// virtual machine every 4 KiB first-touch fault is expensive (it was a third of `sluice discover`'s time at
// 10,000 models). glibc backs its heaps with huge pages when the tunable glibc.malloc.hugetlb=1 is set, and
// tunables are read only at process start, so the binary re-executes itself once with the tunable added.
#pragma once

namespace sluice::cli {

// Call first thing in main. Re-executes /proc/self/exe with glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES
// unless that tunable is already set, SLUICE_HUGE_PAGES=0, or this process is already the re-executed one; in
// the re-executed process it restores GLIBC_TUNABLES to the caller's value so child processes inherit the
// caller's environment unchanged. Any failure (no /proc, exec refused) leaves the process running as it is.
void UseHugePagesForTheHeap(char** argv);

}  // namespace sluice::cli
