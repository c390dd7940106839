#include "jit/code_regions.hpp"

#include <algorithm>
#include <mutex>

namespace benchfp::jit {

namespace {
std::mutex regions_mutex;
std::vector<CodeRegionInfo>& regions() {
    static std::vector<CodeRegionInfo> list;
    return list;
}
}  // namespace

void register_code_region(const CodeRegionInfo& info) {
    std::lock_guard lock(regions_mutex);
    regions().push_back(info);
}

void unregister_code_region(uintptr_t begin) {
    std::lock_guard lock(regions_mutex);
    std::erase_if(regions(), [&](const CodeRegionInfo& r) { return r.begin == begin; });
}

std::vector<CodeRegionInfo> code_regions() {
    std::lock_guard lock(regions_mutex);
    return regions();
}

}  // namespace benchfp::jit
