#include "families/family.hpp"

#include "jit/stream_floats.hpp"
#include "option_rules.hpp"
#include "quoted.hpp"
#include "usage_error.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace benchfp::harness {

// Each family's entry, defined at the end of its workload file (families/<name>/).
Family eltwise_family(), reduce_family(), gemm_family(), conv_family(), reorder_family();

const std::vector<Family>& families() {
    static const std::vector<Family> table = {
        eltwise_family(), reduce_family(), gemm_family(), conv_family(), reorder_family(),
    };
    return table;
}

bool Family::supports(jit::Isa isa) const { return std::find(isas.begin(), isas.end(), isa) != isas.end(); }
bool Family::has_alg(const std::string& alg) const { return std::find(algs.begin(), algs.end(), alg) != algs.end(); }

const Family* find_family(const std::string& name) {
    for (const Family& family : families())
        if (family.name == name) return &family;
    return nullptr;
}

std::string family_names() {
    std::string out;
    for (const Family& family : families()) out += (out.empty() ? "" : ", ") + family.name;
    return out;
}

nlohmann::json families_json() {
    nlohmann::json out = nlohmann::json::array();
    for (const Family& f : families()) {
        nlohmann::json isas = nlohmann::json::array();
        for (jit::Isa isa : f.isas) isas.push_back(jit::to_string(isa));
        out.push_back({{"name", f.name},
                       {"summary", f.summary},
                       {"algs", f.algs},
                       {"isas", isas},
                       {"problem", f.problem_syntax},
                       {"onednn_peer", f.onednn_peer}});
    }
    return out;
}

int64_t stream_floats_setting() {
    const char* env = std::getenv("BENCHFP_STREAM_FLOATS");
    if (!env) return jit::default_stream_floats;
    std::string text = env;
    const bool digits = decimal_whole_number(false)(text).empty();
    const int64_t floats = digits ? std::strtoll(env, nullptr, 10) : 0;
    try {
        jit::check_stream_floats(floats);  // the kernels' range
    } catch (const std::invalid_argument&) {
        throw UsageError("BENCHFP_STREAM_FLOATS " + quoted_token(env) + " is not a whole number from 1 to " +
                         std::to_string(jit::max_stream_floats));
    }
    return floats;
}

std::unique_ptr<jit::Generator> build_kernel(const KernelSpec& spec) {
    const Family* family = find_family(spec.kernel);
    if (!family) throw std::invalid_argument("unknown kernel '" + spec.kernel + "' (known: " + family_names() + ")");
    if (!family->has_alg(spec.alg)) throw std::invalid_argument("unknown " + spec.kernel + " alg '" + spec.alg + "'");
    if (!family->supports(spec.isa))
        throw std::invalid_argument(spec.kernel + " has no " + jit::to_string(spec.isa) + " implementation");
    return family->build(spec);
}

std::vector<jit::Isa> isas_where(bool (*has_code)(jit::Isa)) {
    std::vector<jit::Isa> out;
    for (jit::Isa isa : jit::all_isas)
        if (has_code(isa)) out.push_back(isa);
    return out;
}

}  // namespace benchfp::harness
