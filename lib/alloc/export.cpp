#include "alloc/export.hpp"

#include "profile.pb.h"

#include <zlib.h>

#include <cmath>
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

SourceFrame frame_at(const Naming& naming, uintptr_t return_address) { return naming.frame(return_address - 1); }

// pprof's samples: one per distinct (stack, type, thread), weights added.
struct SampleKey {
    std::vector<uintptr_t> stack;
    const TypeInfo* type;
    uint32_t thread;
    auto operator<=>(const SampleKey&) const = default;
};
struct SampleSums {
    double objects = 0, space = 0, inuse_objects = 0, inuse_space = 0;
};

// Calls add(record, in_use) for each allocation of `profile`: whether it is still live there.
template <class Add>
void for_each_allocation(const profiler::Profile& profile, Add add) {
    const auto freed = freed_indexes(profile);
    for (size_t i = 0; i < profile.allocations.size(); ++i) add(profile.allocations[i], !freed.count(i));
}

// Allocated from `profile`, in use from `in_use` (a snapshot of the same run, or the profile itself).
std::map<SampleKey, SampleSums> merged_samples(const profiler::Profile& profile, const profiler::Profile& in_use) {
    std::map<SampleKey, SampleSums> out;
    for_each_allocation(profile, [&](const profiler::AllocationRecord& r, bool) {
        SampleSums& sums = out[{r.stack, r.type, r.thread}];
        sums.objects += r.weight;
        sums.space += r.weight * double(r.requested);
    });
    for_each_allocation(in_use, [&](const profiler::AllocationRecord& r, bool live) {
        if (!live) return;
        SampleSums& sums = out[{r.stack, r.type, r.thread}];
        sums.inuse_objects += r.weight;
        sums.inuse_space += r.weight * double(r.requested);
    });
    return out;
}

// pprof's period: what one sample stands for.
void set_period(perftools::profiles::Profile& out, StringTable& strings, const profiler::Options& options) {
    const bool bytes = options.sampling == profiler::Sampling::bytes;
    auto* period_type = out.mutable_period_type();
    period_type->set_type(strings.index(bytes ? "space" : "objects"));
    period_type->set_unit(strings.index(bytes ? "bytes" : "count"));
    if (bytes) out.set_period(int64_t(options.mean_bytes));
    else if (options.sampling == profiler::Sampling::probability) out.set_period(std::llround(1 / options.probability));
    else out.set_period(1);
}

}  // namespace

