// The machine's physical memory: the bound a reader checks a size declared
// by a file against before allocating for it (issue 17), and the base of
// the CPU tensor cache's default limit (device/cpu_caching_allocator.h).
#pragma once

#include <cstdint>

namespace t5xx {

// Bytes of physical memory (sysconf _SC_PHYS_PAGES x _SC_PAGE_SIZE), read
// once; 1 GiB when the system does not say.
uint64_t PhysicalMemoryBytes();

}  // namespace t5xx
