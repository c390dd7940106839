#pragma once
// The allocation workloads that profiles and benchmarks run: Julia's
// BaseBenchmarks alloc group (arrays, strings, structs, grow_array) plus small
// churn with random sizes, binary trees, and producer/consumer threads with
// cross-thread frees. Each path of the allocator is exercised by at least one:
// untyped pool_alloc (strings, churn), typed alloc (structs, trees, messages),
// big (arrays over 2 KiB), managed (arrays, grow_array).
#include <string>
#include <string_view>
#include <vector>

namespace benchfp::alloc::workloads {

struct Workload {
    std::string name;
    std::string description;
    void (*run)(int scale);  // scale multiplies the work; 1 is about 10^5 allocations
};

const std::vector<Workload>& all();
const Workload* find(std::string_view name);
std::string names();  // "arrays, strings, ..." for messages

}  // namespace benchfp::alloc::workloads