std::string to_pprof_gz(const profiler::Profile& profile, const Naming& naming, const RunInfo& run,
                        const profiler::Profile* in_use) {
    perftools::profiles::Profile out;
    StringTable strings(out);
    for (const char* type : {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"}) {
        auto* t = out.add_sample_type();
        t->set_type(strings.index(type));
        t->set_unit(strings.index(std::string(type).ends_with("objects") ? "count" : "bytes"));
    }
    out.set_default_sample_type(strings.index("alloc_space"));  // a string table index, not a position
    set_period(out, strings, profile.options);
    out.set_time_nanos(run.start_unix_ns);
    out.set_duration_nanos(run.duration_ns);
    if (!run.comment.empty()) out.add_comment(strings.index(run.comment));
    auto* mapping = out.add_mapping();
    mapping->set_id(1);
    mapping->set_memory_limit(~uint64_t{0});
    mapping->set_has_functions(true);

    std::unordered_map<uintptr_t, uint64_t> location_ids;
    std::map<std::pair<std::string, std::string>, uint64_t> function_ids;  // (name, file)
    bool any_line = false;
    auto location_of = [&](uintptr_t address) {
        const auto found = location_ids.find(address);
        if (found != location_ids.end()) return found->second;
        const SourceFrame frame = frame_at(naming, address);
        auto [fit, fadded] = function_ids.emplace(std::pair{frame.function, frame.file}, function_ids.size() + 1);
        if (fadded) {
            auto* f = out.add_function();
            f->set_id(fit->second);
            f->set_name(strings.index(frame.function));
            f->set_system_name(f->name());
            if (!frame.file.empty()) f->set_filename(strings.index(frame.file));
        }
        const uint64_t id = location_ids.size() + 1;
        auto* loc = out.add_location();
        loc->set_id(id);
        loc->set_mapping_id(1);
        loc->set_address(address);
        auto* line = loc->add_line();
        line->set_function_id(fit->second);
        line->set_line(frame.line);
        any_line |= frame.line > 0;
        location_ids.emplace(address, id);
        return id;
    };

    const int64_t type_key = strings.index("type"), thread_key = strings.index("thread");
    for (const auto& [key, sums] : merged_samples(profile, in_use ? *in_use : profile)) {
        auto* sample = out.add_sample();
        for (uintptr_t ret : key.stack) sample->add_location_id(location_of(ret));
        for (double v : {sums.objects, sums.space, sums.inuse_objects, sums.inuse_space})
            sample->add_value(static_cast<int64_t>(std::llround(v)));
        auto* type = sample->add_label();
        type->set_key(type_key);
        type->set_str(strings.index(naming.type(key.type->name)));
        auto* thread = sample->add_label();
        thread->set_key(thread_key);
        thread->set_num(key.thread);
    }
    mapping->set_has_filenames(any_line);
    mapping->set_has_line_numbers(any_line);
    std::string bytes;
    if (!out.SerializeToString(&bytes)) throw std::runtime_error("pprof: protobuf serialization failed");
    return gzip(bytes);
}

std::string to_folded(const profiler::Profile& profile, const Naming& naming, FoldedUnit unit) {
    std::map<std::string, double> stacks;
    for (const auto& r : profile.allocations) {
        std::string line;
        for (auto it = r.stack.rbegin(); it != r.stack.rend(); ++it) line += frame_at(naming, *it).function + ";";
        line += naming.type(r.type->name);
        stacks[line] += unit == FoldedUnit::bytes ? r.weight * double(r.requested) : r.weight;
    }
    std::string out;
    for (const auto& [stack, count] : stacks) out += stack + " " + std::to_string(std::llround(count)) + "\n";
    return out;
}

nlohmann::json to_json_summary(const profiler::Profile& profile, const Naming& naming,
                               const profiler::Profile* in_use, const std::string& inuse_at) {
    struct Totals {
        double objects = 0, space = 0, inuse_objects = 0, inuse_space = 0;
    };
    Totals all;
    std::map<std::string, Totals> by_type, by_site;
    auto add = [&](const profiler::AllocationRecord& r, bool allocated, bool live) {
        const std::string site = r.stack.empty() ? "[no stack]" : frame_at(naming, r.stack.front()).function;
        const double space = r.weight * double(r.requested);
        for (Totals* t : {&all, &by_type[naming.type(r.type->name)], &by_site[site]}) {
            if (allocated) t->objects += r.weight, t->space += space;
            if (live) t->inuse_objects += r.weight, t->inuse_space += space;
        }
    };
    if (in_use) {
        for_each_allocation(profile, [&](const auto& r, bool) { add(r, true, false); });
        for_each_allocation(*in_use, [&](const auto& r, bool live) { if (live) add(r, false, true); });
    } else {
        for_each_allocation(profile, [&](const auto& r, bool live) { add(r, true, live); });
    }
    auto json_of = [](const Totals& t) {
        return nlohmann::json{{"alloc_objects", t.objects},
                              {"alloc_space", t.space},
                              {"inuse_objects", t.inuse_objects},
                              {"inuse_space", t.inuse_space}};
    };
    nlohmann::json out = {{"schema", "benchfp.alloc-profile/1"},
                          {"units", {{"alloc_objects", "count"}, {"alloc_space", "bytes"},
                                     {"inuse_objects", "count"}, {"inuse_space", "bytes"}}},
                          {"inuse_at", inuse_at.empty() ? "after_run" : inuse_at},
                          {"samples", profile.allocations.size()},
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
