#include "report/machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <fstream>

namespace benchfp::report {

namespace {

// A count is an integer >= 1; JSON from scripts may write it as 2 or "2".
int cores_of(const In& v) {
    if (v.json().is_string()) {
        const std::string s = v.as_string();
        if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos || s == "0")
            v.fail("expected a core count from 1 to 999999, found \"" + s + "\"");
        return std::stoi(s);
    }
    const double n = v.as_number({1, 1e6});
    if (n != std::floor(n)) v.fail("expected a whole core count");
    return static_cast<int>(n);
}

std::string size_text(double bytes) {
    if (bytes >= 1 << 20 && std::fmod(bytes, 1 << 20) == 0) return std::to_string(static_cast<long>(bytes) >> 20) + " MiB";
    return std::to_string(static_cast<long>(bytes) >> 10) + " KiB";
}

// Google Benchmark's "caches": [{"type": "Data", "level": 1, "size": 32768, "num_sharing": 1}, ...].
std::string caches_of(const In& caches) {
    std::string text;
    for (const In& c : caches.elements()) {
        const std::string type = c.string_or("type", "");
        const double level = c.number("level", {0, 9});
        const double size = c.number("size", {0, 1e15});
        text += (text.empty() ? "" : ", ") + std::string("L") + std::to_string(static_cast<int>(level)) +
                (type == "Data" ? "d" : type == "Instruction" ? "i" : "") + " " + size_text(size);
    }
    return text;
}

}  // namespace

std::string Fingerprint::describe() const {
    std::string text = cpu + ", " + isa + ", " + (cores > 0 ? std::to_string(cores) : unknown) + " cores";
    if (!host.empty()) text += ", host " + host;
    if (mhz > 0) text += ", " + std::to_string(static_cast<long>(std::lround(mhz))) + " MHz";
    if (!caches.empty()) text += ", " + caches;
    if (!library_build_type.empty() && library_build_type != "release")
        text += ", Google Benchmark built " + library_build_type;
    return text;
}

std::string Fingerprint::slug() const {
    std::string slug;
    for (char ch : cpu + " " + isa + " " + std::to_string(cores) + "cores") {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (std::isalnum(c)) slug += static_cast<char>(std::tolower(c));
        else if (!slug.empty() && slug.back() != '-') slug += '-';
    }
    while (!slug.empty() && slug.back() == '-') slug.pop_back();
    return slug;
}

bool same_machine(const Fingerprint& a, const Fingerprint& b) { return a.known() && b.known() && a == b; }

namespace {

// The value of the first "<key>\t: value" line of /proc/cpuinfo, or "" where
// there is none. The key is matched whole: "model" is not "model name".
std::string cpuinfo_field(const std::string& key) {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos || line.rfind(key, 0) != 0 ||
            line.find_first_not_of(" \t", key.size()) != colon)
            continue;
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
    }
    return "";
}

std::string kernel_release() {
    utsname uts{};
    if (uname(&uts) != 0) return "";
    return std::string(uts.sysname) + " " + uts.release;
}

}  // namespace

std::string cpu_model() {
    const std::string model = cpuinfo_field("model name");
    if (model.empty()) return unknown;
    // A hypervisor may pass a generic name ("AMD EPYC" for a Zen 4 and a Zen 5
    // guest alike), so the model name alone let a baseline recorded on one CPU
    // judge another, red on unchanged code. The family and model numbers are
    // the CPU's own (CPUID), whatever name it is given.
    const std::string family = cpuinfo_field("cpu family"), number = cpuinfo_field("model");
    if (family.empty() || number.empty()) return model;
    return model + " (family " + family + ", model " + number + ")";
}

Fingerprint this_machine(const std::string& isa) {
    Fingerprint f;
    f.cpu = cpu_model();
    f.isa = isa.empty() ? unknown : isa;
    f.cores = static_cast<int>(std::max(0L, sysconf(_SC_NPROCESSORS_ONLN)));
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) f.host = host;
    f.kernel = kernel_release();
    f.flags = cpuinfo_field("flags");
    return f;
}

nlohmann::json to_json(const Fingerprint& f) {
    nlohmann::json j = {{"cpu", f.cpu}, {"isa", f.isa}, {"cores", f.cores}};
    if (!f.host.empty()) j["host"] = f.host;
    if (f.mhz > 0) j["mhz"] = f.mhz;
    if (!f.caches.empty()) j["caches"] = f.caches;
    if (!f.library_build_type.empty()) j["library_build_type"] = f.library_build_type;
    if (!f.kernel.empty()) j["kernel"] = f.kernel;
    if (!f.flags.empty()) j["flags"] = f.flags;
    return j;
}

Fingerprint fingerprint_from_json(const In& in) {
    Fingerprint f;
    f.cpu = in.string("cpu");
    f.isa = in.string("isa");
    f.cores = cores_of(in.at("cores"));
    f.host = in.string_or("host", "");
    f.mhz = in.number_or("mhz", 0, {0, 1e6});
    f.caches = in.string_or("caches", "");
    f.library_build_type = in.string_or("library_build_type", "");
    f.kernel = in.string_or("kernel", "");
    f.flags = in.string_or("flags", "");
    return f;
}

namespace {

// The compiler of this library, as the harness's build_info() names it.
const char* compiler() {
#if defined(__clang__)
    return __VERSION__;  // "Debian Clang 14.0.6"
#else
    return "GNU " __VERSION__;
#endif
}

}  // namespace

std::map<std::string, std::string> google_benchmark_context(const Fingerprint& f) {
    return {{"benchfp_cpu", f.cpu},         {"benchfp_isa", f.isa},     {"benchfp_cores", std::to_string(f.cores)},
            {"benchfp_kernel", f.kernel},   {"benchfp_flags", f.flags}, {"benchfp_compiler", compiler()}};
}

Fingerprint fingerprint_from_google_benchmark(const In& context) {
    context.expect_object();
    Fingerprint f;
    f.cpu = context.string_or("benchfp_cpu", unknown);
    f.isa = context.string_or("benchfp_isa", unknown);
    if (const auto cores = context.find("benchfp_cores")) f.cores = cores_of(*cores);
    else if (const auto cpus = context.find("num_cpus")) f.cores = cores_of(*cpus);
    f.host = context.string_or("host_name", "");
    f.mhz = context.number_or("mhz_per_cpu", 0, {0, 1e6});
    if (const auto caches = context.find("caches")) f.caches = caches_of(*caches);
    f.library_build_type = context.string_or("library_build_type", "");
    f.kernel = context.string_or("benchfp_kernel", "");
    f.flags = context.string_or("benchfp_flags", "");
    return f;
}

}  // namespace benchfp::report
