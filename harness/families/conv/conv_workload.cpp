#include "families/conv/conv_workload.hpp"

#include "families/family.hpp"
#include "peers/onednn.hpp"
#include "quoted.hpp"
#include "usage_error.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

namespace benchfp::harness {

ConvShape parse_conv_problem(const std::string& problem, const std::string& where) {
    auto fail = [&](const std::string& why) -> UsageError {
        return UsageError(where + ": malformed problem " + quoted_token(problem) + ": " + why +
                          " (expected e.g. mb1ic16ih28oc32kh3ph1, see README)");
    };
    // Bounded, as gemm's form is: 50000 letters in a row ran libstdc++'s regex out of stack.
    static const std::regex token("([a-z]{1,8})([0-9]{1,6})");
    std::map<std::string, size_t> v;
    size_t pos = 0;
    for (std::sregex_iterator it(problem.begin(), problem.end(), token), end; it != end; ++it) {
        if (static_cast<size_t>(it->position()) != pos) break;
        const std::string name = (*it)[1];
        static const std::set<std::string> known = {"mb", "ic", "ih", "iw", "oc", "kh", "kw",
                                                    "sh", "sw", "ph", "pw", "dh", "dw"};
        if (!known.count(name)) throw fail("unknown dimension " + quoted_token(name));
        if (v.count(name)) throw fail(quoted_token(name) + " given twice");
        v[name] = std::stoul((*it)[2]);
        pos += it->length();
    }
    if (pos != problem.size() || problem.empty()) throw fail("unreadable from offset " + std::to_string(pos));
    for (const char* required : {"ic", "ih", "oc", "kh"})
        if (!v.count(required) || v[required] == 0) throw fail(std::string(required) + " missing or 0");
    auto get = [&](const char* name, size_t fallback) { return v.count(name) ? v[name] : fallback; };
    ConvShape s{};
    s.mb = get("mb", 1), s.ic = v["ic"], s.ih = v["ih"], s.iw = get("iw", s.ih), s.oc = v["oc"];
    s.kh = v["kh"], s.kw = get("kw", s.kh), s.sh = get("sh", 1), s.sw = get("sw", s.sh);
    s.ph = get("ph", 0), s.pw = get("pw", s.ph), s.dh = get("dh", 0), s.dw = get("dw", s.dh);
    if (s.mb == 0 || s.iw == 0 || s.kw == 0 || s.sh == 0 || s.sw == 0) throw fail("a size or stride is 0");
    // Sizes have at most 6 digits (the token pattern), so these fit a long.
    const long eh = long((s.kh - 1) * (s.dh + 1) + 1), ew = long((s.kw - 1) * (s.dw + 1) + 1);
    const long oh = (long(s.ih) + 2 * long(s.ph) - eh) / long(s.sh) + 1;
    const long ow = (long(s.iw) + 2 * long(s.pw) - ew) / long(s.sw) + 1;
    if (oh < 1 || ow < 1 || long(s.ih) + 2 * long(s.ph) < eh || long(s.iw) + 2 * long(s.pw) < ew)
        throw fail("the kernel does not fit the padded input");
    s.oh = oh, s.ow = ow;
    // Every product checked: six-digit sizes multiply past 2^64 and would wrap to small buffers.
    constexpr size_t max_tensor = size_t{1} << 30;
    for (auto [tensor, elements] : {std::pair{"source", checked_product({s.mb, s.ih, s.iw, s.ic})},
                                    std::pair{"weights", checked_product({s.kh, s.kw, s.ic, s.oc})},
                                    std::pair{"destination", checked_product({s.mb, s.oh, s.ow, s.oc})}})
        if (!elements || *elements > max_tensor)
            throw UsageError(where + ": problem " + quoted_token(problem) + " too large: the " + tensor +
                             " has more than 2^30 elements");
    return s;
}

ConvWorkload::ConvWorkload(const KernelCase& c)
    : Workload(c.threads), s_(parse_conv_problem(c.problem, "problem")) {
    src_.resize(s_.mb * s_.ih * s_.iw * s_.ic);
    wei_.resize(s_.kh * s_.kw * s_.ic * s_.oc);
    dst_.assign(s_.mb * s_.oh * s_.ow * s_.oc, 0.0f);
    fill_uniform(src_, c.seed, -1.0f, 1.0f);
    fill_uniform(wei_, c.seed + 1, -1.0f, 1.0f);
    add_variant(c.spec);
}

jit::ConvArgs ConvWorkload::args_for(size_t n, size_t row_begin, size_t row_end, size_t merged) const {
    auto i = [](size_t v) { return static_cast<int64_t>(v); };
    jit::ConvArgs a{src_.data() + n * s_.ih * s_.iw * s_.ic,
                    wei_.data(),
                    const_cast<float*>(dst_.data()) + n * s_.oh * s_.ow * s_.oc,
                    i(s_.ih / merged), i(s_.iw * merged), i(s_.ic), i(s_.oc), i(s_.ow * merged), i(s_.kh), i(s_.kw),
                    i(s_.sh), i(s_.sw), i(s_.ph), i(s_.pw), i(s_.dh + 1), i(s_.dw + 1), i(row_begin), i(row_end), 0, 0};
    jit::conv_set_blocks(a);
    return a;
}

size_t ConvWorkload::rows_merged(int threads) const {
    const bool pointwise = s_.kh == 1 && s_.kw == 1 && s_.sh == 1 && s_.sw == 1 && s_.ph == 0 && s_.pw == 0;
    if (!pointwise) return 1;
    // The fewest rows that give every thread as many: the least divisor of oh
    // that is a multiple of threads. With none, the rows stay: a split of 4
    // long rows over 3 threads (2, 1, 1) would run the longest part 1568
    // columns long where 19 rows of 56 take 1064.
    const size_t t = static_cast<size_t>(std::max(threads, 1));
    for (size_t rows = t; rows < s_.oh; rows += t)
        if (s_.oh % rows == 0) return s_.oh / rows;
    return 1;
}

void ConvWorkload::run(size_t variant) const {
    const jit::KernelFn fn = kernel(variant).entry();
    pool().parallel([&](int ithr, int nthr) {
        const size_t merged = rows_merged(nthr);
        for (size_t n = 0; n < s_.mb; ++n) {
            const auto [begin, end] = split_range(s_.oh / merged, ithr, nthr);
            if (begin == end) continue;
            const jit::ConvArgs args = args_for(n, begin, end, merged);
            benchfp_call_jit(fn, &args);
        }
    });
}

CorrOutcome ConvWorkload::check() {
    run(0);
    std::vector<float> want(dst_.size());
    std::vector<double> bound(dst_.size());
    for (size_t n = 0; n < s_.mb; ++n)
        for (size_t oh = 0; oh < s_.oh; ++oh)
            for (size_t ow = 0; ow < s_.ow; ++ow)
                for (size_t oc = 0; oc < s_.oc; ++oc) {
                    double sum = 0, magnitude = 0;
                    for (size_t kh = 0; kh < s_.kh; ++kh) {
                        const long ih = long(oh * s_.sh + kh * (s_.dh + 1)) - long(s_.ph);
                        if (ih < 0 || ih >= long(s_.ih)) continue;
                        for (size_t kw = 0; kw < s_.kw; ++kw) {
                            const long iw = long(ow * s_.sw + kw * (s_.dw + 1)) - long(s_.pw);
                            if (iw < 0 || iw >= long(s_.iw)) continue;
                            const float* x = &src_[((n * s_.ih + ih) * s_.iw + iw) * s_.ic];
                            const float* w = &wei_[((kh * s_.kw + kw) * s_.ic) * s_.oc + oc];
                            for (size_t ic = 0; ic < s_.ic; ++ic) {
                                const double p = double(x[ic]) * w[ic * s_.oc];
                                sum += p;
                                magnitude += std::fabs(p);
                            }
                        }
                    }
                    const size_t at = ((n * s_.oh + oh) * s_.ow + ow) * s_.oc + oc;
                    want[at] = static_cast<float>(sum);
                    bound[at] = (s_.ic * s_.kh * s_.kw + 2) * 0x1p-24 * magnitude;
                }
    return compare_outputs(dst_, want, [&](size_t i) { return bound[i]; }, "(IC*KH*KW+2) u sum|x*w|");
}

// NHWC source and destination, no bias: the workload's layouts. The weights in
// the layout oneDNN chooses, converted from HWIO once (benchdnn's --wtag=any):
// with HWIO imposed, oneDNN 2.6 runs its gemm-based convolution, not its
// direct jit_avx2 / jit_avx512_common ones.
std::unique_ptr<Peer> ConvWorkload::onednn_peer() {
    auto d = [](size_t v) { return static_cast<dnnl_dim_t>(v); };
    const auto src_md = onednn::plain_desc({d(s_.mb), d(s_.ic), d(s_.ih), d(s_.iw)}, dnnl_nhwc);
    const auto wei_md = onednn::plain_desc({d(s_.oc), d(s_.ic), d(s_.kh), d(s_.kw)}, dnnl_hwio);
    const auto wei_any = onednn::plain_desc({d(s_.oc), d(s_.ic), d(s_.kh), d(s_.kw)}, dnnl_format_tag_any);
    const auto dst_md = onednn::plain_desc({d(s_.mb), d(s_.oc), d(s_.oh), d(s_.ow)}, dnnl_nhwc);
    const dnnl_dims_t strides = {d(s_.sh), d(s_.sw)}, dilates = {d(s_.dh), d(s_.dw)}, pad_l = {d(s_.ph), d(s_.pw)};
    // Right padding: whatever makes the output size come out, as benchdnn derives it.
    const dnnl_dims_t pad_r = {d((s_.oh - 1) * s_.sh + (s_.kh - 1) * (s_.dh + 1) + 1 - s_.ih - s_.ph),
                               d((s_.ow - 1) * s_.sw + (s_.kw - 1) * (s_.dw + 1) + 1 - s_.iw - s_.pw)};
    dnnl_convolution_desc_t desc;
    onednn::check(dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct,
                                                             &src_md, &wei_any, nullptr, &dst_md, strides, dilates,
                                                             pad_l, pad_r),
                  "convolution descriptor");
    auto peer = onednn::make_peer(&desc, threads());
    peer->bind(DNNL_ARG_SRC, src_md, src_.data());
    peer->bind_converted(DNNL_ARG_WEIGHTS, dnnl_query_weights_md, wei_md, wei_.data());
    peer->bind(DNNL_ARG_DST, dst_md, dst_.data());
    return peer;
}

