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

std::map<SampleKey, SampleSums> merged_samples(const profiler::Profile& profile) {
    const auto freed = freed_indexes(profile);
    std::map<SampleKey, SampleSums> out;
    for (size_t i = 0; i < profile.allocations.size(); ++i) {
        const auto& r = profile.allocations[i];
        SampleSums& sums = out[{r.stack, r.type, r.thread}];
        const double space = r.weight * double(r.requested);
        sums.objects += r.weight;
        sums.space += space;
        if (!freed.count(i)) sums.inuse_objects += r.weight, sums.inuse_space += space;
    }
    return out;
}

}  // namespace

std::string to_pprof_gz(const profiler::Profile& profile, const Naming& naming, const RunInfo& run) {
    perftools::profiles::Profile out;
    StringTable strings(out);
    for (const char* type : {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"}) {
        auto* t = out.add_sample_type();
        t->set_type(strings.index(type));
        t->set_unit(strings.index(std::string(type).ends_with("objects") ? "count" : "bytes"));
    }
    out.set_default_sample_type(strings.index("alloc_space"));  // a string table index, not a position
    auto* period_type = out.mutable_period_type();
    period_type->set_type(strings.index("space"));
    period_type->set_unit(strings.index("bytes"));
    // One sample per mean_bytes when byte-sampling; else each sample is one allocation.
    out.set_period(profile.options.sampling == profiler::Sampling::bytes ? int64_t(profile.options.mean_bytes) : 1);
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
    for (const auto& [key, sums] : merged_samples(profile)) {
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

nlohmann::json to_json_summary(const profiler::Profile& profile, const Naming& naming) {
    const auto freed = freed_indexes(profile);
    struct Totals {
        double objects = 0, space = 0, inuse_objects = 0, inuse_space = 0;
    };
    Totals all;
    std::map<std::string, Totals> by_type, by_site;
    for (size_t i = 0; i < profile.allocations.size(); ++i) {
        const auto& r = profile.allocations[i];
        const bool in_use = !freed.count(i);
        const std::string site = r.stack.empty() ? "[no stack]" : frame_at(naming, r.stack.front()).function;
        for (Totals* t : {&all, &by_type[naming.type(r.type->name)], &by_site[site]}) {
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
