#include "families/gemm/gemm_workload.hpp"

#include "families/family.hpp"
#include "peers/onednn.hpp"
#include "peers/peer.hpp"
#include "quoted.hpp"
#include "usage_error.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <regex>

namespace benchfp::harness {

namespace {

// Packs MR rows of A (rows from m_valid on are zero), kc columns each, into a
// k-major panel: panel[p * MR + i] = A[i][p]. Full panels go 4 rows x 4 columns
// at a time through an SSE transpose, and a last pair of rows by unpacking
// (element by element it took 1.0 ms for a 16 MiB A at MR 6, 0.7 in pairs):
// contiguous loads only.
template <size_t MR>
void pack_a_panel(const float* a, size_t lda, size_t m_valid, size_t kc, float* __restrict panel) {
    size_t p = 0;
    if (m_valid == MR) {
        constexpr size_t grouped = MR - MR % 4;  // rows done by 4 x 4 transposes; the rest one by one
        for (; p + 4 <= kc; p += 4) {
            for (size_t g = 0; g < grouped; g += 4) {
                __m128 r0 = _mm_loadu_ps(a + (g + 0) * lda + p), r1 = _mm_loadu_ps(a + (g + 1) * lda + p);
                __m128 r2 = _mm_loadu_ps(a + (g + 2) * lda + p), r3 = _mm_loadu_ps(a + (g + 3) * lda + p);
                _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
                _mm_storeu_ps(panel + (p + 0) * MR + g, r0);
                _mm_storeu_ps(panel + (p + 1) * MR + g, r1);
                _mm_storeu_ps(panel + (p + 2) * MR + g, r2);
                _mm_storeu_ps(panel + (p + 3) * MR + g, r3);
            }
            if constexpr (MR % 4 == 2) {  // the last two rows as column pairs (avx2's MR 6)
                const __m128 x = _mm_loadu_ps(a + grouped * lda + p), y = _mm_loadu_ps(a + (grouped + 1) * lda + p);
                const __m128 lo = _mm_unpacklo_ps(x, y), hi = _mm_unpackhi_ps(x, y);  // x0 y0 x1 y1, x2 y2 x3 y3
                _mm_storel_pi(reinterpret_cast<__m64*>(panel + (p + 0) * MR + grouped), lo);
                _mm_storeh_pi(reinterpret_cast<__m64*>(panel + (p + 1) * MR + grouped), lo);
                _mm_storel_pi(reinterpret_cast<__m64*>(panel + (p + 2) * MR + grouped), hi);
                _mm_storeh_pi(reinterpret_cast<__m64*>(panel + (p + 3) * MR + grouped), hi);
            } else {
                static_assert(MR % 4 == 0, "rows beyond the 4 x 4 groups: only a pair is handled");
            }
        }
    }
    for (; p < kc; ++p)
        for (size_t i = 0; i < MR; ++i) panel[p * MR + i] = i < m_valid ? a[i * lda + p] : 0.0f;
}

// Packs kc rows of B, nc columns, into NR-column panels (zero beyond nc).
// Rows go 8 at a time, panel by panel: each panel then gets 8 consecutive
// lines (or 16) per visit. Row by row, every store went to another panel,
// kc * NR * 4 bytes away (64 KiB at kc 1024): all in a few cache sets, so
// lines were evicted and fetched again. m16n4096k1024's 16 MiB of B packed in
// 1.4 ms row by row and 0.6-0.8 ms by 8 rows (Zen 4 guest).
template <size_t NR>
void pack_b(const float* b, size_t ldb, size_t nc, size_t kc, float* __restrict packed) {
    constexpr size_t rows_per_visit = 8;
    const size_t full = nc / NR, rest = nc % NR;
    for (size_t p0 = 0; p0 < kc; p0 += rows_per_visit) {
        const size_t p1 = std::min(kc, p0 + rows_per_visit);
        for (size_t j = 0; j < full; ++j)
            for (size_t p = p0; p < p1; ++p)
                std::memcpy(packed + (j * kc + p) * NR, b + p * ldb + j * NR, NR * sizeof(float));
        for (size_t p = p0; rest && p < p1; ++p) {
            float* dst = packed + (full * kc + p) * NR;
            std::memcpy(dst, b + p * ldb + full * NR, rest * sizeof(float));
            std::fill(dst + rest, dst + NR, 0.0f);
        }
    }
}

// pack_b for the microkernel's panel width (avx2 16, avx512 32).
void pack_b_panels(size_t nr, const float* b, size_t ldb, size_t nc, size_t kc, float* packed) {
    if (nr == 32) pack_b<32>(b, ldb, nc, kc, packed);
    else pack_b<16>(b, ldb, nc, kc, packed);
}

// Cache blocking, tuned on this project's 1024^3 perf case (Zen 4: KC 256 -> 1024
// took it from 0.96x to 1.00x dnnl_sgemm): one A panel (MR x KC, 48 KiB at most)
// streams from L2 while each B panel (KC x NR, 128 KiB) is read once per tile;
// the packed B block (KC x NC, up to 4 MiB) lives in L3.
constexpr size_t kc_block = 1024;
// But where B streams from memory straight into 16 x 16 tiles (avx512, M <= 16
// and N > 16: one packed A panel, B read in place), KC 512: the packed A panel
// (16 x 512 floats, 32 KiB) stays in L1 beside B's lines. Zen 5 guest,
// m16n4096k1024, 1 thread, with the kernel's B prefetch to L2, vs oneDNN (the
// median of paired ratios, 3-6 runs each): KC 1024 0.84-0.89, 512 0.87-0.99,
// 384 0.88-0.98, 256 0.85-0.92.
constexpr size_t kc_block_b_streamed = 512;
constexpr size_t nc_block = 1024;
constexpr size_t mc_tiles = 8;  // MC = mc_tiles * MR
}  // namespace

// Up to this many MR-row panels of A, B is not packed by blocks: each thread
// takes B panel by panel, and its panels come from memory once per M block of
// mc_tiles panels; the pass that packs all of B is saved. It depends on the
// panel's width (Zen 4 guest, 1 thread unless said):
// - 16 columns (avx2, and avx512's narrow tile), one cache line per row of B:
//   two panels. At avx2 m16n4096k1024 (three panels) read B in place in 4.59 ms
//   and packed in 3.18; m64n1024k1024 in 2.36-2.42 ms against 1.30. (Zen 5:
//   copying each panel as below was no better, m64n1024k1024 1.79-1.88 ms
//   against 1.67-1.68 packed.)
// - 32 columns (avx512), two lines per row: sixteen. In place, m64n1024k1024
//   took 1.21 ms against 1.30 packed (2 threads, split by N: 0.61 against
//   0.66-0.69), m96 1.76 against 1.95 (2 threads: 0.89 against 0.95), m192 3.63
//   against 3.72 (2 threads, split by M, each thread streaming all of B: 1.80
//   against 1.95); from m256 to m1024 the two were within 1-4% either way, so
//   larger M keeps packing.
static size_t in_place_max_m_panels(size_t nr) { return nr >= 32 ? 16 : 2; }

// Up to this many panels of A, the tiles read a B panel where it lies; beyond,
// up to in_place_max_m_panels, it is first copied into the thread's panel
// buffer (kc x nr, 128 KiB at avx512), and the tiles read the copy. In place,
// a B panel's k rows are a row of B apart, a power of two in the perf cases
// (4 KiB at n1024): they fall in a sixteenth of L2's sets and evict each other,
// so every tile after the first fetched the panel again. Zen 5, avx512
// m64n1024k1024 (six panels): 1.03-1.04 ms in place, 0.86-0.91 copied, 0.85-1.05
// packed by blocks; m16n4096k1024 (two panels) 1.40-1.42 in place, 2.10-2.13
// copied (with the 12 x 32 tile, before avx512 took 16 x 16 tiles at M <= 16):
// a panel used by two tiles does not repay its copy.
//
// Where 512-bit FMAs run at the 256-bit rate (each split in two halves, as on
// Zen 4), a tile takes twice as long per byte of B, the refetches hide behind
// it, and the copy does not repay itself: avx512 m64n1024k1024 on the Zen 4
// guest, three processes of each build in turn (`--vs=onednn,peak
// --max-ms-per-prb=1000`), 1 thread: 1.19-1.20 ms in place, 1.32-1.42 copied,
// 1.28-1.29 packed by blocks (0.88-0.94x oneDNN copied, 1.04x in place); 2
// threads: 0.600-0.604, 0.659-0.665 and 0.654-0.657. There the tiles read B in
// place up to in_place_max_m_panels. Which rate the FMAs have is measured
// (fma_peak_rate: Zen 4 avx512 at about the avx2 rate, Zen 5 at twice it), not
// looked up by CPU model, as BLIS's per-microarchitecture blocksizes are.
// BENCHFP_GEMM_B_PANELS=in-place or copied sets the choice (so that a test
// checks both ways on any host); unset or "measured", the rate chooses. Read
// when gemm cases are expanded (validate_case), so a bad value is bad usage.
enum class BPanels { measured, in_place, copied };
static BPanels b_panels_setting() {
    const char* env = std::getenv("BENCHFP_GEMM_B_PANELS");
    const std::string way = env ? env : "measured";
    if (way == "measured") return BPanels::measured;
    if (way == "in-place") return BPanels::in_place;
    if (way == "copied") return BPanels::copied;
    throw UsageError("BENCHFP_GEMM_B_PANELS " + quoted_token(way) + " is not one of measured, in-place, copied");
}
// The rates are measured avx2 first, then avx512, each after a run of its own
// (fma_peak_rate), once per process.
static bool zmm_at_ymm_rate() {
    static const bool at_ymm_rate = [] {
        const double ymm = fma_peak_rate(jit::Isa::avx2);
        const double zmm = fma_peak_rate(jit::Isa::avx512);
        return zmm < 1.5 * ymm;
    }();
    return at_ymm_rate;
}

bool gemm_b_panels_in_place() {
    const BPanels setting = b_panels_setting();
    if (setting != BPanels::measured) return setting == BPanels::in_place;
    return jit::isa_usable(jit::Isa::avx512, std::nullopt) && zmm_at_ymm_rate();
}

static size_t straight_max_m_panels(size_t nr) {
    constexpr size_t copied_beyond = 2;
    if (nr < 32) return copied_beyond;  // the 16-column tile: in_place_max_m_panels is 2 there
    return gemm_b_panels_in_place() ? in_place_max_m_panels(nr) : copied_beyond;
}

// Where B is one panel (N at most the tile's 16 columns), each A panel serves one
// tile: packing it would read and write all of A for one use. The kernel reads
// full panels of A in place instead (a partial last one is still packed, zero
// below M), so A streams from memory while the FMAs run rather than before them.
// Zen 5, m4096n16k1024, mean ms per run: avx512 1.36-1.61 packed, 1.04-1.07 in
// place (and 0.92-0.93 since, 8 of the panel's 16 rows at a time: the kernel's
// in_place_passes); avx2 1.71-1.73 packed, 1.28-1.30 in place (its minimum,
// 1.23 ms, is 0.95 of the FMA peak).
// Where B is one or two 32-column panels (avx512's 12 x 32 tile, N up to 64),
// each A panel serves one or two tiles: the first reads its 12 rows from
// memory, a second from cache, and packing A cost a fifth of the run (m1024n64k1024, perf
// profile: pack_a_panel 18%, the kernel 71%). But at 1 thread only: with two
// threads reading their 12-row panels in place at once, whole processes ran
// slow (Zen 4 guest, avx512 m1024n64k1024 --threads=2, minimum ms per run, one
// process per figure: 36 of 77 processes 0.83-0.96 ms (one 0.76), 0.72-0.91x
// oneDNN, the rest 0.64-0.70, 0.98-1.09x; slow and fast processes came in runs
// of several in a row, and oneDNN's time was the same in both), never at 1
// thread (8 of 8 at 1.26-1.27 ms, 1.00x). Packed, 30 processes read 0.66-0.78
// ms (0.91-1.05x), none slower. Splitting N instead of M went slow as well (3
// of 6), and packing each panel right before its tiles was no faster
// (0.67-0.73 ms).
// Why reading in place goes slow is not known. Not huge pages: 2 of 12 slow
// with transparent huge pages always on, 3 of 12 with madvise. Not the two
// vCPUs sharing a core: the two-thread FMA peak was the same in slow processes.
static bool a_read_in_place(const GemmShape& s, const jit::GemmTile& t, int threads) {
    return t.mr == 6 || (t.nr == 16 && s.n <= 16) || (t.nr == 32 && s.n <= 64 && threads == 1);
}

// Whether M panel p is read in place: a full panel where A is (see a_read_in_place).
bool GemmWorkload::a_panel_in_place(size_t p) const {
    return a_in_place_ && shape_.m - p * tile_.mr >= size_t(tile_.mr);
}

// beta as a float; one that overflows or underflows f32 is refused rather than
// rounded to infinity or zero (std::stof would throw std::out_of_range, uncaught).
static float parse_beta(const std::string& text, const std::string& where) {
    errno = 0;
    const float beta = std::strtof(text.c_str(), nullptr);
    if (errno == ERANGE || !std::isfinite(beta))
        throw UsageError(where + ": gemm beta " + quoted_token(text) + " is out of the range of a float (" +
                         (std::fabs(beta) > 1 ? "overflow" : "underflow") + ")");
    return beta;
}

GemmShape parse_gemm_problem(const std::string& problem, const std::string& where) {
    // Every repetition bounded: libstdc++'s regex recurses once per character a
    // repetition takes, and 30000 digits of beta ran out of stack (SIGSEGV). 64
    // digits each side still reach a float's overflow and underflow.
    static const std::regex form(R"(m(\d{1,6})n(\d{1,6})k(\d{1,6})(beta(-?[0-9]{1,64}(\.[0-9]{1,64})?))?)");
    std::smatch m;
    if (!std::regex_match(problem, m, form) || std::stoul(m[1]) == 0 || std::stoul(m[2]) == 0 ||
        std::stoul(m[3]) == 0)
        throw UsageError(where + ": malformed problem " + quoted_token(problem) +
                         ": expected m<M>n<N>k<K>[beta<B>] like m1024n1024k1024 or m7n33k5beta0.5");
    return {std::stoul(m[1]), std::stoul(m[2]), std::stoul(m[3]), m[5].matched ? parse_beta(m[5], where) : 0.0f};
}

GemmWorkload::GemmWorkload(const KernelCase& c)
    : Workload(c.threads),
      shape_(parse_gemm_problem(c.problem, "problem")),
      tile_(jit::gemm_tile(c.spec.isa, shape_.m, shape_.n)),  // shape_ is declared, so initialised, first
      a_in_place_(a_read_in_place(shape_, tile_, c.threads)),
      m_panels_((shape_.m + tile_.mr - 1) / tile_.mr),
      kc_(tile_.mr == 16 && !a_in_place_ ? kc_block_b_streamed : kc_block),  // see kc_block_b_streamed
      split_(split_threads(m_panels_,
                           (std::min(nc_block, shape_.n) + tile_.nr - 1) / tile_.nr, c.threads,
                           in_place_max_m_panels(tile_.nr))),
      straight_max_m_panels_(straight_max_m_panels(tile_.nr)) {
    a_.resize(shape_.m * shape_.k);
    b_.resize(shape_.k * shape_.n);
    c_.resize(shape_.m * shape_.n);
    fill_uniform(a_, c.seed, -1.0f, 1.0f);
    fill_uniform(b_, c.seed + 1, -1.0f, 1.0f);
    fill_uniform(c_, c.seed + 2, -1.0f, 1.0f);
    c_initial_ = c_;
    const size_t nc_max = (std::min(nc_block, shape_.n) + tile_.nr - 1) / tile_.nr * tile_.nr;
    const size_t kc_max = std::min(kc_, shape_.k);
    if (!split_.b_in_place) b_packed_.resize(kc_max * nc_max);
    a_packed_.resize(c.threads);
    b_panel_.resize(c.threads);
    for (auto& a : a_packed_) a.resize(mc_tiles * tile_.mr * kc_max);
    if (split_.b_in_place)
        for (auto& b : b_panel_) b.resize(kc_max * tile_.nr);
    add_variant(c.spec);
}

void GemmWorkload::run(size_t variant) const {
    const jit::KernelFn kernel = this->kernel(variant).entry();
    for (size_t jc = 0; jc < shape_.n; jc += nc_block) {
        const size_t nc = std::min(nc_block, shape_.n - jc);
        for (size_t pc = 0; pc < shape_.k; pc += kc_) {
            const Block blk{jc, nc, pc, std::min(kc_, shape_.k - pc)};
            // Every thread packs a share of B's panels; the tiles wait for all of them.
            if (!split_.b_in_place) pool().parallel([&](int ithr, int nthr) { pack_b_share(blk, ithr, nthr); });
            pool().parallel([&](int ithr, int) { run_blocks(kernel, blk, ithr); });
        }
    }
}

void GemmWorkload::pack_b_share(const Block& blk, int ithr, int nthr) const {
    const size_t nr = tile_.nr, panels = (blk.nc + nr - 1) / nr;
    const auto [q0, q1] = split_range(panels, ithr, nthr);
    if (q0 == q1) return;
    const float* b = &b_[blk.pc * shape_.n + blk.jc + q0 * nr];
    const size_t nc = std::min(blk.nc, q1 * nr) - q0 * nr;
    float* packed = b_packed_.data() + q0 * nr * blk.kc;
    pack_b_panels(nr, b, shape_.n, nc, blk.kc, packed);
}

// The B panel q of the block: packed by blocks, in place, or copied into `panel`
// (always so for a partial last panel: the kernel reads nr columns, zero-padded).
jit::GemmArgs GemmWorkload::b_panel(const Block& blk, size_t q, float* panel) const {
    const size_t nr = tile_.nr;
    jit::GemmArgs args{};
    args.k = blk.kc;
    args.nr = nr;
    if (!split_.b_in_place) {
        args.b = b_packed_.data() + q * nr * blk.kc;
        args.ldb = nr * 4;
        return args;
    }
    const float* b = &b_[blk.pc * shape_.n + blk.jc + q * nr];
    const size_t n_valid = std::min(nr, blk.nc - q * nr);
    if (n_valid == nr && m_panels_ <= straight_max_m_panels_) {
        args.b = b;
        args.ldb = shape_.n * 4;
        return args;
    }
    pack_b_panels(nr, b, shape_.n, n_valid, blk.kc, panel);
    args.b = panel;
    args.ldb = nr * 4;
    return args;
}

// Thread ithr's tiles: its share of the M panels times its share of the N panels
// (split_ chooses the grid), A packed by M blocks of mc_tiles panels (but the
// panels read in place, a_panel_in_place).
void GemmWorkload::run_blocks(jit::KernelFn kernel, const Block& blk, int ithr) const {
    const size_t mr = tile_.mr, nr = tile_.nr;
    const auto [p0, p1] = split_range(m_panels_, ithr / split_.n_ways, split_.m_ways);
    const auto [q0, q1] = split_range((blk.nc + nr - 1) / nr, ithr % split_.n_ways, split_.n_ways);
    if (p0 == p1 || q0 == q1) return;
    const float beta = blk.pc == 0 ? shape_.beta : 1.0f;  // later K blocks accumulate
    float* ap = a_packed_[ithr].data();
    for (size_t mb = p0; mb < p1; mb += mc_tiles) {
        const size_t mb_end = std::min(p1, mb + mc_tiles);
        for (size_t p = mb; p < mb_end; ++p) {  // A[p*mr.., pc..pc+kc] in a k-major panel, zero below M
            if (a_panel_in_place(p)) continue;
            const float* a = &a_[p * mr * shape_.k + blk.pc];
            const size_t m_valid = std::min(mr, shape_.m - p * mr);
            float* panel = ap + (p - mb) * mr * blk.kc;
            if (mr == 16) pack_a_panel<16>(a, shape_.k, m_valid, blk.kc, panel);
            else if (mr == 12) pack_a_panel<12>(a, shape_.k, m_valid, blk.kc, panel);
            else pack_a_panel<6>(a, shape_.k, m_valid, blk.kc, panel);
        }
        // B in place streams from memory: each of its panels is read once, for every A panel
        // of the block. Packed B sits in L2/L3 and each A panel stays in L1 across B panels.
        const auto tile_at = [&](size_t p, size_t q, jit::GemmArgs args) {
            if (a_panel_in_place(p)) {
                args.a = &a_[p * mr * shape_.k + blk.pc];
                args.lda = shape_.k * 4;
            } else {
                args.a = ap + (p - mb) * mr * blk.kc;
            }
            run_tile(kernel, args, p * mr, blk.jc + q * nr, beta);
        };
        if (split_.b_in_place) {
            for (size_t q = q0; q < q1; ++q) {
                const jit::GemmArgs b = b_panel(blk, q, b_panel_[ithr].data());
                for (size_t p = mb; p < mb_end; ++p) tile_at(p, q, b);
            }
        } else {
            for (size_t p = mb; p < mb_end; ++p)
                for (size_t q = q0; q < q1; ++q) tile_at(p, q, b_panel(blk, q, nullptr));
        }
    }
}

// The tile of C at (i0, j0); edge tiles are computed into a buffer (their
// rows rounded up to a body of the kernel, all nr columns) and their valid
// part merged into C.
void GemmWorkload::run_tile(jit::KernelFn kernel, jit::GemmArgs args, size_t i0, size_t j0, float beta) const {
    const size_t mr = tile_.mr, nr = tile_.nr;
    const size_t m_valid = std::min(mr, shape_.m - i0), n_valid = std::min(nr, shape_.n - j0);
    float* c = const_cast<float*>(&c_[i0 * shape_.n + j0]);
    args.beta = beta;
    args.mr = m_valid;
    if (m_valid == mr && n_valid == nr) {
        args.c = c;
        args.ldc = shape_.n * 4;
        benchfp_call_jit(kernel, &args);
        return;
    }
    alignas(64) float edge[12 * 32];  // the largest tile (16 x 16 is smaller)
    args.c = edge;
    args.ldc = nr * 4;
    args.beta = 0.0f;
    benchfp_call_jit(kernel, &args);
    for (size_t i = 0; i < m_valid; ++i)
        for (size_t j = 0; j < n_valid; ++j) {
            float& out = c[i * shape_.n + j];
            out = beta == 0.0f ? edge[i * nr + j] : edge[i * nr + j] + beta * out;
        }
}

GemmWorkload::ThreadSplit GemmWorkload::split_threads(size_t m_panels, size_t n_panels, int threads,
                                                      size_t in_place_max) {
    ThreadSplit s;
    s.b_in_place = m_panels <= in_place_max;
    // Split M while every thread keeps 8 A panels or more (B packed once,
    // shared); else N, so each thread packs and reads only its part of B (and
    // packs the few A panels itself): m64n1024k1024 at avx2, 2 threads, took
    // 1.05 ms split by M (4 panels per thread was the bar) and 0.78 by N.
    s.m_ways = 1;
    for (int d = threads; d >= 1; --d)
        if (threads % d == 0 && m_panels >= 8 * static_cast<size_t>(d)) {
            s.m_ways = d;
            break;
        }
    // But never more ways over N than B has panels (a narrow B would leave
    // threads idle): then M takes more, as many as it has panels for.
    for (int d = s.m_ways + 1; d <= threads && static_cast<size_t>(threads / s.m_ways) > n_panels; ++d)
        if (threads % d == 0 && m_panels >= static_cast<size_t>(d)) s.m_ways = d;
    s.n_ways = threads / s.m_ways;
    return s;
}

CorrOutcome GemmWorkload::check() {
    c_ = c_initial_;
    run(0);
    // Reference in double with the magnitude sum|a*b| + |beta*c| of every element:
    // the error of K products and sums is bounded by (K + 2) u times it.
    const size_t m = shape_.m, n = shape_.n, k = shape_.k;
    std::vector<double> ref(n), magnitude(n);
    std::vector<float> want(m * n);
    std::vector<double> bound(m * n);
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
            const double c0 = shape_.beta == 0.0f ? 0.0 : double(shape_.beta) * c_initial_[i * n + j];
            ref[j] = c0;
            magnitude[j] = std::fabs(c0);
        }
        for (size_t p = 0; p < k; ++p) {
            const double a = a_[i * k + p];
            const float* brow = &b_[p * n];
            for (size_t j = 0; j < n; ++j) {
                ref[j] += a * brow[j];
                magnitude[j] += std::fabs(a * brow[j]);
            }
        }
        for (size_t j = 0; j < n; ++j) {
            want[i * n + j] = static_cast<float>(ref[j]);
            bound[i * n + j] = (k + 2) * 0x1p-24 * magnitude[j];
        }
    }
    return compare_outputs(c_, want, [&](size_t i) { return bound[i]; }, "(K+2) u sum|a*b|");
}

