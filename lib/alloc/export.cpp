#include "alloc/export.hpp"

#include "profile.pb.h"

#include <zlib.h>

#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace benchfp::alloc {

namespace {

// Indexes of sampled allocations that were freed: the rest are in use.
std::unordered_set<size_t> freed_indexes(const profiler::Profile& profile) {
    std::unordered_set<size_t> freed;
    for (const auto& f : profile.frees) freed.insert(f.allocation);
    return freed;
}

std::string gzip(const std::string& data) {
    z_stream z{};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16 /* gzip header */, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("zlib: deflateInit2 failed");
    std::string out(deflateBound(&z, data.size()) + 32, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&z, Z_FINISH);
    deflateEnd(&z);
    if (status != Z_STREAM_END) throw std::runtime_error("zlib: deflate did not finish");
    out.resize(z.total_out);
    return out;
}

class StringTable {
public:
    explicit StringTable(perftools::profiles::Profile& p) : profile_(p) { index(""); }
    int64_t index(const std::string& s) {
        const auto [it, added] = indexes_.emplace(s, static_cast<int64_t>(indexes_.size()));
        if (added) profile_.add_string_table(s);
        return it->second;
    }

private:
    perftools::profiles::Profile& profile_;
    std::unordered_map<std::string, int64_t> indexes_;
};

std::string frame_name(const Symbolizer& name_of, uintptr_t return_address) { return name_of(return_address - 1); }

}  // namespace

std::string to_pprof_gz(const profiler::Profile& profile, const Symbolizer& name_of) {
    perftools::profiles::Profile out;
    StringTable strings(out);
    for (const char* type : {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"}) {
        auto* t = out.add_sample_type();
        t->set_type(strings.index(type));
        t->set_unit(strings.index(std::string(type).ends_with("objects") ? "count" : "bytes"));
    }
    out.set_default_sample_type(1);  // alloc_space
    auto* period_type = out.mutable_period_type();
    period_type->set_type(strings.index("space"));
    period_type->set_unit(strings.index("bytes"));
    out.set_period(profile.options.sampling == profiler::Sampling::bytes ? int64_t(profile.options.mean_bytes) : 1);
    auto* mapping = out.add_mapping();
    mapping->set_id(1);
    mapping->set_memory_limit(~uint64_t{0});
    mapping->set_has_functions(true);

    std::unordered_map<uintptr_t, uint64_t> location_ids;
    std::unordered_map<std::string, uint64_t> function_ids;
    auto location_of = [&](uintptr_t address) {
        const auto found = location_ids.find(address);
        if (found != location_ids.end()) return found->second;
        const std::string name = frame_name(name_of, address);
        auto [fit, fadded] = function_ids.emplace(name, function_ids.size() + 1);
        if (fadded) {
            auto* f = out.add_function();
            f->set_id(fit->second);
            f->set_name(strings.index(name));
            f->set_system_name(f->name());
        }
        const uint64_t id = location_ids.size() + 1;
        auto* loc = out.add_location();
        loc->set_id(id);
        loc->set_mapping_id(1);
        loc->set_address(address);
        loc->add_line()->set_function_id(fit->second);
        location_ids.emplace(address, id);
        return id;
    };

    const auto freed = freed_indexes(profile);
    const int64_t type_key = strings.index("type"), thread_key = strings.index("thread");
    for (size_t i = 0; i < profile.allocations.size(); ++i) {
        const auto& r = profile.allocations[i];
        auto* sample = out.add_sample();
        for (uintptr_t ret : r.stack) sample->add_location_id(location_of(ret));
        const bool in_use = !freed.count(i);
        const auto objects = static_cast<int64_t>(std::llround(r.weight));
        const auto space = static_cast<int64_t>(std::llround(r.weight * double(r.requested)));
        for (int64_t v : {objects, space, in_use ? objects : 0, in_use ? space : 0}) sample->add_value(v);
        auto* type = sample->add_label();
        type->set_key(type_key);
        type->set_str(strings.index(r.type->name));
        auto* thread = sample->add_label();
        thread->set_key(thread_key);
        thread->set_num(r.thread);
    }
    std::string bytes;
    if (!out.SerializeToString(&bytes)) throw std::runtime_error("pprof: protobuf serialization failed");
    return gzip(bytes);
}

std::string to_folded(const profiler::Profile& profile, const Symbolizer& name_of) {
    std::map<std::string, double> stacks;
    for (const auto& r : profile.allocations) {
        std::string line;
        for (auto it = r.stack.rbegin(); it != r.stack.rend(); ++it) line += frame_name(name_of, *it) + ";";
        line += r.type->name;
        stacks[line] += r.weight * double(r.requested);
    }
    std::string out;
    for (const auto& [stack, bytes] : stacks) out += stack + " " + std::to_string(std::llround(bytes)) + "\n";
    return out;
}

nlohmann::json to_json_summary(const profiler::Profile& profile, const Symbolizer& name_of) {
    const auto freed = freed_indexes(profile);
    struct Totals {
        double objects = 0, space = 0, inuse_objects = 0, inuse_space = 0;
    };
    Totals all;
    std::map<std::string, Totals> by_type, by_site;
    for (size_t i = 0; i < profile.allocations.size(); ++i) {
        const auto& r = profile.allocations[i];
        const bool in_use = !freed.count(i);
        const std::string site = r.stack.empty() ? "[no stack]" : frame_name(name_of, r.stack.front());
        for (Totals* t : {&all, &by_type[r.type->name], &by_site[site]}) {
            t->objects += r.weight;
            t->space += r.weight * double(r.requested);
            if (in_use) t->inuse_objects += r.weight, t->inuse_space += r.weight * double(r.requested);
        }
    }
    auto json_of = [](const Totals& t) {
        return nlohmann::json{{"alloc_objects", t.objects},
                              {"alloc_space", t.space},
                              {"inuse_objects", t.inuse_objects},
                              {"inuse_space", t.inuse_space}};
    };
    nlohmann::json out = {{"samples", profile.allocations.size()},
                          {"sampled_frees", profile.frees.size()},
                          {"dropped_frames", profile.dropped_frames},
                          {"totals", json_of(all)}};
    for (const auto& [type, t] : by_type) out["by_type"][type] = json_of(t);
    for (const auto& [site, t] : by_site) out["by_site"][site] = json_of(t);
    const char* modes[] = {"all", "probability", "bytes"};
    out["sampling"] = {{"mode", modes[static_cast<int>(profile.options.sampling)]},
                       {"probability", profile.options.probability},
                       {"mean_bytes", profile.options.mean_bytes},
                       {"max_depth", profile.options.max_depth}};
    return out;
}

}  // namespace benchfp::alloc
