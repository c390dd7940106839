#pragma once
// Code layout as an experimental variable. Where a function lands in the
// binary moves the allocator benchmarks by several percent on the machines
// measured (branch prediction and fetch depend on addresses), more than a
// 2-instruction hook costs. Builds with -DBENCHFP_LAYOUT_SHIFT=N (bytes) put N
// bytes of never-run code at each BENCHFP_LAYOUT_SHIFT_HERE, so the code after
// it moves by N; scripts/hook_time_over_layouts.sh measures over several N.
// GCC may emit a file's functions in another order than the source's: check
// with nm -n (workloads.cpp is built with -fno-toplevel-reorder for that).
#ifndef BENCHFP_LAYOUT_SHIFT
#define BENCHFP_LAYOUT_SHIFT 0
#endif

#define BENCHFP_LAYOUT_STRINGIFY_(x) #x
#define BENCHFP_LAYOUT_STRINGIFY(x) BENCHFP_LAYOUT_STRINGIFY_(x)
#if BENCHFP_LAYOUT_SHIFT > 0
// A 64-byte aligned function of exactly N bytes (N - 1 bytes of int3, then ret):
// with N a multiple of 16 (the default function alignment), the next function
// starts N bytes after a 64-byte boundary.
#define BENCHFP_LAYOUT_SHIFT_HERE(name)                                                                \
    [[gnu::used, gnu::noinline, gnu::aligned(64)]] void name() {                                       \
        asm volatile(".skip " BENCHFP_LAYOUT_STRINGIFY(BENCHFP_LAYOUT_SHIFT) " - 1, 0xcc");            \
    }
#else
#define BENCHFP_LAYOUT_SHIFT_HERE(name)
#endif