namespace {

// dnnl_sgemm on the workload's row-major buffers.
class SgemmPeer final : public Peer {
public:
    SgemmPeer(const GemmShape& s, const float* a, const float* b, float* c, int threads)
        : m_(s.m), n_(s.n), k_(s.k), a_(a), b_(b), c_(c), beta_(s.beta), threads_(threads) {}
    void run() override {
        onednn::set_threads(threads_);
        onednn::check(dnnl_sgemm('N', 'N', m_, n_, k_, 1.0f, a_, k_, b_, n_, beta_, c_, n_), "dnnl_sgemm");
    }

private:
    dnnl_dim_t m_, n_, k_;
    const float *a_, *b_;
    float* c_;
    float beta_;
    int threads_;
};

std::unique_ptr<jit::Generator> build(const KernelSpec& spec) { return jit::make_gemm_kernel(spec.isa, spec.frame); }

std::string random_problem(const std::string&, std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int m = pick(1, 40), n = pick(1, 70), k = pick(1, 40), with_beta = pick(0, 1);
    return "m" + std::to_string(m) + "n" + std::to_string(n) + "k" + std::to_string(k) + (with_beta ? "beta0.5" : "");
}

// The problem, and the family's setting from the environment.
void validate_case(const std::string&, const std::string& problem, const std::string& where) {
    parse_gemm_problem(problem, where);
    b_panels_setting();
}

// A, B, C and C's initial copy; corr adds the reference (float) and two doubles per element of C.
double bytes_needed(const KernelCase& c) {
    const GemmShape s = parse_gemm_problem(c.problem, "problem");
    const double mn = double(s.m) * s.n;
    return buffer_bytes(c, double(s.m) * s.k + double(s.k) * s.n + 2 * mn, 5 * mn);
}

}  // namespace

std::unique_ptr<Peer> GemmWorkload::onednn_peer() {
    return std::make_unique<SgemmPeer>(shape_, a_.data(), b_.data(), c_.data(), threads());
}

Family gemm_family() {
    return {"gemm",
            "C = A * B + beta * C, f32, row-major, packed and blocked around a JIT microkernel",
            {"f32"},
            isas_where(jit::gemm_supports),
            "m<M>n<N>k<K>[beta<B>] like m1024n1024k1024 or m7n33k5beta0.5",
            build,
            validate_case,
            make<GemmWorkload>,
            random_problem,
            true,
            bytes_needed};
}

}  // namespace benchfp::harness

