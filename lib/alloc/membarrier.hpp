// membarrier(2), which glibc does not wrap: the count sites' SYNC_CORE command
// (count_site.cpp) and the profiler buffers' expedited one (owner_lock.cpp).
#pragma once

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace benchfp::alloc::detail {

inline long membarrier(int command) { return syscall(SYS_membarrier, command, 0, 0); }

}  // namespace benchfp::alloc::detail