namespace {

std::unique_ptr<jit::Generator> build(const KernelSpec& spec) { return jit::make_conv_kernel(spec.isa, spec.frame); }

// Every kernel size, stride, dilation and padding the kernel distinguishes, on small images.
std::string random_problem(const std::string&, std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    // One declaration: its initializers run in order, so every compiler draws alike.
    const int mb = pick(1, 2), ic = pick(1, 9), ih = pick(5, 9), iw = pick(5, 9), oc = pick(1, 40), kh = pick(1, 3),
              kw = pick(1, 3), sh = pick(1, 2), sw = pick(1, 2), dh = pick(0, 1), ph = pick(0, kh - 1);
    std::string p;
    using Dim = std::pair<const char*, int>;
    for (auto [name, v] : std::initializer_list<Dim>{{"mb", mb}, {"ic", ic}, {"ih", ih}, {"iw", iw}, {"oc", oc},
                                                    {"kh", kh}, {"kw", kw}, {"sh", sh}, {"sw", sw}, {"ph", ph},
                                                    {"dh", dh}})
        p += name + std::to_string(v);
    return p;
}

// Source, weights and destination; corr adds the reference and its bound (a double) per output.
double bytes_needed(const KernelCase& c) {
    const ConvShape s = parse_conv_problem(c.problem, "problem");
    const double dst = double(s.mb) * s.oh * s.ow * s.oc;
    return buffer_bytes(c, double(s.mb) * s.ih * s.iw * s.ic + double(s.kh) * s.kw * s.ic * s.oc + dst, 3 * dst);
}

}  // namespace

Family conv_family() {
    return {"conv",
            "direct 2D convolution, NHWC source and destination, HWIO weights",
            {"f32"},
            isas_where(jit::conv_supports),
            "benchdnn-style like mb1ic16ih28oc32kh3ph1 (ic, ih, oc, kh required)",
            build,
            validate_with<parse_conv_problem>,
            make<ConvWorkload>,
            random_problem,
            true,
            bytes_needed};
}

}  // namespace benchfp::harness
