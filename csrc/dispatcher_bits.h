/* Bit tricks and thread-local storage for the compiled engine (dispatcher/_engine/core.pxd).
 *
 * Note [Highest bit by count-leading-zeros]
 * A DispatchKeySet's priority is the position of its highest set bit: the
 * functionality keys are laid out so that a higher bit is a higher priority
 * (see Note [DispatchKeySet bit layout] in dispatcher/_layout.py).  The CPU
 * finds that position in one instruction: clz counts the zero bits above the
 * highest set bit, so 64 - clz(x) is its 1-based position.  clz(0) is
 * undefined in C, hence the explicit test; returning 0 for the empty set makes
 * "no functionality" index the Undefined slot, exactly as c10's
 * indexOfHighestBit (llvm::countLeadingZeros(0) == 64) does.
 */
#ifndef DISPATCHER_BITS_H
#define DISPATCHER_BITS_H

#include <stdint.h>

#if defined(_MSC_VER)
#include <intrin.h>
static inline int dispatcher_index_of_highest_bit(uint64_t x) {
    unsigned long index;
    return _BitScanReverse64(&index, x) ? (int)index + 1 : 0;
}
static inline int dispatcher_popcount(uint64_t x) { return (int)__popcnt64(x); }
#define DISPATCHER_THREAD_LOCAL __declspec(thread)
#define DISPATCHER_MAYBE_UNUSED
#else
/* Both modules include this header; only the engine's core reads the TLS. */
#define DISPATCHER_MAYBE_UNUSED __attribute__((unused))
static inline int dispatcher_index_of_highest_bit(uint64_t x) {
    return x ? 64 - __builtin_clzll(x) : 0;
}
static inline int dispatcher_popcount(uint64_t x) { return __builtin_popcountll(x); }
#if defined(__linux__)
/* Every call reads both sets.  The default TLS model of a shared object goes
 * through __tls_get_addr; initial-exec is one %fs-relative load.  It takes
 * 16 bytes of the static TLS surplus glibc keeps for dlopen()ed modules. */
#define DISPATCHER_THREAD_LOCAL __thread __attribute__((tls_model("initial-exec")))
#else
#define DISPATCHER_THREAD_LOCAL __thread
#endif
#endif

/* Note [TLS stored as a difference from the defaults]
 * Each OS thread (so each Python thread) has its own copy.  They hold the
 * included/excluded sets XOR the default sets, so the zero state every new
 * thread starts in means "the defaults", with no per-thread initialisation:
 * the same trick as c10's PODLocalDispatchKeySet. */
static DISPATCHER_THREAD_LOCAL DISPATCHER_MAYBE_UNUSED uint64_t dispatcher_tls_included_delta = 0;
static DISPATCHER_THREAD_LOCAL DISPATCHER_MAYBE_UNUSED uint64_t dispatcher_tls_excluded_delta = 0;

#endif
